#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# Leaks of a --enable-sanitizers build under MPI (make check-sanitizers):
# LeakSanitizer at exit of every rank, with full stacks, after broadcasts of
# derived types over multi-level trees, reductions with user ops, detached
# calls and communicators freed with work in flight (pml ob1; LeakSanitizer
# cannot stop pml ucx's threads). Only Open MPI's own start-up allocations are
# suppressed (lsan.supp). A run whose only failure is LeakSanitizer's own
# tracer crashing at exit runs again, at most twice (lib.sh, lsan_tool_fault).
# Skipped (77) in other builds.
[ -n "${ADAPT2_ASAN_RUNTIME:-}" ] || { echo "not a --enable-sanitizers build: skipped"; exit 77; }
export ADAPT2_LSAN=1
. "$(dirname "$0")/lib.sh"
check "bcast of derived types, multi-level" 4 --mca coll_adapt2_nodes block:2 -- "$BIN/bcast_cut" --counts 1000,70000
check "reductions, user ops, non-blocking" 3 --mca mpi_param_check 0 -- "$BIN/reduce_check" --coll reduce,iallreduce --ops sum,matmul --types int,vector:int --counts 1,5000
check "detached calls, communicators freed in flight" 4 -- "$BIN/detach_check" -t finalize
finish
