#!/bin/bash
# The benchmark and the comparison driver: argument errors give a usage
# message and exit 2; a quick validated comparison of adapt2, tuned and
# upstream adapt (and adapt2 vs libnbc for ibcast) finishes with its table,
# ratio lines, CSV and PNG.
. "$(dirname "$0")/lib.sh"
# compare.py selects each component itself: nothing may force adapt2 here.
unset OMPI_MCA_coll_adapt2_priority OMPI_MCA_mca_base_component_path
BENCH="$ADAPT2_BUILDDIR/perf/adapt2_bench"
COMPARE="$ADAPT2_SRCDIR/perf/compare.py"
OUT=$(mktemp -d)
trap 'rm -rf "$OUT" "$LOG"' EXIT

expect_exit() { # NAME WANTED_STATUS PATTERN CMD...
    local name=$1 want=$2 pattern=$3 rc=0
    shift 3
    timeout -k 5 120 "$@" >"$LOG" 2>&1 || rc=$?
    if [ $rc -eq "$want" ] && grep -qiE -- "$pattern" "$LOG"; then
        passed=$((passed + 1)); echo "ok   $name"
    else
        failed=$((failed + 1)); echo "FAIL $name (exit $rc, wanted $want and /$pattern/):"
        head -20 "$LOG" | sed 's/^/    /'
    fi
}

expect_exit "bench: unknown flag" 2 "usage" "$MPIRUN" $MPI_FLAGS -np 2 "$BENCH" -Q
expect_exit "bench: min > max" 2 "usage" "$MPIRUN" $MPI_FLAGS -np 2 "$BENCH" -m 64K:1K
expect_exit "bench: unknown collective" 2 "usage" "$MPIRUN" $MPI_FLAGS -np 2 "$BENCH" -k gather
expect_exit "compare: bad sizes" 2 "usage" python3 "$COMPARE" --sizes banana
expect_exit "compare: unknown component" 2 "usage|unknown" python3 "$COMPARE" --components adapt2,nope
expect_exit "compare: quick bcast, validated" 0 "adapt2/tuned median ratio" \
    python3 "$COMPARE" --quick --validate --component-dir "$ADAPT2_BUILDDIR/.libs" --bench "$BENCH" \
    --out "$OUT/bcast"
for f in raw.csv summary.csv bcast.png; do
    if [ -s "$OUT/bcast/$f" ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL no $f"; fi
done
expect_exit "compare: quick ibcast vs libnbc, validated" 0 "adapt2/libnbc median ratio" \
    python3 "$COMPARE" --quick --validate --collective ibcast --components adapt2,libnbc \
    --component-dir "$ADAPT2_BUILDDIR/.libs" --bench "$BENCH" --out "$OUT/ibcast" --no-plot
finish
