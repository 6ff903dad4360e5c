#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# Every reduce tree (binomial, in-order binomial, binary, k-ary, k-nomial,
# chains, pipeline, flat, two trees: halves up each) and the allreduce algorithms (tree, on one
# tree or two, ring, recursive doubling, Rabenseifner's), switched
# at run time through MPI_T, with several segment sizes and windows: every
# element checked, commutative and non-commutative ops, and no name rejected
# (adapt2 reports invalid values instead of failing).
. "$(dirname "$0")/lib.sh"
RALG=binomial,in_order_binomial,binary,kary,knomial,chain,pipeline,flat,two_tree

expect_output "np 5, every reduce tree x segments x windows" "invalid value" 0 5 -- \
    "$BIN/reduce_check" --coll reduce,ireduce --algorithms $RALG --segsizes 1024,0 \
    --windows 1:1,2:64 --types int,double,mat2i,double_int --ops sum,max,matmul,maxloc \
    --counts 1,1023,1025,20000 --roots 0,3
expect_output "np 8, every reduce tree, every root" "invalid value" 0 8 -- \
    "$BIN/reduce_check" --coll reduce,ireduce --algorithms $RALG --segsizes 4096 \
    --types float,mat2i --ops sum,matmul --counts 1,1025,9000
expect_output "np 3, every reduce tree, every root, in place" "invalid value" 0 3 -- \
    "$BIN/reduce_check" --coll reduce,ireduce --algorithms $RALG --segsizes 4096 \
    --types dcomplex,mat2d --ops prod,matmul --counts 1,300 --inplace=both
for np in 2 5 8; do
    expect_output "np $np, allreduce tree and ring x segments x windows" "invalid value" 0 $np -- \
        "$BIN/reduce_check" --coll allreduce,iallreduce --allreduce-algorithms tree,ring,auto \
        --segsizes 1024,0 --windows 1:1,4:2 --types int,double,mat2i,bool,short_int \
        --ops sum,min,matmul,lor,minloc --counts 1,7,1025,20001 --inplace=both
done
# Two trees between node leaders: each half up its own multi-level tree.
check "np 8, nodes block:2, reduce up two trees between nodes" 8 --mca coll_adapt2_nodes block:2 \
    --mca coll_adapt2_node_algorithm two_tree -- "$BIN/reduce_check" --coll reduce,ireduce \
    --types int,double,double_int --ops sum,max,maxloc --counts 1,1025,100000 --roots 0,5 --inplace=both
# Two trees in the tree allreduce: each half reduced up its tree and
# broadcast down it again, flat and between node leaders.
for np in 5 8; do
    check "np $np, tree allreduce on two trees" $np --mca coll_adapt2_reduce_algorithm two_tree -- \
        "$BIN/reduce_check" --coll allreduce,iallreduce --allreduce-algorithms tree --segsizes 1024,0 \
        --types int,double,double_int --ops sum,max,maxloc --counts 1,2,1025,100000 --inplace=both
done
expect_output "np 8, nodes block:2, tree allreduce up and down two trees between nodes" \
    "each up and down its tree" 16 8 --mca coll_adapt2_nodes block:2 --mca coll_adapt2_node_algorithm two_tree \
    --mca coll_adapt2_verbose 20 -- "$BIN/reduce_check" --coll allreduce --allreduce-algorithms tree \
    --types int --ops sum --counts 100000
# The ring splits messages into np blocks: counts below, at and around np.
expect_output "np 7, ring, counts around the number of ranks" "invalid value" 0 7 -- \
    "$BIN/reduce_check" --coll allreduce,iallreduce --allreduce-algorithms ring --segsizes 64,4096 \
    --types int,dcomplex --ops sum,prod --counts 1,6,7,8,13,14,15,50
# Recursive doubling: p not a power of two (pre and post steps), in place,
# the non-commutative matrix product in rank order, blocking and not.
for np in 3 5 8; do
    check "np $np, recursive doubling allreduce" $np -- \
        "$BIN/reduce_check" --coll allreduce,iallreduce --allreduce-algorithms recursive_doubling \
        --types int,double,mat2i --ops sum,matmul --counts 1,1000 --inplace=both
