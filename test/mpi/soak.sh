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

# soak NAME [mpirun flags...]: one run; its per-rank memory lines and its
# summary are shown whether it passes or not.
soak() {
    local name=$1
    shift
    check "$name" 4 $SOAK_FLAGS "$@" -- "$BIN/soak" --calls "$CALLS" --seed "$SEED"
    grep -E '^soak: ' "$LOG" | sed 's/^/    /'
}

soak "pml ob1, np 4, 4 threads"
soak "pml ucx, np 4, 4 threads" $UCX_FLAGS
soak "pml ob1, np 4, 4 threads, progress thread" --mca coll_adapt2_progress_thread 1
finish
