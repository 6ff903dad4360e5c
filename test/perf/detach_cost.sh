#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# What decoupled completion costs, as perf/noise_bench and compare.py report
# it: with adapt2 at np 4, a 64 KiB broadcast under noise detaches some calls
# (detached fraction > 0, bytes copied per call > 0, each rank's CPU time
# reported); with coll_adapt2_detach_max_message=0 none (0 and 0); -t gives
# MPI_THREAD_MULTIPLE and, with coll_adapt2_progress_thread=1, a progress
# thread that polls; without adapt2 the MPI_T keys are absent (or zero) but the
# CPU time is there; compare.py --variant runs labelled variants and prints the
# cost table, closing line and CSV columns. Quick: well under 30 s.
. "$(dirname "$0")/../mpi/lib.sh"
BENCH="$ADAPT2_BUILDDIR/perf/noise_bench"
COMPARE="$ADAPT2_SRCDIR/perf/compare.py"
OUT=$(mktemp -d)
trap 'rm -rf "$OUT" "$LOG"' EXIT
ARGS="-i 20 -x 2 -m 64K -c -s 7 -q -n p=0.3,d=3ms"

ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() {
    failed=$((failed + 1)); echo "FAIL $1"
    head -30 "$LOG" | sed 's/^/    /'
}

# run NAME CMD...: must exit 0 within the timeout
run() {
    local name=$1 rc=0 start=$SECONDS
    shift
    timeout -k 5 60 "$@" >"$LOG" 2>&1 || rc=$?
    if [ $rc -ne 0 ]; then
        bad "$name (exit $rc)"
        return 1
    fi
    echo "     $name ran ($((SECONDS - start)) s)"
}

# value KEY: KEY=value from the RESULT line of the last run ('' if absent)
value() { sed -n "s/^RESULT .* $1=\([^ ]*\).*/\1/p" "$LOG"; }

# expect NAME AWK-CONDITION KEY...: the condition on $1, $2... (the keys'
# values, in order; a missing key fails)
expect() {
    local name=$1 cond=$2 vals=() k v
    shift 2
    for k in "$@"; do
        v=$(value "$k")
        [ -n "$v" ] || { bad "$name: no $k= in the RESULT line"; return; }
        vals+=("$v")
    done
    if echo "${vals[*]}" | awk "{ exit !($cond) }"; then
        ok "$name ($* = ${vals[*]})"
    else
        bad "$name: wanted $cond for $* = ${vals[*]}"
    fi
}

# adapt2, decoupled completion on (the defaults: 64 KiB < 1 MiB)
if run "adapt2 bcast 64K np 4" "$MPIRUN" $MPI_FLAGS -np 4 "$BENCH" $ARGS; then
    expect "adapt2: validated, thread level single" '$1 == "ok" && $2 == "single"' \
        validate thread
    expect "adapt2: calls detached under noise" '$1 > 0 && $1 <= 1 && $2 > 0' \
        detached_frac_noisy copied_bytes_per_call_noisy
    expect "adapt2: copied bytes per call at most the message" '$1 <= 65536 && $2 <= 65536' \
        copied_bytes_per_call_clean copied_bytes_per_call_noisy
    expect "adapt2: CPU time, no progress thread" '$1 > 0 && $2 >= 0 && $3 == 0 && $4 == 0' \
        cpu_noisy_ms cpu_clean_ms pt_cpu_noisy_ms pt_polls_noisy
    expect "adapt2: nothing refused" '$1 == 0 && $2 == 0' detach_refused_clean detach_refused_noisy
    grep -E "^bcast 64 KiB np=4 cost: .*of calls detached" "$LOG" | sed 's/^/    /'
fi

# decoupling off
if run "adapt2 detach_max_message=0" "$MPIRUN" $MPI_FLAGS -np 4 \
    --mca coll_adapt2_detach_max_message 0 "$BENCH" $ARGS; then
    expect "detach off: nothing detached, nothing copied" \
        '$1 == 0 && $2 == 0 && $3 == 0 && $4 == 0' detached_frac_noisy detached_frac_clean \
        copied_bytes_per_call_noisy copied_bytes_per_call_clean
