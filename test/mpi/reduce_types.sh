#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# Derived datatypes whose elements are one predefined type (contiguous,
# vector, indexed, resized with a trailing hole) with predefined ops: every
# unit checked, and every hole of the receive buffer must be left untouched.
# MPI_IN_PLACE at the root (reduce) and on all ranks (allreduce). Small
# segments and windows, and a staging pool capped at 0.
#
# Open MPI 4.1.4's argument checks reject predefined ops on derived datatypes
# ("not defined for non-intrinsic datatypes"), so those cases run with
# mpi_param_check 0.
. "$(dirname "$0")/lib.sh"
NOCHECK="--mca mpi_param_check 0"
DERIVED=contig:int,vector:int,indexed:double,resized:int,vector:dcomplex,indexed:bool,contig:ldouble

check "np 3, derived types, every op, reduce (every root) and ireduce" 3 $NOCHECK -- \
    "$BIN/reduce_check" --types $DERIVED --coll reduce,ireduce --segsizes 4096 --inplace=both
check "np 3, contiguous derived types, allreduce and iallreduce" 3 $NOCHECK -- \
    "$BIN/reduce_check" --types contig:int,contig:dcomplex,contig:ldouble --coll allreduce,iallreduce \
    --segsizes 4096 --inplace=both
check "spec: allreduce of non-contiguous derived types (vector, indexed, resized), not in place" 3 $NOCHECK -- \
    "$BIN/reduce_check" --types vector:int,indexed:double,resized:int,vector:dcomplex --coll allreduce,iallreduce \
    --segsizes 4096 --allreduce-algorithms tree,ring
check "np 4, non-contiguous derived types, allreduce in place" 4 $NOCHECK -- \
    "$BIN/reduce_check" --types vector:int,indexed:double,resized:int --coll allreduce,iallreduce \
    --segsizes 4096 --allreduce-algorithms tree,ring --inplace
check "np 5, in place, every type class, every root" 5 -- \
    "$BIN/reduce_check" --segsizes 4096 --inplace --types int,double,fcomplex,bool,byte,double_int,ldouble_int
check "np 4, derived types, pool capped at 0, small segments and windows" 4 $NOCHECK \
    --mca coll_adapt2_pool_max_bytes 0 -- "$BIN/reduce_check" --types vector:int,indexed:double \
    --coll reduce,ireduce --segsizes 1000,4096 --windows 1:1,2:64 --counts 1,1000,$((9000 / BIG_DIV + 1)) --roots 0,3 --inplace=both
check "np 8, vector of doubles, $((8388608 / BIG_DIV)) bytes, reduce" 8 $NOCHECK -- \
    "$BIN/reduce_check" --types vector:double --ops sum --coll reduce,ireduce --sizes $((8388608 / BIG_DIV)) --roots 6
# The staging pool capped at nothing: every reduce gets the buffers of one
# slot (an overdraft) and still completes a 64 MiB message, every element checked.
check "np 4, $((67108864 / BIG_DIV))-byte reduce and allreduce, pool capped at 0" 4 --mca coll_adapt2_pool_max_bytes 0 -- \
    "$BIN/reduce_check" --types int --ops sum --sizes $((67108864 / BIG_DIV)) --roots 1 --coll reduce,allreduce
check "np 2, nested vectors in place, 725-byte segments ending inside elements (fuzzer)" 2 $NOCHECK \
    --mca coll_adapt2_nodes block:1 --mca coll_adapt2_topology_segment_size 725 \
    --mca coll_adapt2_pool_max_bytes 1048576 -- "$BIN/reduce_nested"
check "np 3, nested vectors in place, flat, 725-byte segments" 3 $NOCHECK \
    --mca coll_adapt2_allreduce_segment_size 725 -- "$BIN/reduce_nested" 5000
finish
