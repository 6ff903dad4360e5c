#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# Soak (test/mpi/soak.c): np 4, MPI_THREAD_MULTIPLE, 4 threads per rank on 8
# communicators that come and go, mixed non-blocking bcast/reduce/allreduce
# from 1 byte to 1 MiB, contiguous and vector types, several outstanding per
# communicator, completed in random orders; every element checked on every
# rank, and resident memory must not grow past the warm-up (see
# check_memory in soak.c). pml ob1, pml ucx, and the progress thread.
#
# CI runs 1500 collectives per rank and case (about a minute in all on 2
# cores). The long mode: ADAPT2_SOAK_CALLS=100000 (100,000 collectives per
# rank and case; tens of minutes). ADAPT2_SOAK_SEED repeats a run's random
# choices (the seed is printed).
. "$(dirname "$0")/lib.sh"

CALLS=${ADAPT2_SOAK_CALLS:-1500}
SEED=${ADAPT2_SOAK_SEED:-$((RANDOM + 1))}
# about 5 ms a call on 2 cores (more on a loaded machine): generous
TIMEOUT=${ADAPT2_TEST_TIMEOUT:-$((240 + CALLS / 20))}
echo "soak: $CALLS collectives per rank and case, seed $SEED (ADAPT2_SOAK_SEED=$SEED repeats it)"
# Open MPI 4.1's argument checks reject predefined ops on derived datatypes.
SOAK_FLAGS="--mca mpi_param_check 0"

# soak NAME [mpirun flags...] [-- soak args]: one run; its per-rank memory lines and its
# summary are shown whether it passes or not.
soak() {
    local name=$1 flags=() args=()
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do flags+=("$1"); shift; done
    [ "${1:-}" = -- ] && shift && args=("$@")
    check "$name" 4 $SOAK_FLAGS "${flags[@]}" -- "$BIN/soak" --calls "$CALLS" --seed "$SEED" "${args[@]}"
    grep -E '^soak: ' "$LOG" | sed 's/^/    /'
}

soak "pml ob1, np 4, 4 threads"
# Over pml ucx adapt2 polls its requests under MPI_THREAD_MULTIPLE: a
# completion callback set after posting lost completions another thread made
# in between (5 of about 250 runs of this case hung; coll_adapt2_pml.c).
soak "pml ucx, np 4, 4 threads" $UCX_PML
# coll_adapt2_ucx_thread_multiple 0: adapt2 declines there; the calls are
# the previous component's, every result still checked (contiguous types:
# Open MPI's own reductions take no others; no communicator freed with calls
# pending: Open MPI 4.1.4's libnbc crashes then, 1 of 6 runs here).
soak "pml ucx, np 4, 4 threads, coll_adapt2_ucx_thread_multiple 0: adapt2 declines" $UCX_PML \
    --mca coll_adapt2_ucx_thread_multiple 0 -- --declined --no-vector --churn 0
soak "pml ob1, np 4, 4 threads, progress thread" --mca coll_adapt2_progress_thread 1
finish
