#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# adapt2 against the lock-step baselines at scale on one machine spec: a
# 1 MiB broadcast at p = 64, 256, ..., MAX_P, without noise (the last rank's
# time over the closed-form lower bound) and with noise p=0.1,d=5ms
# (amplification, perf/noise_bench.c's definition, up to NOISE_MAX_P), and a
# 1 MiB allreduce without noise. Tables (tsv) and a markdown summary
# (OUT/table.md) in OUT.
#
#   perf/sim/scale.sh BUILDDIR OUT MACHINE [MAX_P] [ITERS]
#
# MACHINE: an adapt2_sim -M spec, e.g. one of calibrate.py's (perf/sim/README.md).
# Segments: adapt2's defaults, as a user gets them (SEGMENT=SIZE: -S SIZE for
# every algorithm; the lock-step ones take 64 KiB otherwise); SIM_ARGS: more
# adapt2_sim options (e.g. "-c link"); NOISE_MAX_P: 4096 by default.
set -e
build=$1
out=$2
machine=$3
maxp=${4:-65536}
iters=${5:-8}
noise_maxp=${NOISE_MAX_P:-4096}
seg=${SEGMENT:+-S $SEGMENT}
[ -n "$machine" ] || { echo "usage: scale.sh BUILDDIR OUT MACHINE [MAX_P] [ITERS]" >&2; exit 2; }
sim="$build/perf/sim/adapt2_sim"
ps=""
p=64
noise_ps=""
while [ "$p" -le "$maxp" ]; do
    ps="$ps${ps:+,}$p"
    [ "$p" -le "$noise_maxp" ] && noise_ps="$noise_ps${noise_ps:+,}$p"
    p=$((p * 4))
done
mkdir -p "$out"
# shellcheck disable=SC2086 # $seg and $SIM_ARGS are lists of options
"$sim" -M "$machine" -p "$ps" -m 1M $seg $SIM_ARGS -a adapt2,adapt2-flat,adapt2-sync,tuned,binomial,scatter-allgather,chain \
    -o "$out/time.tsv" > "$out/time.txt"
# shellcheck disable=SC2086
"$sim" -M "$machine" -p "$noise_ps" -m 1M $seg $SIM_ARGS -a adapt2,adapt2-flat,adapt2-sync,tuned,binomial -n p=0.1,d=5ms \
    -i "$iters" -o "$out/noise.tsv" > "$out/noise.txt"
# shellcheck disable=SC2086
"$sim" -k allreduce -M "$machine" -p "$ps" -m 1M $seg $SIM_ARGS -a adapt2 -o "$out/allreduce.tsv" \
    > "$out/allreduce.txt"
awk -v machine="$machine" -v plist="$ps" '
    FNR == 1 { file++ }
    /^#/ { next }
    file == 1 { ratio[$2, $3] = $9; lb[$3] = $8; if (!($2 in seen1)) { seen1[$2] = 1; a1[++n1] = $2 } }
    file == 2 { amp[$2, $3] = $13; amp_last[$2, $3] = $14; if (!($2 in seen2)) { seen2[$2] = 1; a2[++n2] = $2 } }
    file == 3 { ar[$2, $3] = $9; if (!($2 in seen3)) { seen3[$2] = 1; a3[++n3] = $2 } }
    END {
        print "1 MiB broadcast and allreduce (ar), -M " machine
        print ""
        head = "| p | bound (us) |"; sep = "|---|---|"
        for (i = 1; i <= n1; i++) { head = head " " a1[i] " last/lb |"; sep = sep "---|" }
        for (i = 1; i <= n2; i++) { head = head " " a2[i] " amp (last) |"; sep = sep "---|" }
        for (i = 1; i <= n3; i++) { head = head " ar " a3[i] " last/lb |"; sep = sep "---|" }
        print head; print sep
        n = split(plist, sorted, ",")
        for (j = 1; j <= n; j++) {
            p = sorted[j]; line = "| " p " | " sprintf("%.0f", lb[p]) " |"
            for (i = 1; i <= n1; i++) line = line " " sprintf("%.2f", ratio[a1[i], p]) " |"
            for (i = 1; i <= n2; i++) {
                cell = (a2[i], p) in amp ? sprintf("%.2f (%.2f)", amp[a2[i], p], amp_last[a2[i], p]) : "-"
                line = line " " cell " |"
            }
            for (i = 1; i <= n3; i++) line = line " " sprintf("%.2f", ar[a3[i], p]) " |"
            print line
        }
    }' "$out/time.tsv" "$out/noise.tsv" "$out/allreduce.tsv" > "$out/table.md"
cat "$out/table.md"
