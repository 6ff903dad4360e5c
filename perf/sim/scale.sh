#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# adapt2 against the lock-step baselines at scale on one machine spec: a
# 1 MiB broadcast (64 KiB segments) at p = 64, 256, ..., MAX_P, without noise
# (the last rank's time over the closed-form lower bound) and with noise
# p=0.1,d=5ms (amplification, perf/noise_bench.c's definition). Tables (tsv)
# and a markdown summary (OUT/table.md) in OUT.
#
#   perf/sim/scale.sh BUILDDIR OUT MACHINE [MAX_P] [ITERS]
#
# MACHINE: an adapt2_sim -M spec, e.g. one of calibrate.py's (perf/sim/README.md).
set -e
build=$1
out=$2
machine=$3
maxp=${4:-65536}
iters=${5:-8}
[ -n "$machine" ] || { echo "usage: scale.sh BUILDDIR OUT MACHINE [MAX_P] [ITERS]" >&2; exit 2; }
sim="$build/perf/sim/adapt2_sim"
ps=""
p=64
while [ "$p" -le "$maxp" ]; do ps="$ps${ps:+,}$p"; p=$((p * 4)); done
mkdir -p "$out"
"$sim" -M "$machine" -p "$ps" -m 1M -S 64K -a adapt2,adapt2-flat,adapt2-sync,tuned,binomial,scatter-allgather,chain \
    -o "$out/time.tsv" > "$out/time.txt"
"$sim" -M "$machine" -p "$ps" -m 1M -S 64K -a adapt2,adapt2-flat,adapt2-sync,tuned,binomial -n p=0.1,d=5ms -i "$iters" \
    -o "$out/noise.tsv" > "$out/noise.txt"
awk -v machine="$machine" -v plist="$ps" '
    FNR == 1 { file++ }
    /^#/ { next }
    file == 1 { ratio[$2, $3] = $9; lb[$3] = $8; if (!($2 in seen1)) { seen1[$2] = 1; a1[++n1] = $2 } }
    file == 2 { amp[$2, $3] = $13; if (!($2 in seen2)) { seen2[$2] = 1; a2[++n2] = $2 } }
    END {
        print "1 MiB broadcast, 64 KiB segments, -M " machine
        print ""
        head = "| p | bound (us) |"; sep = "|---|---|"
        for (i = 1; i <= n1; i++) { head = head " " a1[i] " last/lb |"; sep = sep "---|" }
        for (i = 1; i <= n2; i++) { head = head " " a2[i] " amp |"; sep = sep "---|" }
        print head; print sep
        n = split(plist, sorted, ",")
        for (j = 1; j <= n; j++) {
            p = sorted[j]; line = "| " p " | " sprintf("%.0f", lb[p]) " |"
            for (i = 1; i <= n1; i++) line = line " " sprintf("%.2f", ratio[a1[i], p]) " |"
            for (i = 1; i <= n2; i++) line = line " " sprintf("%.3f", amp[a2[i], p]) " |"
            print line
        }
    }' "$out/time.tsv" "$out/noise.tsv" > "$out/table.md"
cat "$out/table.md"
