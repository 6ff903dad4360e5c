#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# adapt2's own UCX transport (coll_adapt2_transport=ucx, c/coll_adapt2_ucx.c)
# under pml ob1 and pml ucx (whose own UCX context coexists with adapt2's), at
# np 2, 4 and 5, with and without the progress thread, MPI_THREAD_MULTIPLE
# included. Every case also proves, from the verbose output, that each rank
# really ran on adapt2's worker (a silent fallback to the PML would pass the
# checkers too) and that UCX printed no warning or error (endpoints are
# force-closed at the end).
. "$(dirname "$0")/lib.sh"

if ! grep -q "UCX: context and worker created" "$ADAPT2_BUILDDIR/.libs/mca_coll_adapt2.so" 2>/dev/null; then
    echo "SKIP: adapt2 was built without UCX"
    exit 77
fi
have_pml_ucx=0
"${OMPI_INFO:-ompi_info}" --param pml ucx 2>/dev/null | grep -q "MCA pml: ucx" && have_pml_ucx=1
TIMEOUT=${ADAPT2_TEST_TIMEOUT:-60}
T="--mca coll_adapt2_transport ucx --mca coll_adapt2_verbose 10"
PT="--mca coll_adapt2_progress_thread 1"
WORLD_ON_UCX="\(MPI_COMM_WORLD\) transport: adapt2's own UCX worker"

# Follow-up checks judge the last case only if it has not failed yet.
case_failed=0
begin_case() { case_failed=$failed; }
case_ok() { [ $failed -eq $case_failed ]; }
output_case() {
    begin_case
    expect_output "$@"
}

# The last run's log must not show UCX complaining.
no_ucx_complaints() {
    local name=$1
    case_ok || return 0
    if grep -qE "UCX +(WARN|ERROR)" "$LOG"; then
        passed=$((passed - 1))
        failed=$((failed + 1))
        echo "FAIL $name: UCX complained:"
        grep -E "UCX +(WARN|ERROR)" "$LOG" | head -5 | sed 's/^/    /'
    fi
}

# on_ucx NAME NP [flags] -- PROGRAM [args]: passes, and every rank's
# MPI_COMM_WORLD used adapt2's UCX worker.
on_ucx() {
    local name=$1 np=$2
    shift 2
    output_case "$name" "$WORLD_ON_UCX" "$np" "$np" $T "$@"
    no_ucx_complaints "$name"
}

# expect_more NAME PATTERN COUNT: one more pattern count in the last log.
expect_more() {
    local name=$1 pattern=$2 count=$3 seen
    case_ok || return 0
    seen=$(grep -cE -- "$pattern" "$LOG")
    if [ "$seen" -ne "$count" ]; then
        passed=$((passed - 1))
        failed=$((failed + 1))
        echo "FAIL $name: expected $count lines matching /$pattern/, saw $seen"
    fi
}

# ---- pml ob1 ----------------------------------------------------------------
on_ucx "ob1: np 4, bcast, every root, sizes across segments" 4 -- \
    "$BIN/bcast_check" -s 1,65537,1048576 -t byte,vector
on_ucx "ob1: np 5, reduce/allreduce, every root, small segments" 5 -- \
    "$BIN/reduce_check" --types int,double,mat2i --ops sum,max,matmul --counts 1,3001,70000 \
    --segsizes 4096
on_ucx "ob1: np 2, outstanding ibcasts on 3 communicators" 2 -- "$BIN/bcast_outstanding" 16 3
# What separate nodes would use; endpoints are force-closed over it at the end.
on_ucx "ob1: np 4, UCX over TCP only" 4 -x UCX_TLS=tcp,self -- "$BIN/bcast_check" -s 1,65537,1048576 -t int

# ---- pml ucx: two UCX contexts per process -------------------------------------
if [ $have_pml_ucx -eq 1 ]; then
    on_ucx "pml ucx: np 5, bcast, all shapes, small segments, wide windows" 5 $UCX_FLAGS -- \
        "$BIN/bcast_check" -a binomial,chain,flat -g 1000,0 -w 1:1,2:64 -t int -s 1,70001
    on_ucx "pml ucx: np 4, outstanding ireduce/iallreduce on 4 communicators" 4 $UCX_FLAGS -- \
        "$BIN/reduce_outstanding" 24 2
    on_ucx "pml ucx: np 2, reduce 1 MiB" 2 $UCX_FLAGS -- \
        "$BIN/reduce_check" --types double --ops sum --sizes 1048576 --roots 1
else
    echo "SKIP: pml ucx cases (this Open MPI has no pml ucx)"
fi

# ---- the progress thread (MPI_THREAD_SINGLE: it drives only adapt2's worker) --
on_ucx "ob1 + progress thread: np 4, outstanding ibcasts" 4 $PT -- "$BIN/bcast_outstanding" 16 3
expect_more "  (progress thread started on every rank)" "progress thread: drives adapt2's UCX worker" 4
on_ucx "ob1 + progress thread: np 5, ireduce/iallreduce, every root" 5 $PT -- \
    "$BIN/reduce_check" --coll ireduce,iallreduce --types int,double --ops sum,prod --counts 1,3001,70000
if [ $have_pml_ucx -eq 1 ]; then
    on_ucx "pml ucx + progress thread: np 4, outstanding ireduce/iallreduce" 4 $PT $UCX_FLAGS -- \
        "$BIN/reduce_outstanding" 24 2
fi

# ---- MPI_THREAD_MULTIPLE: threads connect and post concurrently ------------------
on_ucx "ob1: np 2, 4 threads, bcast" 2 -- "$BIN/bcast_threads" 4 20
if [ $have_pml_ucx -eq 1 ]; then
    on_ucx "pml ucx + progress thread: np 4, 3 threads, reduce" 4 $PT $UCX_FLAGS -- \
        "$BIN/reduce_threads" 3 10
fi

# ---- worker life: torn down with the last communicator, made again; peers
# replace their endpoint to a process with a new worker ---------------------------
output_case "ob1: np 4, worker recreated by communicator lifetimes" \
    "UCX: context and worker created" 6 4 $T -- "$BIN/ucx_lifecycle" 3
expect_more "  (3 rounds: 3 peers replace their endpoint twice)" "endpoint replaced" 6
expect_more "  (every worker destroyed)" "UCX: worker and context destroyed" 6
no_ucx_complaints "ob1: np 4, worker recreated"
if [ $have_pml_ucx -eq 1 ]; then
    output_case "pml ucx + progress thread: np 5, worker recreated" \
        "UCX: context and worker created" 7 5 $T $PT $UCX_FLAGS -- "$BIN/ucx_lifecycle" 3
fi

# ---- consistent fallback: one rank without usable UCX -> every rank uses the PML --
output_case "np 4, one rank's UCX unusable: all ranks fall back" \
    "UCX transport unavailable" 4 1 $T -x UCX_TLS=none_such $ASAN_ENV -- "$BIN/bcast_check" -s 1,65537 \
    : -np 3 $ASAN_ENV "$BIN/bcast_check" -s 1,65537
expect_more "  (no rank used its worker)" "$WORLD_ON_UCX" 0

finish
