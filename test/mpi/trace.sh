#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# coll_adapt2_trace: every rank writes its file at MPI_Finalize; each rank's
# events match what its place in the tree implies; contrib/adapt2-trace turns
# the files into Chrome trace JSON and a PNG timeline.
. "$(dirname "$0")/lib.sh"
DIR=$(mktemp -d)
trap 'rm -rf "$DIR" "$LOG" "$RANKS"' EXIT

# A binomial bcast of 1,000,000 bytes in 65,536-byte segments (16 segments)
# at np 4 from root 0: ranks 1-3 each receive 16 segments; rank 0 sends
# 16 to each of its 2 children, rank 2 16 to its one.
check "np 4, traced bcast" 4 --mca coll_adapt2_trace "$DIR/run" --mca coll_adapt2_bcast_algorithm binomial \
    --mca coll_adapt2_bcast_segment_size 65536 -- "$BIN/bcast_check" -t int -s 1000000 -r 0
count() { # FILE EVENT [SEGMENTS]: events of the first bcast call (call 0 of MPI_COMM_WORLD, comm 0),
    # of data segments (>= 0) or of hello messages (-1, detach.h)
    awk -F, -v ev="$2" -v hello="${3:-data}" '$4 == "bcast" && $3 == 0 && $5 == 0 && $6 == ev &&
        ((hello == "hello") == ($8 == -1))' "$1" | wc -l
}
expect_count() { # RANK EVENT COUNT [hello]
    local got
    got=$(count "$DIR/run.$1.csv" "$2" "$4")
    if [ "$got" -eq "$3" ]; then passed=$((passed + 1)); else
        failed=$((failed + 1)); echo "FAIL rank $1: $got '$2' ${4:-data} events, expected $3"; fi
}
for r in 1 2 3; do expect_count $r arrived 16; done
expect_count 0 arrived 0
expect_count 0 sent 32
expect_count 2 sent 16
expect_count 1 sent 0
for r in 0 1 2 3; do expect_count $r call_done 1; done
# The call may detach (1 MB <= coll_adapt2_detach_max_message): the root's
# children 2 and 1 say hello to it; rank 3, a child of 2, does not.
expect_count 0 arrived 2 hello
expect_count 2 sent 1 hello
expect_count 1 sent 1 hello
expect_count 3 sent 0 hello

if python3 "$ADAPT2_SRCDIR/contrib/adapt2-trace" "$DIR/run" --out "$DIR/tl" >"$LOG" 2>&1 &&
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert any(e['ph']=='f' for e in d['traceEvents'])" "$DIR/tl.json" &&
    [ -s "$DIR/tl.png" ]; then
    passed=$((passed + 1)); echo "ok   adapt2-trace wrote Chrome JSON (with transfer arrows) and a PNG"
else
    failed=$((failed + 1)); echo "FAIL adapt2-trace:"; cat "$LOG"
fi
if python3 "$ADAPT2_SRCDIR/contrib/adapt2-trace" "$DIR/none" >"$LOG" 2>&1; then
    failed=$((failed + 1)); echo "FAIL adapt2-trace accepted a prefix without files"
else
    passed=$((passed + 1)); echo "ok   adapt2-trace refuses a prefix without files"
fi
finish
