#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# MPI_THREAD_MULTIPLE: 4 threads per rank, each on its own communicator.
. "$(dirname "$0")/lib.sh"

check "np 2, 4 threads" 2 -- "$BIN/bcast_threads" 4 60
check "np 4, 4 threads, deep tree, small segments" 4 --mca coll_adapt2_bcast_radix 2 \
    --mca coll_adapt2_bcast_segment_size 8192 -- "$BIN/bcast_threads" 4 40
finish
