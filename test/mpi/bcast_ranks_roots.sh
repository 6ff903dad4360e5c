#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# Every root at np 2, 3, 4 and 8; every datatype (bytes, int, double, vector,
# struct with holes, mixed (count, datatype) pairs); counts around the segment
# size; then messages up to 16 MiB.
. "$(dirname "$0")/lib.sh"

# As users get it (auto: a flat k-nomial tree, unsegmented, at these sizes) ...
for np in 2 3 4 8; do
    check "np $np, every root, all types" $np -- "$BIN/bcast_check"
done
# ... and with radix 2, where auto builds a deep tree and segments.
DEEP="--mca coll_adapt2_bcast_radix 2"
for np in 3 8; do
    check "np $np, deep auto tree, every root, all types, around the segment size" $np $DEEP -- "$BIN/bcast_check"
done
check "np 4, 16 MiB, all types" 4 -- "$BIN/bcast_check" -s 16777216 -r 0,3
check "np 8, 16 MiB, deep tree" 8 $DEEP -- "$BIN/bcast_check" -s 16777216,4194305 -t int,mixed -r 0,5,7
finish
