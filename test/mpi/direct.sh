#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# The direct path (coll_adapt2_direct_path): blocking broadcasts and reduces
# (commutative ops) that the plan sends as one whole message with no hellos
# (up to 256 B), or up to coll_adapt2_direct_detach_max (4 KiB) with their sends left behind,
# run as plain point-to-point on the plan's tree; blocking allreduces that the plan runs by recursive
# doubling run its exchanges the same way, and so do blocking allgathers of Bruck's plan and small
# blocking reduce_scatter_blocks of commutative ops (recursive halving). Each case
# checks every byte on every rank (the programs),
# which calls took the direct path (the verbose line of each call at level
# 20, or coll_adapt2_direct_calls) and which did not.
. "$(dirname "$0")/lib.sh"

DIRECT="bcast of [0-9]+ bytes from [0-9]+: direct path"
ENGINE="bcast of [0-9]+ bytes from [0-9]+, algorithm"
V20="--mca coll_adapt2_verbose 20"

# per_rank WHAT NAME RANGE: the program's "WHAT per rank: FEWEST-MOST" line
# said RANGE.
per_rank() {
    local seen
    seen=$(sed -nE "s/.*$1 per rank: ([0-9]+-[0-9]+).*/\1/p" "$LOG")
    if [ "$seen" = "$3" ]; then
        passed=$((passed + 1)); echo "ok   $2 ($3 $1 per rank)"
    else
        failed=$((failed + 1)); echo "FAIL $2: expected $3 $1 per rank, saw ${seen:-none}"
    fi
}
# direct_calls NAME EXPECTED: the program's count of direct calls
# (coll_adapt2_direct_calls) was EXPECTED on every rank. Counted, not read
# off the verbose lines: under load mpirun may forward a rank's output in
# pieces that interleave with another rank's, so a count of lines is not exact.
direct_calls() { per_rank "direct calls" "$1" "$2-$2"; }

# calls: the calls per rank bcast_check reported.
calls() { sed -nE 's/.* ([0-9]+) calls per rank: ok/\1/p' "$LOG"; }

# all_direct NAME NP [flags] -- PROGRAM [args]: every call of the run went
# direct (bcast_check checks that adapt2 handled every call), and the
# verbose output names no call through the engine.
all_direct() {
    local name=$1
    check "$name" "${@:2}"
    grep -q "calls per rank: ok" "$LOG" || return
    direct_calls "$name: every call direct" "$(calls)"
    also_expect "$name: none through the engine" "$ENGINE" 0
}

all_direct "np 4, flat tree, contiguous and derived types (holes), every root" 4 $V20 -- \
    "$BIN/bcast_check" -t int,vector,struct -s 1,7,64 -r all
all_direct "np 7, k-nomial radix 2 (ranks receive and forward)" 7 $V20 --mca coll_adapt2_bcast_radix 2 -- \
    "$BIN/bcast_check" -t int,struct -s 1,60 -r all
all_direct "np 6, multi-level (3 nodes of 2), every root" 6 $V20 --mca coll_adapt2_nodes block:2 -- \
    "$BIN/bcast_check" -t int,vector -s 3,64 -r all
if grep -qE "$DIRECT, multi-level" "$LOG"; then
    passed=$((passed + 1)); echo "ok   multi-level plan named"
else
    failed=$((failed + 1)); echo "FAIL multi-level: no verbose line names the direct path's multi-level plan"
fi
all_direct "np 5, every tree shape, switched through MPI_T between calls" 5 $V20 -- \
    "$BIN/bcast_check" -a binomial,in_order_binomial,binary,kary,knomial,chain,pipeline,flat -t int -s 1,64 -r all

