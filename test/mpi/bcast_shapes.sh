#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# Every tree shape with several segment sizes and windows (switched at run
# time through MPI_T), every root; two trees between node leaders.
. "$(dirname "$0")/lib.sh"

shapes=binomial,in_order_binomial,binary,kary,knomial,chain,pipeline,flat,two_tree
for np in 5 8; do
    check "np $np, all shapes x segment sizes x windows" $np -- "$BIN/bcast_check" \
        -a $shapes -g 1000,65536,0 -w 1:1,4:2,64:8 -t int,vector -s 1,999,1000,1001,300007
done
check "np 7, shape parameters" 7 --mca coll_adapt2_bcast_fanout 2 --mca coll_adapt2_bcast_radix 3 \
    --mca coll_adapt2_bcast_chains 3 -- "$BIN/bcast_check" -a kary,knomial,chain -t int,struct -s 1,65537,500000
# two trees between node leaders: each half down its own tree of nodes, the
# same trees inside nodes (multi-level plans, docs/design.md "Two trees")
check "np 8, nodes block:2, two trees between nodes" 8 --mca coll_adapt2_nodes block:2 \
    --mca coll_adapt2_node_algorithm two_tree -- "$BIN/bcast_check" -t int,struct -s 1,70001,300007 -r all
check "np 9, uneven nodes, two trees between nodes, 4 KiB segments, non-blocking" 9 \
    --mca coll_adapt2_nodes list:0,1,1,1,1,2,2,3,3 --mca coll_adapt2_node_algorithm two_tree \
    --mca coll_adapt2_topology_segment_size 4096 -- "$BIN/bcast_check" -t int,vector -s 1,999,300007 -r all -n
finish
