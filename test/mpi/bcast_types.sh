#!/bin/bash
# Non-contiguous datatypes through the staging pool: small segments, a pool
# far below one message (every call overdraws one buffer), and different
# (count, datatype) pairs with one signature across ranks.
. "$(dirname "$0")/lib.sh"

check "np 3, derived types, small segments" 3 -- "$BIN/bcast_check" -t vector,struct,mixed -g 1000,4096 -s 1,4095,4096,4097,1000000
check "np 4, pool cap 0" 4 --mca coll_adapt2_pool_max_bytes 0 -- "$BIN/bcast_check" -t vector,mixed -s 1,300000
check "np 4, mixed pairs, 16 MiB, non-blocking" 4 -- "$BIN/bcast_check" -t mixed,struct -s 16777216 -r 1 --nonblocking
finish