# 257 B to coll_adapt2_direct_detach_max (4 KiB; raised to 16 KiB: the
# receivers pull rendezvous data on one node), where a call may detach:
# direct, each sender's sends posted from a copy and left behind
# (c/coll_adapt2_behind.c); flat and with interior ranks that forward.
DD16K="--mca coll_adapt2_direct_detach_max 16384"
all_direct "np 4, 257 B-4 KiB (may detach): direct, sends left behind, every root" 4 $V20 -- \
    "$BIN/bcast_check" -t int,vector,struct -s 300,1000,4096 -r all
all_direct "np 4, direct_detach_max 16 KiB: 257 B-16 KiB direct, every root" 4 $V20 $DD16K -- \
    "$BIN/bcast_check" -t int,vector,struct -s 300,9000,16384 -r all
if grep -qE "$DIRECT, .*sends left behind" "$LOG"; then
    passed=$((passed + 1)); echo "ok   plan names the sends left behind"
else
    failed=$((failed + 1)); echo "FAIL no verbose line names the direct path's sends left behind"
fi
all_direct "np 7, 257 B-16 KiB, k-nomial radix 2 (interior ranks forward from a copy)" 7 $V20 $DD16K \
    --mca coll_adapt2_bcast_radix 2 -- "$BIN/bcast_check" -t int,struct -s 600,4000,12000 -r all
# Above direct_detach_max up to coll_adapt2_direct_watch_max (64 KiB), on one
# node with single copy: direct too, the sends from the message while the
# peers keep up (watch_check in detach.sh tests the turn to leaving them
# behind while a peer comes late).
WATCH0="--mca coll_adapt2_direct_watch_max 0"
all_direct "np 4, 4-64 KiB (may detach): direct, sends watched, every root" 4 $V20 -- \
    "$BIN/bcast_check" -t int,vector,struct -s 5000,16384,65536 -r all
if grep -qE "$DIRECT, .*sends watched" "$LOG"; then
    passed=$((passed + 1)); echo "ok   plan names the watched sends"
else
    failed=$((failed + 1)); echo "FAIL no verbose line names the direct path's watched sends"
fi
all_direct "np 7, 4-64 KiB, k-nomial radix 2 (interior ranks forward watching)" 7 $V20 \
    --mca coll_adapt2_bcast_radix 2 -- "$BIN/bcast_check" -t int,struct -s 9000,40000 -r all
# The ring holds coll_adapt2_detach_max_bytes in slots of the larger of
# direct_detach_max and direct_watch_max bytes (at most 512): with watching
# off a cap of 512 KiB gives 128 slots of 4 KiB (32 of 16 KiB), so that 400
# calls ahead of a late rank fill it (200 had left 1 wait in a run alone, none
# on a loaded machine); from 64 slots in use each call progresses first
# (reclaiming the completed ones).
RING="--mca coll_adapt2_detach_max_bytes 524288 $WATCH0"
for np in 3 4; do
    check "np $np, a late rank: roots and leaves run ahead, the ring fills and waits (2 KiB)" $np $RING -- \
        "$BIN/behind_check" 400 200 2048
done
check "np 4, a late rank, 12 KiB (the receivers pull)" 4 $DD16K $RING -- "$BIN/behind_check" 400 200 12288
if ompi_info --param pml ucx 2>/dev/null | grep -q "MCA pml: ucx"; then
    check "np 4, pml ucx, a late rank (2 KiB)" 4 $UCX_FLAGS $RING -- "$BIN/behind_check" 400 200 2048
fi

# Not direct: non-blocking, large enough to detach, switched off, UCX transport.
expect_output "np 4, non-blocking: through the engine" "$DIRECT" 0 4 $V20 -- \
    "$BIN/bcast_check" -t int -s 1,64 --nonblocking
expect_output "np 4, above coll_adapt2_direct_watch_max (64 KiB): through the engine" "$DIRECT" 0 4 $V20 -- \
    "$BIN/bcast_check" -t int,struct -s 70000,300000
expect_output "np 4, direct_watch_max 0: above direct_detach_max (4 KiB) through the engine" "$DIRECT" 0 4 \
    $V20 $WATCH0 -- "$BIN/bcast_check" -t int,struct -s 5000,70000
