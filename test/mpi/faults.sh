#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# A rank killed (SIGKILL) in the middle of long collectives (64 MiB MPI_Bcast
# and MPI_Allreduce in a loop, test/mpi/fault_victim.c) must bring the whole
# job down quickly with Open MPI's error: mpirun exits non-zero, less than
# $LIMIT s after the kill, says which rank died, and no process of the test
# program is left. The victim either kills itself after a random delay
# (raise(SIGKILL) from a thread, so it dies wherever the main thread is) or is
# killed by this script by pid. pml ob1 and pml ucx; the progress thread and
# adapt2's own UCX transport too (their threads must not keep a process
# alive). A run without a fault comes first, as the control.
. "$(dirname "$0")/lib.sh"

LIMIT=${ADAPT2_FAULT_LIMIT:-10}
# As long as mpirun may take at most: a hang is caught, not waited out.
TIMEOUT=${ADAPT2_TEST_TIMEOUT:-60}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK" "$LOG" "$RANKS"' EXIT
SEED=${ADAPT2_FAULT_SEED:-$((RANDOM % 1000 + 1))}
echo "seed $SEED (ADAPT2_FAULT_SEED=$SEED repeats the delays)"
case_no=0

now() { date +%s.%N; }
# seconds from $1 to $2, 1 decimal
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
# whether $1 < $2 (decimals)
less_than() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }

# Processes of this case's run still alive (their command line has the tag).
leftovers() { pgrep -f -- "--tag $1( |$)" || true; }

fail_case() {
    failed=$((failed + 1))
    echo "FAIL $1"
    tail -n 25 "$LOG" | sed 's/^/    /'
}

# expect_killed NAME NP self|script VICTIM [mpirun flags...] [-- program args]:
# runs fault_victim on NP ranks; rank VICTIM dies by SIGKILL (by its own hand
# after 300-1500 ms, or by this script 300-1500 ms after every rank has
# finished its first collective). The job must end non-zero within $LIMIT s
# of the kill, report the death, and leave nothing behind.
expect_killed() {
    local name=$1 np=$2 how=$3 victim=$4
    shift 4
    local flags=() args=()
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do flags+=("$1"); shift; done
    [ $# -gt 0 ] && shift && args=("$@")
    case_no=$((case_no + 1))
    local tag="faults-$$-$case_no" dir="$WORK/$case_no" seed=$((SEED + case_no))
    mkdir -p "$dir"
    local prog=("$BIN/fault_victim" --victim "$victim" --seed "$seed" --tag "$tag" "${args[@]}")
    if [ "$how" = self ]; then
        prog+=(--self-kill 300:1500 --stamp "$dir/killed")
    else
        prog+=(--pid-dir "$dir")
    fi
    local rc=0 start killed="" ended
    start=$(now)
    timeout -k 5 "$TIMEOUT" "$MPIRUN" $MPI_FLAGS -np "$np" "${flags[@]}" "${prog[@]}" >"$LOG" 2>&1 &
    local job=$!
    if [ "$how" = script ]; then
        # every rank has been through one collective: the kill lands in a later one
        local i
        for ((i = 0; i < 600; ++i)); do
            [ "$(ls "$dir" | grep -c '^pid\.')" -eq "$np" ] && break
            kill -0 $job 2>/dev/null || break
            sleep 0.05
        done
        sleep "$(awk -v s="$seed" 'BEGIN { srand(s); printf "%.2f", 0.3 + rand() * 1.2 }')"
        if [ -s "$dir/pid.$victim" ]; then
            killed=$(now)
            kill -KILL "$(cat "$dir/pid.$victim")" 2>/dev/null || killed=""
        fi
    fi
    wait $job || rc=$?
    ended=$(now)
    [ "$how" = self ] && [ -s "$dir/killed" ] && killed=$(cat "$dir/killed")
    local left
    left=$(leftovers "$tag")
    if [ -n "$left" ]; then
        sleep 2 # a straggler reaped late is still a failure, but say so
        local still
        still=$(leftovers "$tag")
        echo "    processes left after mpirun ended: $left (2 s later: ${still:-none})"
        for p in $still; do kill -KILL "$p" 2>/dev/null; done
    fi
    if [ -z "$killed" ]; then
        fail_case "$name: the victim was never killed (exit $rc after $(elapsed "$start" "$ended") s)"
        return
    fi
    local took
    took=$(elapsed "$killed" "$ended")
    # mpirun itself exits 137 when a rank died of SIGKILL: only the clock
    # tells that apart from timeout's kill
    if ! less_than "$(elapsed "$start" "$ended")" "$TIMEOUT"; then
        fail_case "$name: hung: still running at the $TIMEOUT s timeout (exit $rc), $took s after the kill"
    elif [ $rc -eq 0 ]; then
        fail_case "$name: mpirun exited 0 although rank $victim was killed"
    elif ! less_than "$took" "$LIMIT"; then
        fail_case "$name: the job took $took s after the kill to end (limit $LIMIT s; exit $rc)"
    # Open MPI reports the first death it sees: the victim's, or a peer's
    # that its transport aborted first (pml ucx's CMA copy to the dead rank);
    # 5.0's prterun breaks that line before "signal"
    elif ! tr '\n' ' ' <"$LOG" | grep -aqE "process rank [0-9]+ with PID [0-9]+ on node [^ ]+ exited on +signal [0-9]+"; then
        fail_case "$name: exit $rc $took s after the kill, but Open MPI reported no rank's death"
    elif [ -n "$left" ]; then
        fail_case "$name: exit $rc $took s after the kill, but processes were left: $left"
    else
        passed=$((passed + 1))
        echo "ok   $name (exit $rc, ended $took s after the kill)"
    fi
}

check "control: no fault, np 4, 4 x 64 MiB" 4 -- "$BIN/fault_victim" --calls 4
expect_killed "pml ob1, np 4, rank 1 kills itself" 4 self 1
expect_killed "pml ob1, np 4, rank 2 killed by pid" 4 script 2
expect_killed "pml ob1, np 3, the bcast root of the first call (rank 0) killed by pid" 3 script 0
expect_killed "pml ob1, np 4, progress thread, MPI_THREAD_MULTIPLE, rank 1 kills itself" 4 self 1 \
    --mca coll_adapt2_progress_thread 1 -- --thread-multiple
expect_killed "pml ucx, np 4, rank 1 kills itself" 4 self 1 $UCX_FLAGS
expect_killed "pml ucx, np 4, rank 3 killed by pid" 4 script 3 $UCX_FLAGS
expect_killed "adapt2's UCX transport with its progress thread, np 4, rank 1 kills itself" 4 self 1 \
    --mca coll_adapt2_transport ucx --mca coll_adapt2_progress_thread 1
finish
