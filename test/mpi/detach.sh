#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# Decoupled ("detached") completion: a bcast's root and interior ranks and a
# reduce's non-roots complete once their data is in adapt2's private copy.
# detach_check (see its header) proves it causally: a rank sleeping in place
# of a call enters it only after the ranks that must not wait for it posted
# (in shared memory) that they returned; send buffers are trashed and freed
# at once and every element is checked; MPI_T counters must agree.
. "$(dirname "$0")/lib.sh"
NOCHECK="--mca mpi_param_check 0" # Open MPI 4.1.4 rejects MPI_SUM on derived types
OFF="--mca coll_adapt2_detach_max_message 0"
CAP="--mca coll_adapt2_detach_max_bytes 262144"
PT="--mca coll_adapt2_progress_thread 1"
D="$BIN/detach_check"
W="$BIN/watch_check"
# (detach_check turns watching off itself: what it proves, that detaching
# ranks never wait for a late peer, holds for every call only then;
# watch_check, h. below, tests watching.)

# Under the sanitizers (FULL=0, see lib.sh) one case of each kind runs.

# a. sleeping ranks in back-to-back calls; allreduce and user ops never detach
for np in $(sweep 4 8); do
    check "np $np, delayed ranks: root / non-roots return before the sleeper enters" $np -- "$D" -t delay
done
check "np 5, bcast radix 2 (interior ranks detach), reduce radix 2" 5 --mca coll_adapt2_bcast_radix 2 \
    --mca coll_adapt2_bcast_segment_size 65536 -- "$D" -t delay -n 32
# b. buffers trashed and freed at return: blocking, non-blocking, vector types
for np in $(sweep 5 8); do
    check "np $np, buffer reuse after return (bcast, ibcast, reduce, ireduce, vector types)" $np $NOCHECK -- \
        "$D" -t reuse -n 32
done
full_only && check "np 4, buffer reuse, 64 KiB segments, windows 1" 4 $NOCHECK --mca coll_adapt2_bcast_segment_size 65536 \
    --mca coll_adapt2_reduce_segment_size 65536 --mca coll_adapt2_send_window 1 \
    --mca coll_adapt2_recv_window 1 -- "$D" -t reuse -n 24
# c. long interleaved sequences on three communicators
for np in $(sweep 5 8); do
    check "np $np, 300 calls on dup, parity split and reversed split" $np -- "$D" -t comms
done
full_only && check "np 4, 300 calls, binomial trees, 64 KiB segments" 4 --mca coll_adapt2_bcast_algorithm binomial \
    --mca coll_adapt2_reduce_algorithm binomial --mca coll_adapt2_bcast_segment_size 65536 -- "$D" -t comms
# d. the per-communicator cap
check "np 4, cap 256 KiB: calls refused detaching, data right" 4 $CAP -- "$D" -t cap --refused yes
# (the case has every sender send straight to the sleeping root: the flat tree, which auto
# no longer takes for reduces on more than 4 ranks from 512 B)
full_only && check "np 8, cap 256 KiB: calls refused detaching, data right" 8 $CAP \
    --mca coll_adapt2_reduce_algorithm flat -- "$D" -t cap --refused yes
full_only && check "np 5, default cap (8 MiB): nothing refused" 5 -- "$D" -t cap --refused no
# e. MPI_Comm_free / MPI_Comm_disconnect / MPI_Finalize with detached work in flight
# (every rank sends its 64 KiB reduce straight to the sleeping root: the flat tree. With
# auto's binary tree only the root's children do, so the other ranks' frees may return at
# once; the decision-table check's allgather, which waited for the sleeper's first call on
# the communicator, had hidden that until the check became sends to rank 0)
for np in $(sweep 5 8); do
    expect_output "np $np, free, disconnect and finalize with detached calls in flight" \
        "received the final data|finalizing with [1-9][0-9]* detached calls" 2 $np \
        --mca coll_adapt2_reduce_algorithm flat -- "$D" -t finalize
done
# f. the progress thread combines while the application computes
check "np 4, MPI_THREAD_MULTIPLE + progress thread: the root completes while rank 1 computes" 4 $PT -- \
    "$D" -t thread --thread multiple
full_only && check "np 8, MPI_THREAD_MULTIPLE + progress thread, 1 ms polls" 8 $PT \
    --mca coll_adapt2_progress_interval_us 1000 -- "$D" -t thread --thread multiple -n 40
check "np 3, MPI_THREAD_SINGLE (thread asked for, not started): root waits for rank 1's next call" 3 $PT -- \
    "$D" -t thread --thread single
check "np 5, MPI_THREAD_MULTIPLE, no progress thread: root waits for rank 1's next call" 5 -- \
    "$D" -t thread --thread multiple -n 30
# g. detaching off, and limited to 64 KiB
check "np 4, detach_max_message 0: nothing detaches, roots wait" 4 $OFF -- "$D" -t delay --expect coupled -n 16
full_only && check "np 8, detach_max_message 0: 300 calls on 3 communicators" 8 $OFF -- "$D" -t comms --expect coupled
check "np 5, detach_max_message 65535: 64 KiB and 1 MiB calls wait, 4 KiB ones detach" 5 $NOCHECK \
    --mca coll_adapt2_detach_max_message 65535 -- "$D" -t reuse --expect limited -n 24