# direct_detach_max raised to 16 KiB: above 4 KiB only on one node with single copy
expect_output "np 4, direct_detach_max 16 KiB, watching off: 17 KiB and more through the engine" "$DIRECT" 0 4 \
    $V20 $DD16K $WATCH0 -- "$BIN/bcast_check" -t int,struct -s 17000,70000
expect_output "np 6, 3 nodes of 2, direct_detach_max 16 KiB: 5-16 KiB through the engine (4 KiB across nodes, no watching)" \
    "$DIRECT" 0 6 $V20 $DD16K --mca coll_adapt2_nodes block:2 -- "$BIN/bcast_check" -t int,struct -s 5000,16000 -r all
expect_output "np 4, single_copy no, direct_detach_max 16 KiB: 5-16 KiB through the engine (at most 4 KiB, no watching)" \
    "$DIRECT" 0 4 $V20 $DD16K --mca coll_adapt2_single_copy no -- "$BIN/bcast_check" -t int,struct -s 5000,16000
expect_output "np 4, direct_detach_max 0, watching off: 257 B and more (may detach) through the engine" "$DIRECT" \
    0 4 $V20 --mca coll_adapt2_direct_detach_max 0 $WATCH0 -- "$BIN/bcast_check" -t int,struct -s 300,1000
expect_output "np 4, coll_adapt2_direct_path 0: through the engine" "$DIRECT" 0 4 $V20 \
    --mca coll_adapt2_direct_path 0 -- "$BIN/bcast_check" -t int,vector -s 1,64
if grep -q "UCX: context and worker created" "$ADAPT2_BUILDDIR/.libs/mca_coll_adapt2.so" 2>/dev/null; then
    expect_output "np 4, adapt2's UCX transport: through the engine" "$DIRECT" 0 4 $V20 \
        --mca coll_adapt2_transport ucx -- "$BIN/bcast_check" -t int -s 1,64
fi
if ompi_info --param pml ucx 2>/dev/null | grep -q "MCA pml: ucx"; then
    all_direct "np 4, pml ucx, derived types, every root" 4 $V20 $UCX_FLAGS -- \
        "$BIN/bcast_check" -t int,struct -s 1,64 -r all
fi

# Allreduce: recursive doubling (auto on 2, 4 and 8 ranks below 512 B, on 4 below
# 8 KiB, on 2 up to 16 KiB here; forced on 3, 6 and 8 ranks: the pairing of the extra
# ranks). reduce_check checks
# every element against the rank-order result; with --random the blocking
# (direct) and non-blocking (engine) calls must agree bit for bit.
RC_TYPES=int,double,dcomplex,long,float_int,2int,mat2i
# rcalls [DIV]: reduce_check's calls per rank (divided by DIV).
rcalls() { echo $(($(sed -nE 's/.*, ([0-9]+) calls per rank.*: ok/\1/p' "$LOG") / ${1:-1})); }
for np in 2 4; do
    check "np $np, allreduce, every op x type, in place and not" $np -- "$BIN/reduce_check" \
        --coll allreduce --types $RC_TYPES --counts 1,3,17,31 --inplace=both
    direct_calls "np $np: every call direct" "$(rcalls)"
done
for np in 3 6 8; do
    check "np $np, allreduce forced to recursive doubling, random floats, bitwise as the engine's" $np \
        --mca coll_adapt2_allreduce_algorithm recursive_doubling -- "$BIN/reduce_check" --coll allreduce,iallreduce \
        --types double,float,mat2i --ops sum,prod,matmul --counts 1,5,60 --random --inplace=both
    direct_calls "np $np, forced: the blocking calls direct" "$(rcalls 2)"
