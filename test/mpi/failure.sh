#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# A failure inside adapt2 on one rank ends the job: the failing rank says
# which rank, which call and why, and aborts, so its peers (which are in the
# same call, waiting for it) never hang. One rank is given
# coll_adapt2_inject_send_failure=N (its Nth send fails, as a broken link
# would); the others run normally. Where every rank is given it, each failing
# rank may report before the job ends, and none may wait for a peer first.
. "$(dirname "$0")/lib.sh"

# expect_abort NAME NP PATTERN N [flags] -- PROGRAM [args]: rank 0 (of NP) has
# its Nth send fail (every rank, where N is all:N); the job must end non-zero,
# well before the timeout, printing PATTERN (extended regex) once (at least
# once, with all:N).
expect_abort() {
    local name=$1 np=$2 pattern=$3 nth=${4#all:} every=false
    [ "$4" != "$nth" ] && every=true
    shift 4
    local flags=()
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do flags+=("$1"); shift; done
    shift
    local start=$SECONDS rc=0 ranks=(-np 1 -x OMPI_MCA_coll_adapt2_inject_send_failure="$nth" "$@" : -np $((np - 1)))
    if $every; then
        ranks=(-np "$np" -x OMPI_MCA_coll_adapt2_inject_send_failure="$nth")
    fi
    timeout -k 5 60 "$MPIRUN" $MPI_FLAGS "${flags[@]}" "${ranks[@]}" "$@" >"$LOG" 2>&1 || rc=$?
    local took=$((SECONDS - start)) seen
    seen=$(grep -cE -- "$pattern" "$LOG")
    if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $rc -ne 137 ] && [ "$seen" -ge 1 ] &&
        { [ "$seen" -eq 1 ] || $every; } && [ $took -lt 30 ]; then
        record_pass "$name (exit $rc after $took s)"
    else
        record_fail "$name: exit $rc after $took s, $seen lines matching /$pattern/:"
    fi
}

WHY="coll:adapt2: a collective on MPI_COMM_WORLD failed on world rank 0: rank 0 of"
SEND="posting a send of [0-9]+ bytes \(peer [0-9]+, segment [0-9]+\) failed with error"
expect_abort "bcast, flat" 4 "$WHY 4, bcast #[0-9]+ of [0-9]+ bytes \(root 0\): $SEND.*aborting the job" 3 \
    -- "$BIN/bcast_check" -t int -s 1000000 -r 0
expect_abort "bcast, direct path (eager: blocking sends)" 4 "coll:adapt2: MPI_Bcast on MPI_COMM_WORLD failed on world rank 0: rank 0 of 4, bcast of [0-9]+ bytes \(root 0\) on the direct path: sending to its child, rank [1-3] failed with error -?[0-9]+.*aborting the job" 2 \
    -- "$BIN/bcast_check" -t int -s 4 -r 0
expect_abort "bcast, direct path (8000 B, no detaching: sends posted, then waited for)" 4 "coll:adapt2: MPI_Bcast on MPI_COMM_WORLD failed on world rank 0: rank 0 of 4, bcast of 8000 bytes \(root 0\) on the direct path: posting the send to its child, rank [1-3] failed with error -?[0-9]+.*aborting the job" 2 \
    --mca coll_adapt2_detach_max_message 0 -- "$BIN/bcast_check" -t int -s 8000 -r 0
expect_abort "allreduce, direct path (recursive doubling)" 4 "coll:adapt2: MPI_Allreduce on MPI_COMM_WORLD failed on world rank 0: rank 0 of 4, allreduce of [0-9]+ bytes on the direct path: exchange [12] of 2 \(posting it\) with rank [12] failed with error -?[0-9]+.*aborting the job" 2 \
    -- "$BIN/reduce_check" --coll allreduce --ops sum --types int --counts 3
expect_abort "reduce, direct path (a leaf)" 4 "coll:adapt2: MPI_Reduce on MPI_COMM_WORLD failed on world rank 0: rank 0 of 4, reduce of [0-9]+ bytes \(root 3\) on the direct path: sending to its parent, rank 3 failed with error -?[0-9]+.*aborting the job" 1 \
    -- "$BIN/reduce_check" --coll reduce --ops sum --types int --counts 3 --roots 3
expect_abort "bcast, direct path, sends left behind (1000 B)" 4 "coll:adapt2: MPI_Bcast on MPI_COMM_WORLD failed on world rank 0: rank 0 of 4, bcast of 1000 bytes \(root 0\) on the direct path: posting the send to its child, rank [1-3] failed with error -?[0-9]+.*aborting the job" 3 \
    -- "$BIN/bcast_check" -t int -s 1000 -r 0
