#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# The latency path allocates nothing (test/mpi/alloc_check.c): blocking and
# non-blocking bcast, reduce and allreduce below coll_adapt2_detach_min_message
# make no heap allocation on any rank once warm, over pml ob1 and pml ucx,
# every result checked. The control run keeps no schedules
# (coll_adapt2_schedule_cache 0) and no direct path (coll_adapt2_direct_path
# 0: its broadcasts build no schedule) and must see allocations in every
# call: the counter sees the component's. The direct allgather's scratch
# comes from pools too (--allgather).
. "$(dirname "$0")/lib.sh"

if [ -n "${ADAPT2_ASAN_RUNTIME:-}" ]; then
    # the sanitizer runtime owns malloc: alloc_check's counting allocator cannot
    echo "skipped under the sanitizers (they replace malloc)"
    exit 77
fi
A="$BIN/alloc_check"
check "ob1, np 4, 256 bytes" 4 -- "$A" --bytes 256
check "ob1, np 3, 4 bytes" 3 -- "$A" --bytes 4 --calls 300
check "ucx, np 4, 128 bytes" 4 $UCX_FLAGS -- "$A" --bytes 128 --calls 300
check "ob1, np 4, 2 KiB with coll_adapt2_detach_min_message 2048" 4 \
    --mca coll_adapt2_detach_min_message 2048 -- "$A" --bytes 2048 --calls 300
# The direct allgather into a result with holes gathers in scratch: the
# route's up to 64 KiB, the staging pool's above (it had been a malloc per call).
check "allgather, ob1, np 4, 64 KiB per rank into holes" 4 -- "$A" --allgather --bytes 65536 --calls 100
check "allgather, ob1, np 3 (Bruck's, rotated), 40,000 bytes per rank into holes" 3 \
    --mca coll_adapt2_allgather_algorithm bruck -- "$A" --allgather --bytes 40000 --calls 100
check "allgather, ucx, np 4, 256 KiB per rank into holes" 4 $UCX_FLAGS -- "$A" --allgather --bytes 262144 --calls 50
check "control: no schedule cache, allocations seen" 4 --mca coll_adapt2_schedule_cache 0 \
    --mca coll_adapt2_direct_path 0 -- \
    "$A" --bytes 256 --calls 100 --expect-allocations
finish