done
# Derived types with holes: the rank packs its data and goes direct all the
# same (ranks may describe one call's data differently: layouts.sh). On 8
# ranks below 512 B direct (allreduce_recdoubling_max_bytes), 512 B and more
# through the engine; on 4 ranks below 8 KiB (allreduce_recdoubling_few_ranks_max_bytes)
# (Open MPI 4.1.4 rejects MPI_SUM on derived types unless parameter checks are off).
check "np 8, allreduce of derived types with holes, packed" 8 $V20 --mca mpi_param_check 0 -- \
    "$BIN/reduce_check" --coll allreduce --types vector:int,indexed:double,resized:int --ops sum,max \
    --sizes 8,256,512,4096 --inplace=both
# split_at BYTES: every allreduce below BYTES went direct, none from BYTES
# (the sizes of the direct lines and of the engine's plan lines).
split_at() {
    local direct engine
    direct=$(sed -nE 's/.*allreduce of ([0-9]+) bytes: direct path.*/\1/p' "$LOG" | sort -n | uniq | tr '\n' ' ')
    engine=$(sed -nE 's/.*\(cid [0-9]+\) allreduce of ([0-9]+) bytes: .*/\1/p' "$LOG" | sort -n | uniq | tr '\n' ' ')
    if [ -n "$direct" ] && awk -v d="$direct" -v e="$engine" -v b="$1" 'BEGIN {
           n = split(d, x, " "); for (i = 1; i <= n; ++i) if (x[i] >= b) exit 1
           n = split(e, y, " "); for (i = 1; i <= n; ++i) if (y[i] < b) exit 1 }'; then
        passed=$((passed + 1)); echo "ok   direct below $1 B (sizes $direct), the engine from there (sizes $engine)"
    else
        failed=$((failed + 1)); echo "FAIL split at $1 B: direct sizes: $direct; engine sizes: $engine"
    fi
}
split_at 512
check "np 4, allreduce of derived types with holes, packed" 4 $V20 --mca mpi_param_check 0 -- \
    "$BIN/reduce_check" --coll allreduce --types vector:int,indexed:double,resized:int --ops sum,max \
    --sizes 8,256,4096,8192,12000 --inplace=both
split_at 8192
check "np 6, allreduce (auto: the tree)" 6 -- "$BIN/reduce_check" --coll allreduce --types int --ops sum --counts 1,17
direct_calls "np 6: none direct" 0
# bytes_sent NAME RANGE: the program's growth of coll_adapt2_bytes_sent was
# RANGE: what the direct path adds for its calls (counted from the route,
# planned once per size).
bytes_sent() { per_rank "bytes sent" "$1" "$2"; }
check "np 8, allreduce of 100 and 200 B: the counters" 8 -- "$BIN/reduce_check" --coll allreduce --types int \
    --ops sum --counts 25,50
direct_calls "np 8: both direct" 2
bytes_sent "np 8: 3 exchanges of 100 B, then of 200 B" 900-900
check "np 4, reduce of 100 B to rank 0: the counters" 4 -- "$BIN/reduce_check" --coll reduce --types int \
    --ops sum --counts 25 --roots 0
bytes_sent "np 4, flat tree: each leaf sends 100 B, the root nothing" 0-100
check "np 4, allreduce, coll_adapt2_direct_path 0" 4 --mca coll_adapt2_direct_path 0 -- \
    "$BIN/reduce_check" --coll allreduce --types int --ops sum --counts 1,17
direct_calls "np 4, direct path off: none direct" 0

# Reduce: a commutative op up to 4 KiB (from 257 B its sends left behind) goes direct on every tree
# (flat, radix 2 with interior ranks, multi-level), derived types with holes
# packed; a non-commutative op and reproducible mode go through the engine.
RD_TYPES=int,double,dcomplex,long,float_int,2int
for np in 2 5 8; do
    check "np $np, reduce, every commutative op x type, every root, in place and not" $np -- "$BIN/reduce_check" \
        --coll reduce --types $RD_TYPES --counts 1,3,15 --inplace=both --roots all
    direct_calls "np $np: every reduce direct" "$(rcalls)"
