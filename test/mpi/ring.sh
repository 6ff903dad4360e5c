#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# Allgather and Reduce_scatter_block: every type class, op (non-commutative
# ones too), count, segment size, in place or not, blocking or not, threads,
# over ob1, ucx and adapt2's UCX transport.
. "$(dirname "$0")/lib.sh"
MPI_FLAGS="$MPI_FLAGS --mca mpi_param_check 0" # Open MPI 4.1.4 rejects MPI_SUM on derived types

check "np 2, every type, op, count and segment size" 2 -- "$BIN/ring_check"
check "np 3 (odd), every type, op and count" 3 -- "$BIN/ring_check" --segsizes 0,100
# auto takes Bruck below allgather_bruck_max_bytes (all blocks together): force each
check "np 5, allgather ring forced, every type" 5 --mca coll_adapt2_allgather_algorithm ring -- \
    "$BIN/ring_check" --colls allgather --segsizes 0,100 --counts 1,7,1000
check "np 7, allgather Bruck forced, every type, large too" 7 --mca coll_adapt2_allgather_algorithm bruck -- \
    "$BIN/ring_check" --colls allgather --segsizes 0 --counts 0,1,7,1000,$((40000 / BIG_DIV))
# The linear exchange: auto from allgather_bruck_max_bytes (all blocks) on one node of at most
# 8 ranks while each block is below allgather_linear_max_bytes, where the direct path's
# recursive doubling does not run (non-blocking calls, p not a power of two); forced at np 6.
check "np 6, allgather linear forced, every type, large too" 6 --mca coll_adapt2_allgather_algorithm linear -- \
    "$BIN/ring_check" --colls allgather --segsizes 0 --counts 0,1,7,1000,$((40000 / BIG_DIV))
expect_output "np 4, auto: non-blocking allgathers of 80-160 KB per rank linear (2 types x 2 x depth 3)" \
    "allgather of [0-9]+ bytes: linear" 48 4 --mca coll_adapt2_verbose 20 -- "$BIN/ring_check" --colls allgather \
    --types int,vec --counts 20000 --segsizes 0
also_expect "np 4, auto: none of them ran the ring" "allgather of [0-9]+ bytes: ring" 0
# reduce_scatter_block: auto takes recursive halving below
# reduce_scatter_block_halving_max_bytes and for non-commutative ops (first,
# affine); force each algorithm, p a power of two and not
for np in $(sweep 6 4); do
    for alg in ring recursive_halving; do
        check "np $np, reduce_scatter_block $alg forced, every type and op" $np \
            --mca coll_adapt2_reduce_scatter_block_algorithm $alg -- "$BIN/ring_check" --colls rsb \
            --segsizes 0,100 --counts 0,1,7,1000,$((20000 / BIG_DIV))
    done
done
check "np 4, windows 1:1, small segments" 4 --mca coll_adapt2_recv_window 1 --mca coll_adapt2_send_window 1 -- \
    "$BIN/ring_check" --segsizes 4,64 --counts 1,33,1000
check "np 5, 8 calls in flight, 3 rounds" 5 -- "$BIN/ring_check" --depth 8 --iters 3 --counts 5,300 --segsizes 48
check "np 4, large (1 MiB per rank, 64 KiB segments)" 4 -- "$BIN/ring_check" --types int,vec --ops sum \
    --counts $((262144 / BIG_DIV)) --segsizes 0,65536 --depth 2
check "np 3, MPI_THREAD_MULTIPLE: 4 threads on their own communicators" 3 -- "$BIN/ring_check" \
    --threads 4 --counts 1,500 --segsizes 64 --types int,vec --ops sum,usum --depth 3
if ompi_info --param pml ucx 2>/dev/null | grep -q "MCA pml: ucx"; then
    check "ucx: np 4, every type and op" 4 $UCX_FLAGS -- "$BIN/ring_check" --counts 1,999,30000 --segsizes 0,256
    check "ucx: np 2, 3 threads" 2 $UCX_FLAGS -- "$BIN/ring_check" --threads 3 --counts 7,3000 \
        --segsizes 256 --types int --ops sum
else
    echo "skip: this Open MPI has no pml ucx"
fi
# The multi-level allgather (auto across nodes below allgather_multi_level_max_bytes), with
# round-robin nodes (node order is not rank order): every type, in place or not, blocking or not.
expect_output "np 5, nodes cyclic:2, allgather multi-level (auto), every type" "allgather of [0-9]+ bytes: (ring|Bruck)" \
    0 5 --mca coll_adapt2_nodes cyclic:2 --mca coll_adapt2_verbose 20 -- "$BIN/ring_check" --colls allgather \
    --segsizes 0 --counts 0,1,7,1000
check "np 7, uneven nodes cyclic:3, allgather multi_level forced, large too" 7 --mca coll_adapt2_nodes cyclic:3 \
    --mca coll_adapt2_allgather_algorithm multi_level -- "$BIN/ring_check" --colls allgather --segsizes 0 \
    --types int,vec --counts 1,$((40000 / BIG_DIV))
# Multi-level layout (2 nodes declared; the multi-level allgather at 5000, the ring at the
# larger count) with a large derived type, both transports.
for t in pml ucx; do
    check "np 4, nodes block:2, large vector type, transport $t" 4 --mca coll_adapt2_nodes block:2 \
        --mca coll_adapt2_transport $t -- "$BIN/ring_check" --types vec --ops sum \
        --counts 5000,$((200000 / BIG_DIV)) --segsizes 0,4096 --depth 2
done
check "np 3, adapt2's UCX transport" 3 --mca coll_adapt2_transport ucx -- "$BIN/ring_check" \
    --counts 1,999 --segsizes 0,256 --types int,vec
finish
