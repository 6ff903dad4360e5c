#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# The noise-absorption benchmark (perf/noise_bench) and compare.py's noise
# mode: argument errors give a usage message and exit 2 (on every rank, no
# hang); tiny noisy runs for adapt2 and tuned finish, validate their data and
# print an amplification figure (any sign: on a busy CI machine the "clean"
# loop can be the slower one, so the figure may be negative); the same seed injects the same noise whatever
# the component; a quick "compare.py noise" writes its table, CSV and PNG; the
# latency mode prints its best-other line.
. "$(dirname "$0")/../mpi/lib.sh"
BENCH="$ADAPT2_BUILDDIR/perf/noise_bench"
COMPARE="$ADAPT2_SRCDIR/perf/compare.py"
OUT=$(mktemp -d)
trap 'rm -rf "$OUT" "$LOG"' EXIT
# lib.sh selects adapt2 through the environment; these select it explicitly.
ADAPT2_ENV="OMPI_MCA_coll_adapt2_priority=100"
TUNED_ENV="OMPI_MCA_coll_adapt2_priority=0"

expect_exit() { # NAME WANTED_STATUS PATTERN CMD...
    local name=$1 want=$2 pattern=$3 rc=0 start=$SECONDS
    shift 3
    timeout -k 5 120 "$@" >"$LOG" 2>&1 || rc=$?
    if [ $rc -eq "$want" ] && grep -qiE -- "$pattern" "$LOG"; then
        passed=$((passed + 1)); echo "ok   $name ($((SECONDS - start)) s)"
    else
        failed=$((failed + 1)); echo "FAIL $name (exit $rc, wanted $want and /$pattern/):"
        head -30 "$LOG" | sed 's/^/    /'
    fi
}

# value KEY: KEY=value from the RESULT line of the last run
value() { sed -n "s/^RESULT .* $1=\([^ ]*\).*/\1/p" "$LOG"; }

run_bench() { # NAME ENV NP ARGS...
    local name=$1 envv=$2 np=$3
    shift 3
    expect_exit "$name" 0 "^RESULT .*amplification=-?[0-9.]+ .*validate=ok" \
        env "$envv" "$MPIRUN" $MPI_FLAGS -np "$np" "$BENCH" "$@"
}

# argument errors
expect_exit "bench: unknown flag" 2 "usage" "$MPIRUN" $MPI_FLAGS -np 2 "$BENCH" -Q
expect_exit "bench: bad noise probability" 2 "usage" "$MPIRUN" $MPI_FLAGS -np 2 "$BENCH" -n p=2
expect_exit "bench: unknown noise key" 2 "unknown key .p. for periodic" \
    "$MPIRUN" $MPI_FLAGS -np 2 "$BENCH" -n periodic:p=0.1
expect_exit "bench: noisy rank not a rank" 2 "not a rank" \
    "$MPIRUN" $MPI_FLAGS -np 2 "$BENCH" -n ranks=0+5
expect_exit "bench: root of allreduce" 2 "usage" \
    "$MPIRUN" $MPI_FLAGS -np 2 "$BENCH" -k allreduce -r 1
expect_exit "bench: unknown collective" 2 "usage" "$MPIRUN" $MPI_FLAGS -np 2 "$BENCH" -k gather

# tiny noisy runs (few iterations, short noise), validated
TINY="-i 20 -x 2 -m 64K -c -s 7"
run_bench "bench: adapt2 bcast, random noise" "$ADAPT2_ENV" 4 $TINY -n p=0.3,d=3ms
a2=$(value noise_per_rank_s)
grep -E "^bcast 64 KiB np=4: .*amplification -?[0-9.]+" "$LOG" | sed 's/^/    /'
run_bench "bench: tuned bcast, random noise" "$TUNED_ENV" 4 $TINY -n p=0.3,d=3ms
tu=$(value noise_per_rank_s)
grep -E "^bcast 64 KiB np=4: .*amplification -?[0-9.]+" "$LOG" | sed 's/^/    /'
if [ -n "$a2" ] && [ "$a2" = "$tu" ]; then
    passed=$((passed + 1)); echo "ok   same seed, same noise ($a2 s per rank)"