done
check "np 7, reduce on a k-nomial tree of radix 2 (interior ranks combine and forward)" 7 \
    --mca coll_adapt2_reduce_algorithm knomial --mca coll_adapt2_bcast_radix 2 -- "$BIN/reduce_check" --coll reduce \
    --types int,double --ops sum,prod,max,modsum --counts 1,5,30 --roots all --inplace=both
direct_calls "np 7, radix 2: every reduce direct" "$(rcalls)"
check "np 6, reduce, multi-level (3 nodes of 2)" 6 --mca coll_adapt2_nodes block:2 -- "$BIN/reduce_check" \
    --coll reduce --types int,double --ops sum,max --counts 1,5,30 --roots all --inplace=both
direct_calls "np 6, multi-level: every reduce direct" "$(rcalls)"
check "np 8, reduce of 257 B-4 KiB (sends left behind), every root" 8 -- "$BIN/reduce_check" --coll reduce \
    --types $RD_TYPES --sizes 300,1024,4096 --inplace=both --roots all
direct_calls "np 8, 257 B-4 KiB: every reduce direct" "$(rcalls)"
check "np 8, direct_detach_max 16 KiB: reduces of 8-16 KiB, every root" 8 $DD16K -- "$BIN/reduce_check" \
    --coll reduce --types int,double,float_int --sizes 8192,16384 --inplace=both --roots all
direct_calls "np 8, direct_detach_max 16 KiB: every reduce direct" "$(rcalls)"
check "np 8, reduce above direct_detach_max: through the engine" 8 -- "$BIN/reduce_check" --coll reduce \
    --types int,double --sizes 4104,8192 --roots 0,5
direct_calls "np 8, above direct_detach_max: none direct" 0
check "np 4, reduce of derived types with holes, packed" 4 --mca mpi_param_check 0 -- "$BIN/reduce_check" \
    --coll reduce --types vector:int,indexed:double,resized:int --ops sum,max --counts 1,5 --roots all --inplace=both
direct_calls "np 4, derived types: every reduce direct" "$(rcalls)"
check "np 4, reduce of a non-commutative op" 4 -- "$BIN/reduce_check" --coll reduce --types mat2i --ops matmul \
    --counts 1,3 --roots all
direct_calls "np 4, non-commutative: none direct" 0
check "np 5, reduce and ireduce, reproducible: bitwise alike" 5 -- "$BIN/reduce_check" --coll reduce,ireduce \
    --types double,float --ops sum --counts 1,5,30 --random --reproducible --roots all
direct_calls "np 5, reproducible: none direct" 0

# Allgather: a blocking call that the plan gives Bruck's exchanges (all blocks
# below allgather_bruck_max_bytes, or on one node of a power of two ranks below
# allgather_direct_max_bytes) runs them direct: recursive doubling on a power of two
# ranks (in the result buffer where it is contiguous), Bruck's rotated blocks otherwise
# (in scratch, kept up to 64 KiB, allocated per call above: Bruck forced). ring_check
# checks every element and that holes stay untouched, in place or not, with send and
# receive types that differ (ints against a vector with holes); non-blocking calls take
# the engine's path.
# agcalls: the blocking allgathers per rank ring_check made.
agcalls() { sed -nE 's/.* ([0-9]+) blocking allgathers per rank/\1/p' "$LOG"; }
AG=(--colls allgather --segsizes 0)
for np in 2 4 8; do
    check "np $np, allgather, every type, in place and not, 4 B-160 KB per rank" $np -- "$BIN/ring_check" \
        "${AG[@]}" --counts 1,7,300,20000
    direct_calls "np $np: every blocking allgather direct" "$(agcalls)"
done
for np in 3 5 7; do
    check "np $np, allgather (Bruck's rotation), every type, in place and not, 4 B-2.4 KB per rank" $np -- \
        "$BIN/ring_check" "${AG[@]}" --counts 1,7,300
    direct_calls "np $np: every blocking allgather direct" "$(agcalls)"