# h. watching broadcast roots and reduce leaves of the root (await from 1 MiB,
# as with more ranks than cores; a grace period longer than scheduling
# jitter): no copy in step, wait for the first late peer, copy while it lags
# behind, watch again after 8 calls in step
# Broadcasts of up to coll_adapt2_direct_watch_max (64 KiB) on one node watch
# on the direct path (their copies go to the send-behind ring); with it 0
# the engine's root watches.
WATCH="--mca coll_adapt2_detach_await_min_bytes 1048576 --mca coll_adapt2_detach_grace_us 100000"
FLAT="--mca coll_adapt2_reduce_algorithm flat"
ENGINE="--mca coll_adapt2_direct_watch_max 0"
for np in $(sweep 4 8); do
    check "np $np, a watching root on the direct path: copies only while a child lags behind (16 KiB)" $np \
        $WATCH -- "$W" 16384 400
    check "np $np, a watching root (the engine's): copies only while a child lags behind (64 KiB)" $np $WATCH \
        $ENGINE -- "$W" 65536 400
    check "np $np, watching reduce leaves: copy only while the root lags behind (64 KiB)" $np $WATCH $FLAT -- \
        "$W" 65536 400 16 reduce
done
full_only && check "np 3, a watching root, 512 KiB" 3 $WATCH -- "$W" 524288 400
full_only && check "np 3, watching reduce leaves, 512 KiB" 3 $WATCH $FLAT -- "$W" 524288 400 16 reduce
full_only && check "pml ucx: np 4, a watching root (the engine's)" 4 $UCX_FLAGS $WATCH $ENGINE -- "$W" 65536 400
check "pml ucx: np 4, a watching root on the direct path (64 KiB)" 4 $UCX_FLAGS $WATCH -- "$W" 65536 400
full_only && check "np 7, k-nomial radix 2 (the late child forwards): a watching root on the direct path (32 KiB)" 7 $WATCH \
    --mca coll_adapt2_bcast_radix 2 -- "$W" 32768 400 16 bcast 4
# multi-level (two emulated nodes): the late rank is the other node's leader
check "np 4, 2 nodes, a watching root (segmented, multi-level)" 4 $WATCH --mca coll_adapt2_nodes block:2 -- \
    "$W" 65536 400 16 bcast 2
full_only && check "pml ucx: np 4, 2 nodes, a watching root" 4 $UCX_FLAGS $WATCH --mca coll_adapt2_nodes block:2 -- \
    "$W" 65536 400 16 bcast 2
full_only && check "pml ucx: np 4, watching reduce leaves" 4 $UCX_FLAGS $WATCH $FLAT -- "$W" 65536 400 16 reduce
expect_failure "np 4, watching off (detach_watch_min_bytes 1 GiB): the root copies in step, and the test says so" \
    "watch_check A: the broadcast root copied" 4 $WATCH $ENGINE --mca coll_adapt2_detach_watch_min_bytes 1073741824 \
    -- "$W" 65536 400
expect_failure "np 4, direct path, sends always left behind (direct_detach_max 16 KiB): the root copies in step, \
and the test says so" "watch_check A: the broadcast root copied" 4 $WATCH --mca coll_adapt2_direct_detach_max 16384 \
    -- "$W" 16384 400
expect_failure "np 4, watching off: reduce leaves copy in step, and the test says so" "watch_check A: a reduce leaf copied" \
    4 $WATCH $FLAT --mca coll_adapt2_detach_watch_min_bytes 1073741824 -- "$W" 65536 400 16 reduce

if ompi_info --param pml ucx 2>/dev/null | grep -q "MCA pml: ucx"; then
    full_only && check "ucx: np 4, delayed ranks" 4 $UCX_FLAGS -- "$D" -t delay -n 32
    check "ucx: np 5, buffer reuse" 5 $UCX_FLAGS $NOCHECK -- "$D" -t reuse -n 24
    full_only && check "ucx: np 8, 300 calls on 3 communicators" 8 $UCX_FLAGS -- "$D" -t comms
    full_only && check "ucx: np 4, cap 256 KiB" 4 $UCX_FLAGS $CAP -- "$D" -t cap --refused yes
    expect_output "ucx: np 4, free, disconnect and finalize with detached calls in flight" \
        "received the final data|finalizing with [1-9][0-9]* detached calls" 2 4 $UCX_FLAGS \
        --mca coll_adapt2_reduce_algorithm flat -- "$D" -t finalize
    full_only && check "ucx: np 4, progress thread" 4 $UCX_FLAGS $PT -- "$D" -t thread --thread multiple -n 30
else
    echo "SKIP: this Open MPI has no pml ucx"
fi
# adapt2's own UCX transport (its first call on a new communicator exchanges
# addresses, so it waits for every rank: the cases start on MPI_COMM_WORLD,
# whose engine exists before)
if grep -q "UCX: context and worker created" "$ADAPT2_BUILDDIR/.libs/mca_coll_adapt2.so" 2>/dev/null; then
    T="--mca coll_adapt2_transport ucx"
    check "adapt2 UCX transport: np 4, delayed ranks" 4 $T -- "$D" -t delay -n 32
    full_only && check "adapt2 UCX transport: np 5, buffer reuse" 5 $T $NOCHECK -- "$D" -t reuse -n 24
    full_only && check "adapt2 UCX transport: np 5, 300 calls on 3 communicators" 5 $T -- "$D" -t comms
    full_only && check "adapt2 UCX transport: np 4, cap 256 KiB" 4 $T $CAP -- "$D" -t cap --refused yes
    check "adapt2 UCX transport: np 4, MPI_THREAD_SINGLE, the progress thread drives adapt2's worker" 4 $T $PT \
        -- "$D" -t thread --thread single --progress yes -n 30
else
    echo "SKIP: adapt2 was built without UCX"
fi
finish