else
    failed=$((failed + 1)); echo "FAIL same seed, different noise: adapt2 '$a2', tuned '$tu'"
fi
run_bench "bench: adapt2 ireduce, periodic noise on rank 1, polling" "$ADAPT2_ENV" 3 \
    $TINY -k ireduce -r 2 -P 500 -n periodic:d=3ms,every=10ms,ranks=1
run_bench "bench: adapt2 allreduce, pareto noise, every iteration checked" "$ADAPT2_ENV" 4 \
    -i 20 -x 2 -m 4K -C -n p=0.2,d=2ms,dist=pareto,alpha=1.5,cap=20ms,frac=0.5

# The floor (what the data's dependencies alone cost) with noise on one rank
# of 4, N in all: a broadcast root's noise delays every rank (4N / 4 over N/4
# each: 4), a leaf's only itself (1); a reduce's root waits for a noisy leaf
# (mean 2N/4: 2, the root 4); an allreduce's ranks all wait (4, the fully
# synchronized figure).
floor_is() { # NAME FLOOR FLOOR_LAST
    local got
    got="$(value floor) $(value floor_last)"
    if [ "$got" = "$2 $3" ]; then
        passed=$((passed + 1)); echo "ok   $1: floor $2, last $3"
    else
        failed=$((failed + 1)); echo "FAIL $1: floor and floor_last '$got', wanted '$2 $3'"
    fi
}
ONE="-i 20 -x 2 -m 4K -s 3"
run_bench "bench: bcast, noise on the root only" "$ADAPT2_ENV" 4 $ONE -c -n p=0.5,d=2ms,ranks=0
floor_is "bcast, the root's noise" 4.0000 4.0000
run_bench "bench: bcast, noise on a leaf only" "$ADAPT2_ENV" 4 $ONE -c -n p=0.5,d=2ms,ranks=2
floor_is "bcast, a leaf's noise" 1.0000 4.0000
run_bench "bench: reduce, noise on a leaf only" "$ADAPT2_ENV" 4 $ONE -c -k reduce -n p=0.5,d=2ms,ranks=2
floor_is "reduce, a leaf's noise" 2.0000 4.0000
run_bench "bench: iallreduce, noise on one rank" "$ADAPT2_ENV" 4 $ONE -c -k iallreduce -n p=0.5,d=2ms,ranks=1
floor_is "iallreduce, one rank's noise" 4.0000 4.0000

# compare.py noise (and the latency mode's best-other line); compare.py
# selects each component itself: nothing may force adapt2 here.
unset OMPI_MCA_coll_adapt2_priority OMPI_MCA_mca_base_component_path
expect_exit "compare noise: bad spec" 2 "usage" python3 "$COMPARE" noise --noise p=0.1,d=5parsecs
expect_exit "compare noise: unknown collective" 2 "usage" \
    python3 "$COMPARE" noise --collective gather
expect_exit "compare noise: noisy rank not a rank" 2 "not a rank" \
    python3 "$COMPARE" noise --np 4,2 --noise ranks=3
expect_exit "compare noise: quick, validated" 0 "^noise bcast np=4: amplification adapt2 -?[0-9.]+, tuned -?[0-9.]+" \
    python3 "$COMPARE" noise --quick --validate --components adapt2,tuned \
    --component-dir "$ADAPT2_BUILDDIR/.libs" --bench "$BENCH" --out "$OUT/noise"
files="noise_raw.csv noise_summary.csv"
command -v gnuplot >/dev/null && files="$files noise_bcast_4K_np4.png"
for f in $files; do
    if [ -s "$OUT/noise/$f" ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL no $f"; fi
done
expect_exit "compare latency: best-other line" 0 "^bcast np=3: adapt2/best-other median ratio" \
    python3 "$COMPARE" --quick --np 3 --sizes 1:64K --repeat 1 --components adapt2,tuned,adapt \
    --component-dir "$ADAPT2_BUILDDIR/.libs" --bench "$ADAPT2_BUILDDIR/perf/adapt2_bench" \
    --out "$OUT/latency" --no-plot
finish