done
# Rabenseifner's: pairs when p is not a power of two, fewer elements than
# ranks (empty blocks), the matrix product and maxloc in rank order, worked
# in the result buffer or (derived types with holes) a pool buffer, in place,
# blocking and not; auto picks it at 256 KiB on 8 ranks.
for np in 3 6 8; do
    check "np $np, Rabenseifner allreduce" $np --mca mpi_param_check 0 -- \
        "$BIN/reduce_check" --coll allreduce,iallreduce --allreduce-algorithms rabenseifner \
        --types int,double,mat2i,double_int,vector:int,indexed:double --ops sum,matmul,maxloc,max \
        --counts 1,7,1000,100003 --inplace=both
done
expect_output "np 8, auto takes Rabenseifner's at 256 KiB" "allreduce of 262144 bytes: Rabenseifner" 8 8 \
    --mca coll_adapt2_verbose 20 -- "$BIN/reduce_check" --coll allreduce --types int --ops sum --counts 65536
# Across nodes placed in blocks auto picks it at 256 KiB.
expect_output "np 8, nodes block:2, auto takes Rabenseifner's, nearest partners first" \
    "allreduce of 262144 bytes: Rabenseifner.*nearest partners first" 8 8 --mca coll_adapt2_nodes block:2 \
    --mca coll_adapt2_verbose 20 -- "$BIN/reduce_check" --coll allreduce --types int --ops sum --counts 65536
check "np 6, nodes block:2, Rabenseifner allreduce" 6 --mca coll_adapt2_nodes block:2 --mca mpi_param_check 0 -- \
    "$BIN/reduce_check" --coll allreduce,iallreduce --allreduce-algorithms rabenseifner,auto \
    --types int,mat2i,vector:int,double_int --ops sum,matmul,maxloc --counts 1,7,100003 --inplace=both
# the tree allreduce on two trees inside the nodes of a multi-level plan:
# each half up and down its own tree at every level that has two trees
expect_output "np 8, nodes block:4, tree allreduce, two trees inside nodes" \
    "allreduce of 800012 bytes: fused tree.*cores two_tree.*halves of" $((8 * 8)) 8 --mca mpi_param_check 0 \
    --mca coll_adapt2_verbose 20 --mca coll_adapt2_allreduce_algorithm tree --mca coll_adapt2_reduce_algorithm two_tree \
    --mca coll_adapt2_nodes block:4 -- "$BIN/reduce_check" --coll allreduce,iallreduce --ops sum,max,maxloc,matmul \
    --types int,vector:int,indexed:double,double_int,mat2i --counts 1,7,30001,200003 --inplace=both
# shared memory without single copy: an MPI_Reduce from 64 KiB on more than 2
# ranks goes up the two trees, flat and inside nodes (a lane per half from
# 512 KiB); every rank's plan line of the 800 KB calls is checked, then the
# data for every root, derived types, in place and non-blocking
expect_output "np 6, no single copy: reduce up two trees of segments" \
    "reduce of 800000 bytes, root [05]: two_tree, 16384-byte segments; halves of .*rule: auto, reduce, shared memory without single copy" \
    $((6 * 2)) 6 --mca coll_adapt2_single_copy no --mca coll_adapt2_verbose 20 -- \
    "$BIN/reduce_check" --coll reduce --types int --ops sum --counts 200000 --roots 0,5
expect_output "np 8, nodes block:4, no single copy: reduce with a lane per half" \
    "reduce of 800000 bytes, root [05]: multi-level \\(nodes pipeline, NUMA flat, cores two_tree, a lane per half\\)" \
    $((8 * 2)) 8 --mca coll_adapt2_single_copy no --mca coll_adapt2_nodes block:4 --mca coll_adapt2_verbose 20 -- \
    "$BIN/reduce_check" --coll reduce --types int --ops sum --counts 200000 --roots 0,5
for nodes in "" list:0,1,1,1,1,2,2,3,3; do
    check "np 9${nodes:+, nodes $nodes}, no single copy, reduce on two trees, three roots" 9 \
        --mca coll_adapt2_single_copy no ${nodes:+--mca coll_adapt2_nodes $nodes} --mca mpi_param_check 0 -- \
        "$BIN/reduce_check" --coll reduce,ireduce --types int,vector:int,double_int --ops sum,maxloc,matmul \
        --counts 7,20000,200003 --roots 0,4,8 --inplace=both
done
finish
