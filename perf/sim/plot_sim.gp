# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# Plots of perf/sim/adapt2_sim tables (gnuplot 5, pngcairo; perf/plot.gp's style).
#
#   gnuplot -c perf/sim/plot_sim.gp TABLE.tsv OUT.png XCOL "ALG ALG ..." "TITLE" [PANEL2]
#
# TABLE.tsv: adapt2_sim -o output. XCOL 3: against the ranks p, 4: against the
# message size. Top: the last rank's time per algorithm (solid) and the
# closed-form lower bound (dashed black). Bottom (PANEL2): "amp" the noise
# amplification (noise runs), or "ratio" the time over the lower bound.
if (ARGC < 5) { print "usage: gnuplot -c plot_sim.gp TABLE OUT XCOL ALGS TITLE [amp|ratio]"; exit status 2 }
tab = ARG1
xcol = int(ARG3)
algs = ARG4
panel = (ARGC >= 6 ? ARG6 : "ratio")

set terminal pngcairo size 1100, 1000 enhanced font "DejaVu Sans,11"
set output ARG2
set encoding utf8
lab(x) = x >= 2**30 ? sprintf("%dG", x / 2**30) : x >= 2**20 ? sprintf("%dM", x / 2**20) : x >= 2**10 ? sprintf("%dK", x / 2**10) : sprintf("%d", x)
set logscale x 2
set xtics ()
set for [k=0:34:2] xtics add (lab(2**k) 2**k)
set offsets graph 0.02, graph 0.02, 0, 0
set grid xtics ytics mxtics mytics lc rgb "#dddddd"
set key top left box opaque samplen 3 spacing 1.1 noenhanced
set style data linespoints
set pointsize 0.8
set xlabel (xcol == 3 ? "simulated ranks p" : "message size (bytes)")
rows(a) = sprintf("< awk '$2 == \"%s\"' %s", a, tab)

set multiplot
set title ARG5."\nlast rank's completion time (simulated); dashed: lower bound" noenhanced
set size 1, 0.55; set origin 0, 0.45
set ylabel "time (µs)"
set logscale y 10
set format y "10^{%L}"
plot for [i=1:words(algs)] rows(word(algs, i)) using xcol:6 lc i pt (i + 4) lw 1.5 title word(algs, i), \
     rows(word(algs, 1)) using xcol:8 with lines lc rgb "black" dt 2 lw 1.5 title "lower bound"

set size 1, 0.45; set origin 0, 0.0
set format y "%g"
if (panel eq "amp") {
    unset logscale y
    set title "noise amplification: (T_noisy - T_clean) / noise per rank (1: only own noise)" noenhanced
    set ylabel "amplification"
    plot for [i=1:words(algs)] rows(word(algs, i)) using xcol:13 lc i pt (i + 4) lw 1.5 title word(algs, i), \
         1 with lines lc rgb "black" dt 3 notitle
} else {
    set title "time / lower bound" noenhanced
    set ylabel "ratio to the bound"
    plot for [i=1:words(algs)] rows(word(algs, i)) using xcol:9 lc i pt (i + 4) lw 1.5 title word(algs, i)
}
unset multiplot
