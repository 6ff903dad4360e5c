#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# Non-contiguous datatypes through the staging pool: small segments, a pool
# far below one message (every call overdraws one buffer), and different
# (count, datatype) pairs with one signature across ranks.
. "$(dirname "$0")/lib.sh"
DEEP="--mca coll_adapt2_bcast_radix 2"  # auto then segments (a flat tree would not)

check "np 3, derived types, small segments" 3 $DEEP -- "$BIN/bcast_check" -t vector,struct,mixed -g 1000,4096 -s 1,4095,4096,4097,1000000
check "np 4, pool cap 0" 4 $DEEP --mca coll_adapt2_pool_max_bytes 0 -- "$BIN/bcast_check" -t vector,mixed -s 1,300000
check "np 4, mixed pairs, 16 MiB, non-blocking" 4 -- "$BIN/bcast_check" -t mixed,struct -s 16777216 -r 1 --nonblocking
finish
