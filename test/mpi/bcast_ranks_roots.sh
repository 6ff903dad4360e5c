#!/bin/bash
# Every root at np 2, 3, 4 and 8; every datatype (bytes, int, double, vector,
# struct with holes, mixed (count, datatype) pairs); counts around the segment
# size; then messages up to 16 MiB.
. "$(dirname "$0")/lib.sh"

for np in 2 3 4 8; do
    check "np $np, every root, all types, around the segment size" $np -- "$BIN/bcast_check"
done
check "np 4, 16 MiB, all types" 4 -- "$BIN/bcast_check" -s 16777216 -r 0,3
check "np 8, 16 MiB" 8 -- "$BIN/bcast_check" -s 16777216,4194305 -t int,mixed -r 0,5,7
finish