done
check "np 5, 80-160 KB per rank: the ring (Bruck's rotation above allgather_bruck_max_bytes)" 5 -- \
    "$BIN/ring_check" "${AG[@]}" --counts 20000
direct_calls "np 5, above allgather_bruck_max_bytes: none direct" 0
check "np 5, Bruck forced, 80-160 KB per rank (scratch per call)" 5 --mca coll_adapt2_allgather_algorithm bruck -- \
    "$BIN/ring_check" "${AG[@]}" --counts 20000
direct_calls "np 5, Bruck forced: every blocking allgather direct" "$(agcalls)"
check "np 4, allgather_direct_max_bytes 0: 320 KB through the engine's ring" 4 \
    --mca coll_adapt2_allgather_direct_max_bytes 0 -- "$BIN/ring_check" "${AG[@]}" --types int --counts 20000
direct_calls "np 4, allgather_direct_max_bytes 0: none direct" 0
check "np 6, 3 nodes of 2, allgather (multi-level)" 6 --mca coll_adapt2_nodes block:2 -- "$BIN/ring_check" \
    "${AG[@]}" --counts 1,300
direct_calls "np 6, multi-level: none direct" 0
check "np 6, 3 nodes of 2, allgather Bruck forced: direct across nodes" 6 --mca coll_adapt2_nodes block:2 \
    --mca coll_adapt2_allgather_algorithm bruck -- "$BIN/ring_check" "${AG[@]}" --counts 1,300
direct_calls "np 6, Bruck forced across nodes: every blocking allgather direct" "$(agcalls)"
check "np 4, allgather, coll_adapt2_direct_path 0" 4 --mca coll_adapt2_direct_path 0 -- "$BIN/ring_check" \
    "${AG[@]}" --counts 1,300
direct_calls "np 4, allgather, direct path off: none direct" 0
if ompi_info --param pml ucx 2>/dev/null | grep -q "MCA pml: ucx"; then
    check "np 4, pml ucx, allgather, every type" 4 $UCX_FLAGS -- "$BIN/ring_check" "${AG[@]}" --counts 1,300,20000
    direct_calls "np 4, pml ucx: every blocking allgather direct" "$(agcalls)"
    check "np 5, pml ucx, allgather (Bruck's rotation), every type" 5 $UCX_FLAGS -- "$BIN/ring_check" "${AG[@]}" \
        --counts 1,300
    direct_calls "np 5, pml ucx: every blocking allgather direct" "$(agcalls)"
fi

# Reduce_scatter_block: a blocking call of a commutative op (MPI_SUM, MPI_MAX and a
# commutative user op), 16 KiB at most in all, that the plan runs by recursive halving
# runs its exchanges direct (farthest partner first, the extra ranks of a p that is not
# a power of two paired first); the non-commutative user ops, non-blocking calls, larger
# calls and reproducible mode take the engine's path. ring_check checks every element,
# in place and not, and that holes stay untouched (ints, doubles, a vector with holes).
# rsbcalls: the blocking reduce_scatter_blocks of commutative ops per rank ring_check made.
rsbcalls() { sed -nE 's/.* ([0-9]+) blocking reduce_scatter_blocks of commutative ops per rank/\1/p' "$LOG"; }
RSB=(--colls rsb --segsizes 0)
for np in 2 3 4 5 8; do
    check "np $np, reduce_scatter_block, every type and op, in place and not, up to 800 B per rank" $np \
        --mca mpi_param_check 0 -- "$BIN/ring_check" "${RSB[@]}" --counts 1,7,100
    direct_calls "np $np: every blocking commutative reduce_scatter_block direct" "$(rsbcalls)"
done
check "np 6, 3 nodes of 2, reduce_scatter_block: direct across nodes" 6 --mca coll_adapt2_nodes block:2 \
    --mca mpi_param_check 0 -- "$BIN/ring_check" "${RSB[@]}" --counts 1,100
