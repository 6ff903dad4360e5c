#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# coll_adapt2_rules: a decision table from a file (engine/rules.h, docs/rules.md).
# Its lines decide (each call names the line in the verbose output), `previous`
# hands calls on, a parameter the user set wins, a bad or missing file is
# reported with its line and the built-in rules stay, and ranks whose tables
# differ are named by rank 0.
. "$(dirname "$0")/lib.sh"
DIR="${ADAPT2_SRCDIR:-$(dirname "$0")/../..}/test/mpi/rules"
GOOD="$DIR/good.rules"

# 4 allreduces of at most 64 KiB per rank (1 and 1000 ints, and the checker's two: the
# fewest and most direct calls of any rank, and its errors), 3 ranks: every one planned
# by line 5 (the direct path's line or the engine's names the rule).
expect_output "allreduce by the table's line, every element" \
    "rule: $GOOD:5: allreduce 2-64 \* 0-64K algorithm=recursive_doubling\)" 12 3 \
    --mca coll_adapt2_rules "$GOOD" --mca coll_adapt2_verbose 20 -- \
    "$BIN/reduce_check" --coll allreduce --types int --ops sum --counts 1,1000
check "reduce and ireduce handed on by 'previous' (counters), every element" 3 --mca coll_adapt2_rules "$GOOD" -- \
    "$BIN/reduce_check" --coll reduce,ireduce --types int,double --ops sum,max --expect previous
check "a reduce algorithm the user set wins over the table" 3 --mca coll_adapt2_rules "$GOOD" \
    --mca coll_adapt2_reduce_algorithm binomial -- "$BIN/reduce_check" --coll reduce --types int --ops sum
expect_output "bcast on the table's chain, every byte" "chain:2, 1024-byte segments.*rule: $GOOD:6:" 18 3 \
    --mca coll_adapt2_rules "$GOOD" --mca coll_adapt2_verbose 20 -- "$BIN/bcast_check" --sizes 100000 --roots 0
# pairs.rules: 2 ranks take the latency (detach_max_message=0: no hellos), so each
# 1000-byte broadcast of the checker runs as one plain message on the direct path
expect_output "a pair's bcast without detaching (the direct path), every byte" \
    "bcast of 1000 bytes from 0: direct path.*rule: $DIR/pairs.rules:5: bcast 2 \* 257- detach_max_message=0\)" 6 2 \
    --mca coll_adapt2_rules "$DIR/pairs.rules" --mca coll_adapt2_verbose 20 -- "$BIN/bcast_check" --sizes 1000 --roots 0
expect_output "a bad line is reported with its number, the built-in rules used" \
    "invalid value '.*bad.rules' for MCA parameter coll_adapt2_rules \(.*bad.rules:3: unknown algorithm 'bogus' .*; using the built-in rules" \
    2 2 --mca coll_adapt2_rules "$DIR/bad.rules" -- "$BIN/reduce_check" --coll allreduce --types int --ops sum --counts 5
expect_output "a missing file is reported" "coll_adapt2_rules \(/nonexistent.rules: cannot be read\)" 2 2 \
    --mca coll_adapt2_rules /nonexistent.rules -- "$BIN/reduce_check" --coll allreduce --types int --ops sum --counts 5
# Rank 2 reads another file: rank 0 names it (the calls made plan alike, so the run ends;
# a short timeout, should they not).
TIMEOUT=60 expect_output "ranks with different tables are named" \
    "the decision tables differ between ranks .*rank 0's \(.*good.rules, fingerprint [0-9a-f]+\) is not that of rank\(s\) 2;" 1 \
    3 --mca coll_adapt2_rules "$GOOD" -- sh -c 'if [ "$OMPI_COMM_WORLD_RANK" = 2 ]; then
        export OMPI_MCA_coll_adapt2_rules="$0"; fi; exec "$@"' "$DIR/other.rules" "$BIN/ring_check" --colls allgather \
    --counts 1,100 --segsizes 0
# Once every check is over, its progress callback leaves opal_progress (each
# rank once: ring_check's calls are on MPI_COMM_WORLD alone), so later MPI
# calls of the application no longer run it.
expect_output "the check's progress callback is unregistered when it is over" \
    "no decision-table check in flight: its progress callback is off" 3 3 --mca coll_adapt2_verbose 20 -- \
    "$BIN/ring_check" --colls allgather --counts 1,100 --segsizes 0
finish
