#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# coll_adapt2_reproducible 1: floating-point SUM and PROD of values that do
# not combine exactly (random mantissas, magnitudes 2^-20..2^20) must give
# bitwise identical results over repetitions with random per-rank delays (so
# that arrival orders vary), between the blocking and non-blocking call, on
# every rank for allreduce, and between separate runs (digests compared).
# Results are also checked against a rounding-error bound of the exact sum.
. "$(dirname "$0")/lib.sh"
DIGESTS=$(mktemp -d)
trap 'rm -rf "$DIGESTS" "$LOG" "$RANKS"' EXIT
FLOATS=float,double,ldouble,fcomplex,dcomplex,ldcomplex

# same_digests NAME A B: two runs' digests must match.
same_digests() {
    if [ -s "$2" ] && cmp -s "$2" "$3"; then
        passed=$((passed + 1))
        echo "ok   $1"
    else
        failed=$((failed + 1))
        echo "FAIL $1: spec: coll_adapt2_reproducible: results differ between runs"
        paste "$2" "$3" 2>/dev/null | sed 's/^/    /'
    fi
}

for seed in 1 2; do
    check "np 4, reproducible, every floating type, random delays (run $seed)" 4 -- \
        "$BIN/reduce_check" --reproducible --random --delays --seed $seed --iters 4 --types $FLOATS \
        --segsizes 4096 --counts 1,5,1000,3000 --roots 0,3 --digest "$DIGESTS/a$seed"
done
same_digests "np 4, reproducible: two runs give the same bits" "$DIGESTS/a1" "$DIGESTS/a2"
for seed in 1 2; do
    check "np 8, reproducible, 2 MiB, default segments (run $seed)" 8 -- \
        "$BIN/reduce_check" --reproducible --random --delays --seed $seed --iters 3 --types double \
        --ops sum --sizes 2097152 --roots 5 --digest "$DIGESTS/b$seed"
done
same_digests "np 8, reproducible, 2 MiB: two runs give the same bits" "$DIGESTS/b1" "$DIGESTS/b2"
check "np 5, reproducible, every reduce tree and allreduce algorithm" 5 -- \
    "$BIN/reduce_check" --reproducible --random --delays --iters 3 --types double,fcomplex \
    --algorithms binomial,in_order_binomial,binary,kary,knomial,chain,pipeline,flat \
    --allreduce-algorithms tree,ring --segsizes 1024 --counts 1,700,5000 --roots 0,4
check "np 3, reproducible, small windows, in place" 3 -- \
    "$BIN/reduce_check" --reproducible --random --delays --iters 5 --types double,ldouble \
    --windows 1:1 --segsizes 2048 --counts 3,2000 --inplace
finish