fi

# -t and the progress thread (which drives the engine's detached calls: 64 KiB
# broadcasts on one node go direct unless coll_adapt2_direct_watch_max is below)
if run "adapt2 progress thread, -t" "$MPIRUN" $MPI_FLAGS -np 4 \
    --mca coll_adapt2_progress_thread 1 --mca coll_adapt2_direct_watch_max 0 "$BENCH" $ARGS -t; then
    expect "-t: MPI_THREAD_MULTIPLE, validated" '$1 == "multiple" && $2 == "ok"' thread validate
    expect "-t: the progress thread polled and its CPU time is counted" \
        '$1 + $2 > 0 && $3 >= 0 && $4 >= 0' pt_polls_clean pt_polls_noisy pt_cpu_clean_ms \
        pt_cpu_noisy_ms
fi

# no adapt2 loaded (Open MPI's own components): CPU time only
if run "without adapt2" env -u OMPI_MCA_mca_base_component_path \
    OMPI_MCA_coll_adapt2_priority=0 "$MPIRUN" $MPI_FLAGS -np 4 "$BENCH" $ARGS; then
    expect "without adapt2: CPU time reported" '$1 > 0' cpu_noisy_ms
    f=$(value detached_frac_noisy)
    if [ -z "$f" ] || [ "$f" = "0.0000" ]; then ok "without adapt2: no detached calls ('$f')"
    else bad "without adapt2: detached_frac_noisy=$f"; fi
fi

# compare.py: variants
unset OMPI_MCA_coll_adapt2_priority OMPI_MCA_mca_base_component_path
rc=0
python3 "$COMPARE" noise --variant 'x=adapt2:nokey' >"$LOG" 2>&1 || rc=$?
if [ $rc -eq 2 ] && grep -q "neither KEY=VALUE nor a benchmark argument" "$LOG"; then
    ok "compare: bad --variant is a usage error"
else bad "compare: bad --variant (exit $rc)"; fi
if run "compare noise with variants" python3 "$COMPARE" noise --components adapt2 \
    --variant adapt2-nodetach=adapt2:coll_adapt2_detach_max_message=0 \
    --variant adapt2-t=adapt2,-t --sizes 64K --iters 20 --warmup 2 --seeds 7 \
    --noise p=0.3,d=3ms --validate --no-plot --component-dir "$ADAPT2_BUILDDIR/.libs" \
    --bench "$BENCH" --out "$OUT/noise"; then
    for pat in "^noise +component +cpu_ms +detached +copied +refused +pt_cpu_ms" \
        "^noise bcast np=4: amplification adapt2 -?[0-9.]+, adapt2-nodetach -?[0-9.]+, adapt2-t -?[0-9.]+" \
        "adapt2/adapt2-nodetach -?[0-9.]+" \
        "^noise bcast np=4 cost: .*adapt2 detached [0-9.]*[1-9][0-9.]*%.*adapt2-nodetach detached 0\.0%, 0 B copied"; do
        if grep -qE -- "$pat" "$LOG"; then ok "compare: /$pat/"; else bad "compare: no /$pat/"; fi
    done
    grep -E "^noise bcast np=4 cost:" "$LOG" | sed 's/^/    /'
    if head -1 "$OUT/noise/logs/"*_adapt2-t_*.txt | grep -q -- "noise_bench .* -t$" &&
        head -1 "$OUT/noise/logs/"*_adapt2-nodetach_*.txt | grep -q -- "--mca coll_adapt2_detach_max_message 0"; then
        ok "compare: variant arguments reach mpirun and the benchmark"
    else bad "compare: variant arguments missing from the logged commands"; fi
    if head -1 "$OUT/noise/noise_summary.csv" | grep -q "detached_frac_noisy_median" &&
        grep -q "^4,bcast,65536,.*adapt2-nodetach," "$OUT/noise/noise_summary.csv"; then
        ok "compare: summary CSV has the cost columns and the variant"
    else bad "compare: summary CSV"; fi
fi
finish