expect_abort "reduce, direct path, send left behind (a leaf, 2000 B)" 4 "coll:adapt2: MPI_Reduce on MPI_COMM_WORLD failed on world rank 0: rank 0 of 4, reduce of [0-9]+ bytes \(root 3\) on the direct path: sending to its parent, rank 3 failed with error -?[0-9]+.*aborting the job" 1 \
    -- "$BIN/reduce_check" --coll reduce --ops sum --types int --counts 500 --roots 3
expect_abort "allgather, direct path (recursive doubling)" 4 "coll:adapt2: MPI_Allgather on MPI_COMM_WORLD failed on world rank 0: rank 0 of 4, allgather of [0-9]+ bytes on the direct path: exchange [12] of 2 \(posting the send\) with rank [12] failed with error -?[0-9]+.*aborting the job" 2 \
    -- "$BIN/ring_check" --colls allgather --types int --counts 7 --segsizes 0
expect_abort "allgather, direct path (Bruck's forced, 300 KB: scratch per call)" 5 "coll:adapt2: MPI_Allgather on MPI_COMM_WORLD failed on world rank 0: rank 0 of 5, allgather of [0-9]+ bytes on the direct path: exchange [1-3] of 3 \(posting the send\) with rank [1-4] failed with error -?[0-9]+.*aborting the job" 3 \
    --mca coll_adapt2_allgather_algorithm bruck -- "$BIN/ring_check" --colls allgather --types int --counts 15000 \
    --segsizes 0
expect_abort "reduce_scatter_block, direct path (recursive halving)" 4 "coll:adapt2: MPI_Reduce_scatter_block on MPI_COMM_WORLD failed on world rank 0: rank 0 of 4, reduce_scatter_block of [0-9]+ bytes on the direct path: exchange [12] of 2 \(posting it\) with rank [12] failed with error -?[0-9]+.*aborting the job" 2 \
    -- "$BIN/ring_check" --colls rsb --types int --ops sum --counts 5 --segsizes 0
expect_abort "allgather, the linear exchange (np 6, 80 KB per rank)" 6 "$WHY 6, allgather .*$SEND" 2 \
    -- "$BIN/ring_check" --colls allgather --types int --counts 20000 --segsizes 0
expect_abort "bcast, multi-level, struct with holes" 6 "$WHY 6, bcast .*$SEND" 5 \
    --mca coll_adapt2_nodes block:2 -- "$BIN/bcast_cut" --counts 70000
expect_abort "reduce, non-root" 4 "$WHY 4, reduce .*$SEND" 2 \
    -- "$BIN/reduce_check" --coll reduce --ops sum --types int --counts 300000 --roots 3
expect_abort "iallreduce, ring" 4 "$WHY 4, allreduce .*$SEND" 2 \
    -- "$BIN/reduce_check" --coll iallreduce --ops sum --types int --counts 300000 --allreduce-algorithms ring
expect_abort "allreduce, multi-level tree" 4 "$WHY 4, allreduce .*$SEND" 4 \
    --mca coll_adapt2_nodes block:2 -- "$BIN/reduce_check" --coll allreduce --ops sum --types double --counts 300000 --allreduce-algorithms tree
ALL="coll:adapt2: MPI_[A-Za-z_]+ on MPI_COMM_WORLD failed on world rank [0-9]: rank [0-9] of 4, "
expect_abort "every rank's first send fails: allreduce, direct path (each waits on the other)" 4 "${ALL}allreduce of [0-9]+ bytes on the direct path: exchange 1 of 2 \(posting it\).*aborting the job" all:1 \
    -- "$BIN/reduce_check" --coll allreduce --ops sum --types int --counts 25
expect_abort "every rank's first send fails: reduce_scatter_block, direct path" 4 "${ALL}reduce_scatter_block of [0-9]+ bytes on the direct path: exchange 1 of 2 \(posting it\).*aborting the job" all:1 \
    -- "$BIN/ring_check" --colls rsb --types int --ops sum --counts 5 --segsizes 0
expect_abort "every rank's first send fails: allgather, direct path" 4 "${ALL}allgather of [0-9]+ bytes on the direct path: exchange 1 of 2 \(posting the send\).*aborting the job" all:1 \
    -- "$BIN/ring_check" --colls allgather --types int --counts 7 --segsizes 0
expect_abort "every rank's first send fails: allreduce, the engine" 4 "coll:adapt2: a collective on MPI_COMM_WORLD failed on world rank [0-9]: rank [0-9] of 4, allreduce .*$SEND" all:1 \
    -- "$BIN/reduce_check" --coll allreduce --ops sum --types int --counts 300000
finish
