#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# MPI_Ibcast: the full matrix non-blocking, then many outstanding calls on
# three communicators waited in random order.
. "$(dirname "$0")/lib.sh"

for np in 3 4 8; do
    check "np $np, ibcast, every root, all types" $np -- "$BIN/bcast_check" --nonblocking
done
check "np 4, 16 outstanding ibcasts on 3 communicators" 4 -- "$BIN/bcast_outstanding" 16 6
check "np 5, deep tree, small segments, ibcast every root" 5 --mca coll_adapt2_bcast_radix 2 \
    --mca coll_adapt2_bcast_segment_size 4096 -- "$BIN/bcast_check" --nonblocking -t int,vector,mixed
check "np 8, 16 outstanding ibcasts on 3 communicators, deep tree" 8 --mca coll_adapt2_bcast_radix 2 \
    --mca coll_adapt2_bcast_segment_size 65536 -- "$BIN/bcast_outstanding" 16 3
check "np 3, 48 outstanding, small windows" 3 --mca coll_adapt2_recv_window 1 --mca coll_adapt2_send_window 1 \
    -- "$BIN/bcast_outstanding" 48 2
finish
