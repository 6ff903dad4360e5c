#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# Reductions under pml ucx (forced: without InfiniBand Open MPI picks ob1).
. "$(dirname "$0")/lib.sh"

if ! ompi_info --param pml ucx 2>/dev/null | grep -q "MCA pml: ucx"; then
    echo "SKIP: this Open MPI has no pml ucx"
    exit 77
fi
check "ucx: np 4, every op x type class, every root, 4 KiB segments" 4 $UCX_FLAGS \
    --mca coll_adapt2_reduce_algorithm knomial -- "$BIN/reduce_check" --segsizes 4096
check "ucx: np 5, every tree, small segments, wide windows, non-commutative" 5 $UCX_FLAGS -- \
    "$BIN/reduce_check" --algorithms binomial,in_order_binomial,binary,kary,knomial,chain,pipeline,flat \
    --allreduce-algorithms tree,ring --segsizes 100,1000 --windows 1:1,2:64 --types int,mat2i \
    --ops sum,matmul --counts 1,70,3001 --roots 0,3
check "ucx: np 4, outstanding ireduce/iallreduce" 4 $UCX_FLAGS -- "$BIN/reduce_outstanding" 24 3
check "ucx: np 4, 16 MiB" 4 $UCX_FLAGS -- "$BIN/reduce_check" --types double --ops sum --sizes 16777216 --roots 2
check "ucx: np 3, reproducible, random delays" 3 $UCX_FLAGS -- "$BIN/reduce_check" --reproducible --random \
    --delays --iters 4 --types double,fcomplex --segsizes 4096 --counts 1,3000
check "ucx: np 2, 4 threads" 2 $UCX_FLAGS -- "$BIN/reduce_threads" 4 40
finish
