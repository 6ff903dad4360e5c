#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# Derived datatypes with misaligned elements in misaligned buffers
# (bcast_misaligned.c): Open MPI 5.0.7's convertor corrupts them when it
# resumes inside a datatype instance, so adapt2 keeps its convertor calls on
# instance boundaries and, on 5.0, moves such types as packed bytes on the
# direct path. Segments that cut instances (1000 bytes: 62.5 items of 16), the
# direct path (one segment), multi-level, both transports.
. "$(dirname "$0")/lib.sh"
P="$BIN/bcast_misaligned"
check "np 3, 1000-byte segments (edges inside items)" 3 --mca coll_adapt2_bcast_segment_size 1000 \
    --mca coll_adapt2_bcast_algorithm chain -- "$P"
check "np 4, the direct path (one segment)" 4 --mca coll_adapt2_bcast_segment_size 4194304 \
    --mca coll_adapt2_detach_max_message 0 -- "$P" --root 1
check "np 5, nodes cyclic:3, 1003-byte node segments, non-blocking" 5 --mca coll_adapt2_nodes cyclic:3 \
    --mca coll_adapt2_node_segment_size 1003 -- "$P" --root 4 --nonblocking
check "np 4, adapt2's UCX transport, 999-byte segments" 4 --mca coll_adapt2_transport ucx \
    --mca coll_adapt2_bcast_segment_size 999 -- "$P" --counts 1000,49149
finish
