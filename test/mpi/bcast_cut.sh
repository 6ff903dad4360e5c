#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# Segment edges inside predefined elements (bcast_cut.c): the reproductions of
# issue 13 on multi-level and flat trees, both transports, odd segment sizes.
. "$(dirname "$0")/lib.sh"
P="$BIN/bcast_cut"
check "np 4, nodes block:2 (struct with holes, 70000)" 4 --mca coll_adapt2_nodes block:2 -- "$P"
check "np 10, nodes block:2, root 5 (own layouts per rank)" 10 --mca coll_adapt2_nodes block:2 -- "$P" --counts 65530,70000 --root 5
full_only && check "np 10, nodes block:5, root 5, non-blocking" 10 --mca coll_adapt2_nodes block:5 -- "$P" --counts 65530 --root 5 --nonblocking
full_only && check "np 10, nodes block:2, adapt2's UCX transport" 10 --mca coll_adapt2_nodes block:2 --mca coll_adapt2_transport ucx -- "$P" --counts 65530 --root 5
check "np 5, pml ucx, odd segments, deep chain" 5 $UCX_FLAGS --mca coll_adapt2_bcast_algorithm chain \
    --mca coll_adapt2_bcast_segment_size 999 --mca coll_adapt2_recv_window 64 -- "$P" --counts 1000,70001 --root 2
full_only && check "np 5, cyclic:2, 1003-byte segments, no detach" 5 --mca coll_adapt2_nodes cyclic:2 \
    --mca coll_adapt2_topology_segment_size 1003 --mca coll_adapt2_detach_max_message 0 -- "$P" --counts 20001 --root 4
finish
