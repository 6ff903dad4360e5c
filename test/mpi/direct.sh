#!/bin/bash
# The direct path (coll_adapt2_direct_path): blocking broadcasts that the plan
# sends as one whole message with no hellos run as plain point-to-point on
# the plan's tree. Each case checks every byte on every rank (the programs),
# which calls took the direct path (the verbose line of each call at level
# 20, or coll_adapt2_direct_calls) and which did not.
. "$(dirname "$0")/lib.sh"

DIRECT="bcast of [0-9]+ bytes from [0-9]+: direct path"
ENGINE="bcast of [0-9]+ bytes from [0-9]+, algorithm"
V20="--mca coll_adapt2_verbose 20"

# calls NP: the calls per rank bcast_check reported, times NP (every rank logs each).
calls() { echo $(($(sed -nE 's/.* ([0-9]+) calls per rank: ok/\1/p' "$LOG") * $1)); }

# all_direct NAME NP [flags] -- PROGRAM [args]: every call of the run went direct.
all_direct() {
    local name=$1 np=$2
    check "$name" "${@:2}"
    grep -q "calls per rank: ok" "$LOG" || return
    also_expect "$name: every call direct" "$DIRECT" "$(calls "$np")"
    also_expect "$name: none through the engine" "$ENGINE" 0
}

all_direct "np 4, flat tree, contiguous and derived types (holes), every root" 4 $V20 -- \
    "$BIN/bcast_check" -t int,vector,struct -s 1,7,64 -r all
all_direct "np 7, k-nomial radix 2 (ranks receive and forward)" 7 $V20 --mca coll_adapt2_bcast_radix 2 -- \
    "$BIN/bcast_check" -t int,struct -s 1,60 -r all
all_direct "np 6, multi-level (3 nodes of 2), every root" 6 $V20 --mca coll_adapt2_nodes block:2 -- \
    "$BIN/bcast_check" -t int,vector -s 3,64 -r all
also_expect "multi-level plan named" "direct path, multi-level" "$(calls 6)"
all_direct "np 5, every tree shape, switched through MPI_T between calls" 5 $V20 -- \
    "$BIN/bcast_check" -a binomial,in_order_binomial,binary,kary,knomial,chain,pipeline,flat -t int -s 1,64 -r all

# Not direct: non-blocking, large enough to detach, switched off, UCX transport.
expect_output "np 4, non-blocking: through the engine" "$DIRECT" 0 4 $V20 -- \
    "$BIN/bcast_check" -t int -s 1,64 --nonblocking
expect_output "np 4, 257 B and more (may detach): through the engine" "$DIRECT" 0 4 $V20 -- \
    "$BIN/bcast_check" -t int,struct -s 300,1000,70000
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

# Among outstanding non-blocking and detaching calls, on two communicators.
check "np 4, interleaved with Ibcast and detaching Bcast" 4 -- "$BIN/direct_mix" 1 40
check "np 5, knomial radix 2, interleaved" 5 --mca coll_adapt2_bcast_radix 2 -- "$BIN/direct_mix" 1 30
check "np 4, direct path off: none counted" 4 --mca coll_adapt2_direct_path 0 -- "$BIN/direct_mix" 0 10
finish
