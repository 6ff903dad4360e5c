#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# The same checks under pml ucx (forced: without InfiniBand Open MPI picks ob1).
. "$(dirname "$0")/lib.sh"

if ! ompi_info --param pml ucx 2>/dev/null | grep -q "MCA pml: ucx"; then
    echo "SKIP: this Open MPI has no pml ucx"
    exit 77
fi
check "ucx: np 4, every root, all types" 4 $UCX_FLAGS -- "$BIN/bcast_check" -s 1,65535,65537,1048576
# Small segments and wide send windows: pml ucx lets a send posted from a
# completion callback overtake pending ones, which adapt2's tag cycle and
# span windows must survive (this case corrupted data before they existed).
check "ucx: np 5, all shapes, small segments, wide windows" 5 $UCX_FLAGS -- "$BIN/bcast_check" \
    -a binomial,in_order_binomial,binary,kary,knomial,chain,pipeline,flat -g 100,1000,0 \
    -w 1:1,4:2,2:64 -t int,vector -s 1,70001
check "ucx: np 4, outstanding ibcasts" 4 $UCX_FLAGS -- "$BIN/bcast_outstanding" 16 4
check "ucx: np 4, 16 MiB, deep tree" 4 $UCX_FLAGS --mca coll_adapt2_bcast_radix 2 -- "$BIN/bcast_check" -s 16777216 -t byte,vector -r 2
check "ucx: np 2, 4 threads" 2 $UCX_FLAGS -- "$BIN/bcast_threads" 4 40
finish