direct_calls "np 6, across nodes: every blocking commutative reduce_scatter_block direct" "$(rsbcalls)"
check "np 4, reduce_scatter_block of 20-40 KB in all: through the engine" 4 -- "$BIN/ring_check" "${RSB[@]}" \
    --types int,double --counts 1250
direct_calls "np 4, above 16 KiB: none direct" 0
check "np 4, reduce_scatter_block, reproducible: through the engine" 4 --mca coll_adapt2_reproducible 1 -- \
    "$BIN/ring_check" "${RSB[@]}" --types int,double --counts 1,100
direct_calls "np 4, reproducible: none direct" 0
check "np 4, reduce_scatter_block, coll_adapt2_direct_path 0" 4 --mca coll_adapt2_direct_path 0 -- \
    "$BIN/ring_check" "${RSB[@]}" --types int --counts 1,100
direct_calls "np 4, reduce_scatter_block, direct path off: none direct" 0
if ompi_info --param pml ucx 2>/dev/null | grep -q "MCA pml: ucx"; then
    check "np 5, pml ucx, reduce_scatter_block, every type and op" 5 $UCX_FLAGS --mca mpi_param_check 0 -- \
        "$BIN/ring_check" "${RSB[@]}" --counts 1,100
    direct_calls "np 5, pml ucx: every blocking commutative reduce_scatter_block direct" "$(rsbcalls)"
fi

# Multi-level (3 nodes of 2) with derived types with holes, sizes from the
# direct path's (packed by the rank) to segmented large messages (the
# engine's), over pml ob1 and pml ucx, and adapt2's own UCX transport (never
# direct). Every element checked on every rank.
ML_TYPES=vector:int,indexed:double,resized:int
ML_SIZES=8,200,4096,1048576
for pml in ob1 ucx; do
    flags=(--mca coll_adapt2_nodes block:2 --mca mpi_param_check 0)
    if [ $pml = ucx ]; then
        ompi_info --param pml ucx 2>/dev/null | grep -q "MCA pml: ucx" || continue
        flags+=($UCX_FLAGS)
    fi
    check "np 6, multi-level, pml $pml, reduce and allreduce of derived types, 8 B-1 MiB" 6 "${flags[@]}" -- \
        "$BIN/reduce_check" --coll reduce,allreduce --types $ML_TYPES --ops sum --sizes $ML_SIZES --roots 0,5
    # direct: the reduces of 8, 200 and 4096 B (the last with its send left behind), 3 types x 3
    # sizes x 2 roots (np 6: the allreduce is the tree)
    direct_calls "np 6, multi-level, pml $pml: the reduces up to 4 KiB direct" 18
    check "np 6, multi-level, pml $pml, bcast of derived types, 1-4 KiB left behind and 1 MiB, every root" 6 \
        "${flags[@]}" -- "$BIN/bcast_check" -t vector,struct -s 1000,4096,1048576 -r all
done
if grep -q "UCX: context and worker created" "$ADAPT2_BUILDDIR/.libs/mca_coll_adapt2.so" 2>/dev/null; then
    check "np 4, adapt2's UCX transport, reduce and allreduce" 4 --mca coll_adapt2_transport ucx -- \
        "$BIN/reduce_check" --coll reduce,allreduce --types int,double --ops sum --counts 1,17 --roots 0,3
    direct_calls "np 4, adapt2's UCX transport: none direct" 0
fi

# Among outstanding non-blocking and detaching calls, on two communicators.
check "np 4, interleaved with Ibcast, Iallreduce and detaching Bcast" 4 -- "$BIN/direct_mix" 2 40
check "np 5, knomial radix 2, interleaved (allreduce: the tree)" 5 --mca coll_adapt2_bcast_radix 2 -- \
    "$BIN/direct_mix" 1 30
check "np 4, direct path off: none counted" 4 --mca coll_adapt2_direct_path 0 -- "$BIN/direct_mix" 0 10
finish
