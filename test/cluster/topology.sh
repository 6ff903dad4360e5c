#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# Multi-level trees on 4 emulated nodes x 2 ranks (real nodes: hostnames,
# vader inside a node, TCP between): bcast, reduce and allreduce with block
# and round-robin mapping, every element checked on every rank, and the
# broadcasts' inter-node segments counted against the minimum, nodes-1 per
# segment (test/mpi/topology_check.c, "real" mode). SKIP where namespaces
# cannot be created.
. "$ADAPT2_SRCDIR/test/mpi/lib.sh"
. "$ADAPT2_SRCDIR/test/cluster/lib.sh"
MPIRUN=$ADAPT2_SRCDIR/contrib/cluster/mpirun
PROG="$BIN/topology_check"

cluster_up 4
check "4 nodes x 2, block mapping" 8 -- "$PROG" real
expect_output "4 nodes x 2, round-robin mapping, chain between nodes (verbose: 4 real nodes seen)" \
    "8 rank\(s\) on 4 node\(s\); multi-level trees apply" 16 8 --map-by node --mca coll_adapt2_node_algorithm chain \
    --mca coll_adapt2_verbose 10 -- "$PROG" real
check "4 nodes x 2, block, 1 MiB messages between nodes" 8 \
    --mca coll_adapt2_node_segment_size 1048576 -- "$PROG" real
finish
