#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# Multi-level trees on one host, with node boundaries declared by hand
# (coll_adapt2_nodes): block and round-robin placements, uneven nodes,
# world/split/dup communicators; data checked on every rank and the
# broadcasts' inter-node segments counted against the minimum (nodes-1 per
# segment). Then what the verbose output says, and a malformed value.
. "$(dirname "$0")/lib.sh"
PROG="$BIN/topology_check"
# Under the sanitizers (FULL=0, see lib.sh) the cases that only repeat a
# layout or check messages are skipped.

# (the sanitizer subset: the uneven cyclic layout below stands for these; block:2 runs with
# the verbose checks at the end)
full_only && check "8 ranks, nodes cyclic:4" 8 --mca coll_adapt2_nodes cyclic:4 -- "$PROG" cyclic:4
full_only && check "5 ranks, uneven nodes block:2" 5 --mca coll_adapt2_nodes block:2 -- "$PROG" block:2
check "6 ranks, uneven nodes cyclic:4, node tree chain" 6 --mca coll_adapt2_nodes cyclic:4 \
    --mca coll_adapt2_node_algorithm chain -- "$PROG" cyclic:4
full_only && check "8 ranks, block:4, unsegmented" 8 --mca coll_adapt2_nodes block:4 \
    --mca coll_adapt2_topology_segment_size 0 -- "$PROG" block:4
full_only && check "8 ranks, block:2, 1 MiB messages between nodes" 8 --mca coll_adapt2_nodes block:2 \
    --mca coll_adapt2_node_algorithm pipeline --mca coll_adapt2_node_segment_size 1048576 -- "$PROG" block:2
full_only && check "7 ranks, cyclic:3, 64 KiB between nodes, 256 KiB inside" 7 --mca coll_adapt2_nodes cyclic:3 \
    --mca coll_adapt2_node_segment_size 65536 -- "$PROG" cyclic:3
# Many nodes (14 of one rank each): two trees between nodes from 300,000
# bytes (2 segments of 256 KiB: more nodes than 2 x 2 + 8), in segments sized by
# node_message_cost (32 KiB over 14 nodes, depth 4), data and inter-node
# segments counted; the plan line of world's root-0 broadcasts of that size on
# every rank (3 calls each).
expect_output "14 ranks on 14 nodes: two trees between nodes, counted" \
    "\(cid 0\) bcast of 300000 bytes, root 0: multi-level \(nodes two_tree.*32768-byte segments; halves" 42 \
    14 --mca coll_adapt2_nodes block:1 --mca coll_adapt2_verbose 20 -- "$PROG" block:1
# world and its dup: 8 ranks on 4 nodes each, once per rank
if full_only; then # one run (8 ranks, nodes block:2, data checked), two reports checked
    expect_output "8 ranks, nodes block:2; verbose: layout reported" "8 rank\(s\) on 4 node\(s\) \(declared by coll_adapt2_nodes\); multi-level trees apply" \
        16 8 --mca coll_adapt2_nodes block:2 --mca coll_adapt2_verbose 10 -- "$PROG" block:2
    also_expect "verbose: inter-node sends reported" "sent [0-9]+ segment\(s\), [0-9]+ byte\(s\) to other nodes \(4 nodes\)" 24
fi
# A malformed layout is reported with the parameter's name; Open MPI's view
# (one host) is used, where every count is 0.
expect_output "malformed coll_adapt2_nodes reported" "invalid value 'block:x' for MCA parameter coll_adapt2_nodes" \
    4 4 --mca coll_adapt2_nodes block:x --mca coll_adapt2_verbose 1 -- "$PROG" block:4
finish
