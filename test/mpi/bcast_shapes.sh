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
# shared memory without single copy (coll_adapt2_single_copy no): from 64 KiB the two
# trees inside a node, flat and multi-level, in segments sized for their
# depth (8 KiB at these sizes); every rank's plan line is checked
expect_output "np 6, no single copy: two trees of segments" \
    "bcast of 300000 bytes, root [0-9]: two_tree, 8192-byte segments; halves of .*rule: auto, shared memory without single copy" \
    $((6 * 6)) 6 --mca coll_adapt2_single_copy no --mca coll_adapt2_verbose 20 -- \
    "$BIN/bcast_check" -t int -s 1,65535,300007 -r all
also_expect "np 6, no single copy: below 64 KiB the wide tree" \
    "bcast of 65528 bytes, root [0-9]: knomial:8, one message" $((6 * 6))
for transport in "" "$UCX_FLAGS" "--mca coll_adapt2_transport ucx"; do
    expect_output "np 8, nodes block:4, no single copy, derived types${transport:+, $transport}" \
        "bcast of 2000000 bytes, root 5: multi-level \\(nodes pipeline, NUMA flat, cores two_tree, a lane per half\\)" 8 8 \
        --mca coll_adapt2_single_copy no --mca coll_adapt2_nodes block:4 --mca coll_adapt2_verbose 20 $transport -- \
        "$BIN/bcast_check" -t int,struct,vector -s 1,70001,300007,2000003 -r 0,5 -n
done
# lanes (from 512 KiB each half enters a node by its own rank, topology.h) on
# uneven nodes: one of one rank, odd and even counts, round-robin placement
for nodes in list:0,1,1,1,1,2,2,3,3 cyclic:3; do
    check "np 9, nodes $nodes, no single copy, lanes, every root" 9 --mca coll_adapt2_single_copy no \
        --mca coll_adapt2_nodes $nodes -- "$BIN/bcast_check" -t int,struct -s 65536,600001,2000003 -r all
done
finish
