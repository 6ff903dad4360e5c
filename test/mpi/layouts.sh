#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# One program, other datatypes on other ranks (layouts_check: even ranks
# contiguous ints, odd ranks a vector with holes; the same type signature):
# every collective must still run the same algorithm on every rank and give
# every element, whatever the decision rules pick for the size and
# whichever algorithm is forced; flat and multi-level, ob1 and ucx.
. "$(dirname "$0")/lib.sh"
MPI_FLAGS="$MPI_FLAGS --mca mpi_param_check 0" # Open MPI 4.1.4 rejects MPI_SUM on derived types
BIG=$((65536 / BIG_DIV))

check "np 4, auto at every size (the ring allreduce from 1 MiB)" 4 -- "$BIN/layouts_check" --counts 1,100,4096,$BIG,$((4 * BIG))
check "np 3, recursive doubling, ring collectives forced to the ring" 3 \
    --mca coll_adapt2_allreduce_algorithm recursive_doubling --mca coll_adapt2_allgather_algorithm ring \
    --mca coll_adapt2_reduce_scatter_block_algorithm ring -- "$BIN/layouts_check" --counts 1,100,4096
full_only && check "np 5, ring allreduce in segments, Bruck, recursive halving" 5 \
    --mca coll_adapt2_allreduce_algorithm ring --mca coll_adapt2_allreduce_segment_size 4096 \
    --mca coll_adapt2_allgather_algorithm bruck --mca coll_adapt2_reduce_scatter_block_algorithm recursive_halving \
    -- "$BIN/layouts_check" --counts 1,100,4096
check "np 4, multi-level (2 nodes of 2)" 4 --mca coll_adapt2_nodes block:2 -- \
    "$BIN/layouts_check" --counts 1,4096,$BIG
full_only && check "np 4, pml ucx, multi-level" 4 --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any \
    --mca coll_adapt2_nodes block:2 -- "$BIN/layouts_check" --counts 1,4096,$BIG
full_only && check "np 6, adapt2's UCX transport, multi-level cyclic:3" 6 --mca coll_adapt2_transport ucx \
    --mca coll_adapt2_nodes cyclic:3 -- "$BIN/layouts_check" --counts 100,$((262144 / BIG_DIV))
finish
