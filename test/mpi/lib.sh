# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# Sourced by the MPI test scripts. Loads adapt2 from the build tree (not an
# installed copy), selects it, and runs every mpirun under a timeout so a hang
# fails loudly. Each script calls `check NAME NP ARGS...` per case and ends
# with `finish`.
: "${ADAPT2_BUILDDIR:?run through make check}"
: "${MPIRUN:=mpirun}"
# The Open MPI configure found (MPIRUN from make check) goes first on the
# PATH, so that its ompi_info and the mpirun that perf/compare.py and
# contrib/adapt2-tune call are its own (a build against /opt/ompi5 beside
# Debian's Open MPI). Only then: /usr/bin first would change the python3.
case $MPIRUN in
    /*) [ "$(command -v mpirun)" = "$MPIRUN" ] || PATH="$(dirname "$MPIRUN"):$PATH" ;;
esac
: "${OMPI_PKGLIBDIR:=$(ompi_info --path pkglibdir --parsable | sed -n 's/^path:pkglibdir://p')}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_mca_base_component_path="$ADAPT2_BUILDDIR/.libs:$OMPI_PKGLIBDIR"
export OMPI_MCA_coll_adapt2_priority=100
# On a machine with a GPU, device support is on and raises segments to
# coll_adapt2_device_segment_size; the scripts' segment counts are for the
# host sizes they set. device.sh lifts this for its GPU cases.
export OMPI_MCA_coll_adapt2_device_segment_size=0
# More ranks than cores: yield when idle, or time slices dominate.
MPI_FLAGS="--oversubscribe --bind-to none --mca mpi_yield_when_idle 1"
# pml ucx as a user gets it (UCX_PML); UCX_FLAGS, the scripts' name for it,
# is the same (their MPI_THREAD_MULTIPLE cases run adapt2 over ucx by
# default; soak.sh checks coll_adapt2_ucx_thread_multiple 0's decline).
UCX_PML="--mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any"
UCX_FLAGS="$UCX_PML"
# A --enable-sanitizers build: the ranks load an instrumented component (and
# run instrumented test programs), so the sanitizer runtime goes first.
# Leaks are looked for only where a script sets ADAPT2_LSAN=1 (leaks.sh):
# full stacks make every allocation slow, and LeakSanitizer cannot stop
# pml ucx's threads. lsan.supp names each of Open MPI's own leaks.
# BIG_DIV divides the largest messages a script sends: 1, or 16 under the
# sanitizers, where every byte copied is checked (the subset took 11 min).
# FULL is 0 under the sanitizers: a script there runs one representative
# case of each kind (`sweep` and `full_only` below), so that the subset's
# memory checks stay within CI's time; the plain build runs every case.
BIG_DIV=1
FULL=1
ASAN_ENV=
if [ -n "${ADAPT2_ASAN_RUNTIME:-}" ]; then
    BIG_DIV=16
    FULL=0
    SUPP="${ADAPT2_SRCDIR:-$(dirname "$0")/../..}/test/mpi/lsan.supp"
    LEAKS="detect_leaks=0"
    [ "${ADAPT2_LSAN:-0}" = 1 ] && LEAKS="detect_leaks=1:fast_unwind_on_malloc=0:malloc_context_size=30"
    # components stay loaded at exit, so leaks name their functions
    # ASAN_ENV again after `:` in an MPMD launch (a context with -x of its own
    # did not get these)
    ASAN_ENV="-x LD_PRELOAD=$ADAPT2_ASAN_RUNTIME
        -x ASAN_OPTIONS=$LEAKS:abort_on_error=1:detect_odr_violation=0${ADAPT2_ASAN_EXTRA:-}
        -x LSAN_OPTIONS=suppressions=$SUPP:print_suppressions=0
        -x UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1"
    MPI_FLAGS="$MPI_FLAGS --mca mca_base_component_disable_dlclose 1 $ASAN_ENV"
fi
# Open MPI 5.0's launcher output may hold NUL bytes: grep reads every log as
# text (else it prints "binary file matches" instead of the lines).
grep() { command grep -a "$@"; }
TIMEOUT=${ADAPT2_TEST_TIMEOUT:-240}
BIN="$ADAPT2_BUILDDIR/test/mpi"
passed=0
failed=0
LOG=$(mktemp)
# Each rank's own output of the last run, kept apart (mpirun --output-filename
# RANKS: RANKS/<job>/rank.<n>/stdout and stderr). $LOG has it all as mpirun
# forwarded it, and under load mpirun forwards a rank's output in pieces that
# may interleave with another rank's (a line cut in two by another's: CI lost
# 1-4 of 144 verbose lines so); lines are counted here.
RANKS=$(mktemp -d)
trap 'rm -rf "$LOG" "$RANKS"' EXIT

# check NAME NP [mpirun flags...] -- PROGRAM [args...]
check() {
    local name=$1 np=$2
    shift 2
    local flags=()
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do flags+=("$1"); shift; done
    shift
    local start=$SECONDS rc=0 try
    for try in 1 2 3; do
        rc=0
        rm -rf "${RANKS:?}"/*
        timeout -k 10 "$TIMEOUT" "$MPIRUN" $MPI_FLAGS --output-filename "$RANKS" -np "$np" "${flags[@]}" "$@" \
            >"$LOG" 2>&1 || rc=$?
        [ $rc -ne 0 ] && lsan_tool_fault $rc && [ $try -lt 3 ] || break
        echo "     again: LeakSanitizer's tracer crashed at exit, a fault of the tool, not a finding (google/sanitizers#1353):"
        command grep -a -m 1 "Tracer caught signal" "$LOG" | sed 's/^/       /'
    done
    if [ $rc -eq 0 ]; then
        passed=$((passed + 1))
        echo "ok   $name ($((SECONDS - start)) s)"
    else
        failed=$((failed + 1))
        [ $rc -eq 124 ] && echo "TIMEOUT after ${TIMEOUT} s"
        echo "FAIL $name (exit $rc):"
        tail -n 30 "$LOG" | sed 's/^/    /'
    fi
}

# lsan_tool_fault RC: whether the last run (exit status RC) failed only because LeakSanitizer's
# own tracer thread crashed while it stopped a rank at exit ("Tracer caught
# signal 11 ... LeakSanitizer has encountered a fatal error": intermittent,
# seen once in ~20 CI runs of leaks.sh after every element was checked). Not
# when anything else failed: a leak report, a FAIL line of the test program,
# another sanitizer's error or a timeout. check runs such a case again, at
# most twice.
lsan_tool_fault() {
    [ "${ADAPT2_LSAN:-0}" = 1 ] && [ "$1" -ne 124 ] && [ "$1" -ne 137 ] || return 1
    command grep -aq "LeakSanitizer has encountered a fatal error" "$LOG" || return 1
    ! cat "$LOG" "$RANKS"/*/rank.*/std* 2>/dev/null |
        command grep -aqE "detected memory leaks|FAIL|ERROR: (Address|Undefined)Sanitizer|runtime error:"
}

