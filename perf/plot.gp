# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# Latency vs message size for perf/compare.py (gnuplot 5, pngcairo).
#
#   gnuplot -c perf/plot.gp LATENCY.dat RATIO.dat OUT.png "TITLE" NLAT NRATIO [REF]
#
# LATENCY.dat: NLAT blocks (separated by two blank lines), in pairs per
#   component: "<component> avg", then "<component> last". Each block starts
#   with a header line naming the curve in double quotes,
#   then lines "size_bytes median_us min_us max_us" (min/max over repeats).
# RATIO.dat: NRATIO blocks, pairs "<ref>/<other> avg", "<ref>/<other> last",
#   lines "size_bytes ratio". NRATIO 0: no ratio panel. REF: the name of the
#   reference component (the numerator of the ratios).
if (ARGC < 6) { print "usage: gnuplot -c plot.gp LATENCY.dat RATIO.dat OUT.png TITLE NLAT NRATIO"; exit status 2 }
lat = ARG1
rat = ARG2
nlat = int(ARG5)
nrat = int(ARG6)
ref = (ARGC >= 7 ? ARG7 : "the first component")

set terminal pngcairo size 1100, (nrat > 0 ? 1000 : 700) enhanced font "DejaVu Sans,11"
set output ARG3
set encoding utf8

# 1, 4, 16, ..., 1K, ..., 1M, ... (binary prefixes)
lab(x) = x >= 2**30 ? sprintf("%dG", x / 2**30) : x >= 2**20 ? sprintf("%dM", x / 2**20) : x >= 2**10 ? sprintf("%dK", x / 2**10) : sprintf("%d", x)
set logscale x 2
set xtics ()
set for [k=0:34:2] xtics add (lab(2**k) 2**k)
set offsets graph 0.02, graph 0.02, 0, 0
set grid xtics ytics mxtics mytics lc rgb "#dddddd"
set key top left box opaque samplen 3 spacing 1.1 noenhanced
set style data linespoints
set pointsize 0.8

if (nrat > 0) { set multiplot }

# Component i/2 keeps its colour and point; avg solid, last dashed.
set title ARG4."\nlatency: median over repeats, bars min-max; avg solid, last dashed" noenhanced
set xlabel "message size (bytes)"
set ylabel "latency (µs)"
set logscale y 10
set format y "10^{%L}"
if (nrat > 0) { set size 1, 0.62; set origin 0, 0.38 }
plot for [i=0:nlat-1] lat index i using 1:2:3:4 with yerrorlines \
     lc (i/2 + 1) dt i%2+1 pt (i/2 + 5) lw 1.5 \
     title columnheader(1)

if (nrat > 0) {
    set title sprintf("latency ratio %s/other (< 1: %s is faster)", ref, ref) noenhanced
    set size 1, 0.36; set origin 0, 0.0
    unset logscale y
    set format y "%g"
    set ylabel "latency ratio"
    set key outside top center horizontal
    plot for [i=0:nrat-1] rat index i using 1:2 \
         lc (i/2 + 2) dt i%2+1 pt (i/2 + 7) lw 1.5 \
         title columnheader(1), \
         1 with lines lc rgb "black" dt 3 notitle
    unset multiplot
}
