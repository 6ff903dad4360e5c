#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# User-defined operations. Non-commutative: the product of 2x2 matrices (int
# and double entries, over MPI_Type_contiguous(4, ...)) must equal the serial
# left-to-right product in rank order, for every root and np 2 to 8, reduce
# and allreduce, blocking and not. Commutative: a sum modulo 65521. Then the
# calls adapt2 hands to the previous component: a user-defined op on a
# non-contiguous derived datatype, a derived datatype built from a pair type
# with holes, and algorithm "previous" (they must show in coll_adapt2_fallbacks, not in
# the reduce/allreduce counters).
. "$(dirname "$0")/lib.sh"

for np in $(sweep 3 2 4 5 6 7 8); do  # the sanitizer subset: np 3
    check "np $np, non-commutative matrix product, every root, around 4 KiB segments" $np -- \
        "$BIN/reduce_check" --types mat2i,mat2d --ops matmul --segsizes 4096
done
check "np 5, non-commutative, in place, contiguous derived type of matrices" 5 -- \
    "$BIN/reduce_check" --types mat2i,contig:mat2i --ops matmul --segsizes 4096 --inplace=both
check "np 4, commutative user op (sum modulo 65521), plain and contiguous derived" 4 -- \
    "$BIN/reduce_check" --types unsigned,contig:unsigned,dup:unsigned --ops modsum --segsizes 4096 --inplace=both
check "np 8, both user ops, $((3145728 / BIG_DIV)) bytes" 8 -- \
    "$BIN/reduce_check" --types mat2i,unsigned --ops matmul,modsum --sizes $((3145728 / BIG_DIV)) --roots 0,6

# Fallbacks. reduce_check predicts per call which component the spec gives it
# to; with --expect previous every call must fall back.
check "np 4, user ops on non-contiguous derived types go to the previous component" 4 -- \
    "$BIN/reduce_check" --types vector:unsigned,indexed:mat2i,resized:mat2d --ops modsum,matmul \
    --counts 1,5,3000 --inplace=both
check "np 3, user op on a vector type, --expect previous" 3 -- \
    "$BIN/reduce_check" --types vector:unsigned --ops modsum --counts 1,4097 --expect previous
check "np 3, algorithm previous (reduce and allreduce)" 3 -- \
    "$BIN/reduce_check" --types int,mat2i,double_int --algorithms previous --allreduce-algorithms previous \
    --counts 1,5000 --expect previous
check "np 3, reduce algorithm previous, allreduce still adapt2's" 3 -- \
    "$BIN/reduce_check" --types int,mat2i --algorithms previous --counts 1,5000
# Predefined ops on derived types pass Open MPI 4.1.4's argument checks only
# with mpi_param_check 0, and its own components (tuned) then combine only
# the first unit of each element: the results of these fallbacks are wrong
# whoever runs them, so only the counters are checked here.
check "derived datatypes of pair types with holes go to the previous component" 3 \
    --mca mpi_param_check 0 -- "$BIN/reduce_check" \
    --types contig:double_int,vector:long_int,contig:short_int,indexed:ldouble_int --counters-only --counts 1,100
# Pairs without holes (MPI_2INT, MPI_FLOAT_INT) pack to their memory layout,
# so adapt2 combines derived types of them itself: their values are checked.
check "derived datatypes of pair types without holes are adapt2's, values checked" 3 \
    --mca mpi_param_check 0 -- "$BIN/reduce_check" --types contig:2int,vector:float_int --counts 1,100,3000
finish