# matched NAME PATTERN COUNT: whether the last run printed PATTERN (extended
# regex) exactly COUNT times; says what it saw when not. Counted in the
# ranks' own output, or in what mpirun printed itself when no rank printed it
# (Open MPI's help messages, which mpirun prints for the ranks).
matched() {
    local seen
    seen=$(cat "$RANKS"/*/rank.*/std* 2>/dev/null | grep -cE -- "$2")
    [ "$seen" -gt 0 ] || seen=$(grep -cE -- "$2" "$LOG")
    [ "$seen" -eq "$3" ] && return 0
    echo "FAIL $1: expected $3 lines matching /$2/, saw $seen:"
    sed 's/^/    /' "$LOG" | head -20
    return 1
}

# expect_output NAME PATTERN COUNT NP [flags] -- PROGRAM [args]: the run must
# succeed and print PATTERN exactly COUNT times.
expect_output() {
    local name=$1 pattern=$2 count=$3
    shift 3
    local before=$failed
    check "$name" "$@"
    [ $failed -ne $before ] && return
    matched "$name" "$pattern" "$count" && return
    passed=$((passed - 1))
    failed=$((failed + 1))
}

# also_expect NAME PATTERN COUNT: one more check of the last run's output
# (a second pattern, without running the program again).
also_expect() {
    if matched "$@"; then
        passed=$((passed + 1))
        echo "ok   $1"
    else
        failed=$((failed + 1))
    fi
}

# expect_failure NAME PATTERN NP [flags] -- PROGRAM [args]: the run must fail
# (not time out) and print PATTERN (extended regex): the program's check
# catches what it is about (a mutation test).
expect_failure() {
    local name=$1 pattern=$2 np=$3
    shift 3
    local flags=()
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do flags+=("$1"); shift; done
    shift
    local start=$SECONDS rc=0
    rm -rf "${RANKS:?}"/*
    timeout -k 10 "$TIMEOUT" "$MPIRUN" $MPI_FLAGS --output-filename "$RANKS" -np "$np" "${flags[@]}" "$@" \
        >"$LOG" 2>&1 || rc=$?
    if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $rc -ne 137 ] &&
        cat "$LOG" "$RANKS"/*/rank.*/std* 2>/dev/null | grep -qE -- "$pattern"; then
        record_pass "$name ($((SECONDS - start)) s)"
    else
        record_fail "$name: expected a failure printing /$pattern/, got exit $rc:"
    fi
}

# record_pass WHAT / record_fail WHAT: count a case and say so (a failed one
# with the end of its run's output).
record_pass() {
    passed=$((passed + 1))
    echo "ok   $1"
}
record_fail() {
    failed=$((failed + 1))
    echo "FAIL $1"
    tail -n 20 "$LOG" | sed 's/^/    /'
}

# sweep VALUES...: every value in the full run, the first one under the
# sanitizers (for loops over rank counts and the like).
sweep() { if [ "$FULL" = 1 ]; then echo "$@"; else echo "$1"; fi; }

# full_only: true in the full run; a case that repeats what the subset
# already covers under the sanitizers is skipped there (`full_only && check ...`).
full_only() { [ "$FULL" = 1 ]; }

finish() {
    echo "$passed passed, $failed failed"
    [ $failed -eq 0 ]
}
