#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# Every tree shape with several segment sizes and windows (switched at run
# time through MPI_T), every root.
. "$(dirname "$0")/lib.sh"

shapes=binomial,in_order_binomial,binary,kary,knomial,chain,pipeline,flat,two_tree
for np in 5 8; do
    check "np $np, all shapes x segment sizes x windows" $np -- "$BIN/bcast_check" \
        -a $shapes -g 1000,65536,0 -w 1:1,4:2,64:8 -t int,vector -s 1,999,1000,1001,300007
done
check "np 7, shape parameters" 7 --mca coll_adapt2_bcast_fanout 2 --mca coll_adapt2_bcast_radix 3 \
    --mca coll_adapt2_bcast_chains 3 -- "$BIN/bcast_check" -a kary,knomial,chain -t int,struct -s 1,65537,500000
finish
