#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# The simulator's standard figures: time and noise amplification against the
# ranks (64 .. 65,536, 1 MiB) and against the message size (64 KiB .. 4 MiB,
# 1,024 ranks), adapt2 against the lock-step baselines. Tables and PNGs in OUT.
#
#   perf/sim/sweep.sh BUILDDIR OUT [MAX_P] [ITERS]
set -e
build=$1
out=$2
maxp=${3:-65536}
iters=${4:-8}
src=$(dirname "$0")
sim="$build/perf/sim/adapt2_sim"
algs="adapt2 adapt2:binomial adapt2-sync tuned binomial scatter-allgather chain"
noise_algs="adapt2 adapt2:binomial adapt2-sync tuned binomial"
comma() { echo "$1" | tr ' ' ','; }
mkdir -p "$out"
"$sim" -p 64:"$maxp" -m 1M -S 64K -a "$(comma "$algs")" -o "$out/time_p.tsv" > "$out/time_p.txt"
"$sim" -p 1024 -m 64K:4M -S 64K -a "$(comma "$algs")" -o "$out/time_m.tsv" > "$out/time_m.txt"
"$sim" -p 64:"$maxp" -m 1M -S 64K -a "$(comma "$noise_algs")" -n p=0.1,d=5ms -i "$iters" \
    -o "$out/noise_p.tsv" > "$out/noise_p.txt"
"$sim" -p 1024 -m 64K:4M -S 64K -a "$(comma "$noise_algs")" -n p=0.1,d=5ms -i "$iters" \
    -o "$out/noise_m.tsv" > "$out/noise_m.txt"
gnuplot -c "$src/plot_sim.gp" "$out/time_p.tsv" "$out/time_p.png" 3 "$algs" "bcast 1 MiB, 64 KiB segments" ratio
gnuplot -c "$src/plot_sim.gp" "$out/time_m.tsv" "$out/time_m.png" 4 "$algs" "bcast, 1,024 ranks, 64 KiB segments" ratio
gnuplot -c "$src/plot_sim.gp" "$out/noise_p.tsv" "$out/noise_p.png" 3 "$noise_algs" "bcast 1 MiB, noise p=0.1,d=5ms" amp
gnuplot -c "$src/plot_sim.gp" "$out/noise_m.tsv" "$out/noise_m.png" 4 "$noise_algs" "bcast, 1,024 ranks, noise p=0.1,d=5ms" amp
echo "tables and plots in $out"
