#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
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
trap 'rm -rf "$OUT" "$LOG" "$RANKS"' EXIT

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
# The tuner: a tiny sweep writes a rules file and a report; adapt2 takes the file (no invalid
# value reported) and names its lines as the rules of the calls they cover.
TUNE="$ADAPT2_SRCDIR/contrib/adapt2-tune"
expect_exit "tune: allreduce and allgather, np 2, writes rules and a report" 0 "adapt2.rules" \
    python3 "$TUNE" --collectives allreduce,allgather --np 2 --sizes 4:16 --repeat 2 --iters 5 --warmup 1 \
    --candidates ring,previous \
    --component-dir "$ADAPT2_BUILDDIR/.libs" --bench "$BENCH" --out "$OUT/tune"
RULES="$OUT/tune/adapt2.rules"
if grep -qE "^(allreduce|allgather) +2 +\* +[0-9]+-[0-9]* +(previous|algorithm=)" "$RULES" \
    && [ "$(grep -c '^| allreduce' "$OUT/tune/report.md")" = 3 ]; then
    passed=$((passed + 1)); echo "ok   tune: the rules file has rule lines, the report a row per size"
else
    failed=$((failed + 1)); echo "FAIL tune: rules or report incomplete:"; sed 's/^/    /' "$RULES" "$OUT/tune/report.md"
fi
export OMPI_MCA_mca_base_component_path="$ADAPT2_BUILDDIR/.libs:$OMPI_PKGLIBDIR"
expect_exit "tune: adapt2 plans by the tuner's file" 0 "rule: $RULES:[0-9]+: (allreduce|allgather) |handed to the previous component: $RULES:" \
    "$MPIRUN" $MPI_FLAGS -np 2 --mca coll_adapt2_priority 100 --mca coll_adapt2_rules "$RULES" \
    --mca coll_adapt2_verbose 20 "$BENCH" -k allgather -m 4:16 -i 2 -x 0
if grep -q "invalid value" "$LOG"; then
    failed=$((failed + 1)); echo "FAIL tune: adapt2 refused the tuner's file:"; grep "invalid value" "$LOG" | head -3
else
    passed=$((passed + 1)); echo "ok   tune: adapt2 accepts the tuner's file"
fi
finish
