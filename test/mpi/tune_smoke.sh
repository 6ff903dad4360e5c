#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# contrib/adapt2-tune --noise --verify on a tiny bcast sweep (np 2, 4-16 B): `previous` is
# preferred (first candidate, tolerance 0.99), so it wins every size and --noise measures it
# against binomial at the range's two ends. The run must write rules adapt2 accepts (it names
# the file's line as the rule of its calls), a report with a Noise row per measured size and a
# Verification row per size, progress lines per step on stderr, and the verification summary
# as the last lines on stdout.
. "$(dirname "$0")/lib.sh"
# compare.py selects each component itself: nothing may force adapt2 here.
unset OMPI_MCA_coll_adapt2_priority OMPI_MCA_mca_base_component_path
BENCH="$ADAPT2_BUILDDIR/perf/adapt2_bench"
TUNE="$ADAPT2_SRCDIR/contrib/adapt2-tune"
OUT=$(mktemp -d)
ERR=$(mktemp)
trap 'rm -rf "$OUT" "$LOG" "$ERR" "$RANKS"' EXIT

ok() { passed=$((passed + 1)); echo "ok   $1"; }
fail() { # NAME FILE...: says why, shows the files
    local name=$1
    shift
    failed=$((failed + 1)); echo "FAIL $name:"; sed 's/^/    /' "$@" | head -40
}

rc=0
timeout -k 5 120 python3 "$TUNE" --collectives bcast --np 2 --sizes 4:16 --repeat 2 --iters 5 --warmup 1 \
    --candidates previous,binomial --tolerance 0.99 --noise --noise-seeds 1 --noise-iters 10 --verify \
    --component-dir "$ADAPT2_BUILDDIR/.libs" --bench "$BENCH" --out "$OUT/tune" >"$LOG" 2>"$ERR" || rc=$?
RULES="$OUT/tune/adapt2.rules"
REPORT="$OUT/tune/report.md"
if [ $rc -eq 0 ] && [ -s "$RULES" ] && [ -s "$REPORT" ]; then
    ok "tune --noise --verify: exit 0, rules and report written"
else
    fail "tune --noise --verify: exit $rc" "$LOG" "$ERR"
fi
# 4, 8, 16 B: previous, kept or handed on by the noise check (with its reason).
if grep -qE "^bcast +2 +\* +0-[0-9]* +(previous|algorithm=binomial) +# noise at 4 B: previous's loop [0-9.]+x binomial's, (kept|handed on)" "$RULES"; then
    ok "tune: the rules line says what the noise check found"
else
    fail "tune: no bcast rule line with a noise comment" "$RULES"
fi
n=$(grep -cE '^\| bcast \| (4|16) \| binomial \| [-0-9.a-z]+ \| [-0-9.a-z]+ \| [0-9]+ \| [0-9]+ \| [0-9.]+ \| (previous kept|to binomial) \|$' "$REPORT")
if grep -q '^## Noise' "$REPORT" && [ "$n" = 2 ]; then
    ok "tune: the Noise table has a row for each end of previous's range"
else
    fail "tune: Noise table ($n rows of 2)" "$REPORT"
fi
n=$(grep -cE '^\| bcast \| (4|8|16) \| (previous|binomial) \| [0-9.]+ \| (auto|previous|binomial) \| [0-9.]+ \| [0-9.]+ \| (yes|no) \|$' "$REPORT")
if grep -q '^## Verification' "$REPORT" && [ "$n" = 3 ] && grep -qE '^[0-3] of 3 sizes reproduced' "$REPORT"; then
    ok "tune: the Verification table has a row per size and a summary"
else
    fail "tune: Verification table ($n rows of 3)" "$REPORT"
fi
if tail -3 "$LOG" | grep -qE '^adapt2-tune: verification: [0-3] of 3 sizes reproduced, [0-3] did not' \
    && [ "$(tail -1 "$LOG")" = "$RULES" ]; then
    ok "tune: stdout ends with the verification summary and the rules file"
else
    fail "tune: stdout's last lines" "$LOG"
fi
if grep -q '^\[bcast 4/4 runs' "$ERR" && grep -q '^\[noise bcast vs binomial 4/4 runs' "$ERR" \
    && grep -q '^\[verify bcast 8/8 runs' "$ERR"; then
    ok "tune: a progress line per finished run of each step"
else
    fail "tune: progress lines" "$ERR"
fi
# adapt2 reads the file: its line decides the calls (handed on, or binomial), nothing invalid.
export OMPI_MCA_mca_base_component_path="$ADAPT2_BUILDDIR/.libs:$OMPI_PKGLIBDIR"
rc=0
timeout -k 5 60 "$MPIRUN" $MPI_FLAGS -np 2 --mca coll_adapt2_priority 100 --mca coll_adapt2_rules "$RULES" \
    --mca coll_adapt2_verbose 20 "$BENCH" -k bcast -m 4:16 -i 2 -x 0 >"$LOG" 2>&1 || rc=$?
if [ $rc -eq 0 ] && ! grep -q "invalid value" "$LOG" \
    && grep -qE "handed to the previous component: $RULES:[0-9]+: bcast |rule: $RULES:[0-9]+: bcast " "$LOG"; then
    ok "tune: adapt2 plans by the tuner's file"
else
    fail "tune: adapt2 and the tuner's file (exit $rc)" "$LOG"
fi
finish
