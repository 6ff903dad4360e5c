#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# MPI_THREAD_MULTIPLE: 4 threads per rank, each reducing on its own
# communicator (reduce, ireduce, allreduce, iallreduce; non-commutative op
# included).
. "$(dirname "$0")/lib.sh"

check "np 2, 4 threads" 2 -- "$BIN/reduce_threads" 4 60
check "np 4, 4 threads, small segments, ring allreduce" 4 --mca coll_adapt2_reduce_segment_size 4096 \
    --mca coll_adapt2_allreduce_segment_size 4096 --mca coll_adapt2_allreduce_algorithm ring \
    -- "$BIN/reduce_threads" 4 40
check "np 3, 4 threads, reproducible, binary trees" 3 --mca coll_adapt2_reproducible 1 \
    --mca coll_adapt2_reduce_algorithm binary -- "$BIN/reduce_threads" 4 40
finish
