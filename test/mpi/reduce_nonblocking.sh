#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# Many outstanding MPI_Ireduce/MPI_Iallreduce on four communicators (dup,
# reversed, two halves, shuffled), mixed types and ops, completed in a random
# order per rank (MPI_Wait, MPI_Waitany, MPI_Testsome), with a user-defined op
# and a datatype freed before completion.
. "$(dirname "$0")/lib.sh"

check "np 4, 24 outstanding per round on 4 communicators" 4 -- "$BIN/reduce_outstanding" 24 6
check "np 8, 32 outstanding, small segments" 8 --mca coll_adapt2_reduce_segment_size 4096 \
    --mca coll_adapt2_allreduce_segment_size 4096 -- "$BIN/reduce_outstanding" 32 3
check "np 3, 48 outstanding, windows 1, ring allreduce" 3 --mca coll_adapt2_recv_window 1 \
    --mca coll_adapt2_send_window 1 --mca coll_adapt2_allreduce_algorithm ring \
    --mca coll_adapt2_reduce_segment_size 8192 -- "$BIN/reduce_outstanding" 48 3
check "np 5, reproducible, 24 outstanding" 5 --mca coll_adapt2_reproducible 1 \
    --mca coll_adapt2_reduce_algorithm in_order_binomial -- "$BIN/reduce_outstanding" 24 3
finish
