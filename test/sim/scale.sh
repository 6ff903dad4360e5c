#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# The simulator at scale, scaled down (issue 16: 65,536 ranks x 1 MiB in
# 64 KiB segments under 4 GiB and 60 s on every machine spec): 4,096 ranks
# of a 1 MiB broadcast and allreduce on each spec, under an address-space limit, must stay
# within a memory bound per rank and a time bound per event. The bounds are
# loose (about 4x what was measured: 25-29 MiB and 0.2-0.45 s, 1-2.5 us per
# event, on 2 busy cores) so that load does not fail them; what they catch
# is growth with the ranks, which is how the simulator ran out of memory:
# private detach copies took 0.5-2 GiB of address space at this size
# (0.1-0.5 MiB per rank) where 30 MiB do now; and the first Rabenseifner
# allreduce kept a table of p offsets per rank (32 KiB per rank here, 2.2
# GiB at 16,384 ranks), where 10 KiB per rank do now.
sim="${ADAPT2_BUILDDIR:-.}/perf/sim/adapt2_sim"
[ -x "$sim" ] || { echo "no $sim: skipped"; exit 77; }
P=4096
MAX_KIB_PER_RANK=20    # resident memory over the ranks (measured 6.2-7.1)
MAX_US_PER_EVENT=10    # wall time over the events handled (measured 1-2.5)
ADDRESS_SPACE_KIB=$((256 * 1024))  # the old private copies needed 541 MiB-2 GiB
CALIBRATED="intra.L=0.242,intra.o=0.069,intra.g=0.069,intra.G=7.318e-05,intra.get=1,inter.L=0.242,inter.o=0.069,inter.g=0.069,inter.G=7.318e-05,k=2,cores=2,share=1,mem=5.982e-05,wake=1.85,gamma=5.758e-05,copy=7.318e-05"
failed=0
for kind in bcast allreduce; do
for spec in default k=2,cores=2 k=32,cores=32 "$CALIBRATED"; do
    args=(-k $kind -a adapt2 -p $P -m 1M -S 64K)
    [ "$spec" = default ] || args+=(-M "$spec")
    name="$kind ${spec:0:20}"
    out=$( (ulimit -v $ADDRESS_SPACE_KIB; timeout 120 "$sim" "${args[@]}") 2>&1)
    row=$(echo "$out" | awk -v kind=$kind '$1 == kind && $2 == "adapt2"')
    if [ -z "$row" ]; then
        echo "FAIL $name: no result row (out of memory under a ${ADDRESS_SPACE_KIB} KiB address space, or a crash):"
        echo "$out" | tail -5 | sed 's/^/    /'
        failed=1
        continue
    fi
    # columns: ... sim_s rss_mib events events/s (the last four)
    echo "$row" | awk -v p=$P -v kib=$MAX_KIB_PER_RANK -v us=$MAX_US_PER_EVENT -v name="$name" '{
        secs = $(NF - 3); rss = $(NF - 2); events = $(NF - 1)
        per_rank = rss * 1024 / p; per_event = events > 0 ? secs * 1e6 / events : 1e9
        ok = per_rank <= kib && per_event <= us && index($0, "INCOMPLETE") == 0
        printf "%s %s: %d ranks, %.1f MiB (%.1f KiB per rank, at most %d), %d events in %.2f s (%.2f us each, at most %d)\n",
               ok ? "ok  " : "FAIL", name, p, rss, per_rank, kib, events, secs, per_event, us
        exit ok ? 0 : 1 }' || failed=1
done
done
exit $failed
