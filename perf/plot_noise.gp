# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# Noise amplification per noise setting for perf/compare.py noise (gnuplot 5,
# pngcairo).
#
#   gnuplot -c perf/plot_noise.gp DATA.dat OUT.png "TITLE" NBLOCKS NSETTINGS
#
# DATA.dat: NBLOCKS blocks separated by two blank lines: one per component,
#   the last one the fully synchronized expectation (sync_bound). Each block
#   starts with a header line naming the curve in double quotes, then lines
#   'setting_index median min max "setting label"' (min/max over runs).
if (ARGC < 5) { print "usage: gnuplot -c plot_noise.gp DATA.dat OUT.png TITLE NBLOCKS NSETTINGS"; exit status 2 }
dat = ARG1
nb = int(ARG4)
ns = int(ARG5)

set terminal pngcairo size 1000, 650 enhanced font "DejaVu Sans,11"
set output ARG2
set encoding utf8
set title ARG3."\namplification = (T_noisy - T_clean) / noise per rank: median over runs, bars min-max\n1: each rank's noise costs only itself; dashed: fully synchronized (lock-step) expectation" noenhanced
set xlabel "noise setting (noise per rank as % of the clean loop time)" offset 0, -2
set ylabel "noise amplification"
set xrange [-0.5:ns - 0.5]
set yrange [0:*]
set xtics norotate noenhanced
set grid ytics lc rgb "#dddddd"
set key inside left top box opaque noenhanced
set offsets 0, 0, graph 0.3, 0
set bmargin 8
set rmargin 10
set lmargin 10
set pointsize 1.0

# Components side by side (a small x offset each) so the bars stay apart;
# the tic labels come from the sync_bound block (at the integer positions).
plot for [i=0:nb-2] dat index i using ($1 + (i - (nb - 2) / 2.0) * 0.04):2:3:4 \
         with yerrorlines lc (i + 1) pt (i + 5) lw 2 title columnheader(1), \
     dat index (nb - 1) using 1:2:xtic(5) with linespoints lc rgb "black" dt 2 pt 1 lw 1.5 \
         title columnheader(1), \
     1 with lines lc rgb "#888888" dt 3 title "1: noise absorbed"
