#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# GPU buffers through the whole component on a mock GPU
# (coll_adapt2_device_mock; test/mpi/device_check.c, device_ops_check.c), and
# on a real one where this machine has a CUDA device: every collective's data
# on all-device and mixed host/device ranks, with pinned pools too small for
# one buffer per segment; what the verbose output says about the device; and
# that a machine without a GPU runs everything as host memory.
. "$(dirname "$0")/lib.sh"
PROG="$BIN/device_check"

check "4 ranks, every buffer on the device" 4 -- "$PROG" all
check "5 ranks, even ranks on the device, odd in host memory" 5 -- "$PROG" mixed
check "3 ranks, 64 KiB of pinned buffers, 1 stream, 4 KiB segments" 3 \
    --mca coll_adapt2_device_pinned_max_bytes 65536 --mca coll_adapt2_device_streams 1 \
    --mca coll_adapt2_bcast_segment_size 4096 --mca coll_adapt2_reduce_segment_size 4096 -- "$PROG" all
check "perf/device_bench on the mock device: both paths' data checked" 3 \
    --mca coll_adapt2_device_mock 1 -- "$ADAPT2_BUILDDIR/perf/device_bench" -m -s 4K:1M -i 2
expect_output "verbose: the mock device is reported" "GPU buffers: mock device" \
    4 4 --mca coll_adapt2_verbose 1 -- "$PROG" all
expect_output "verbose: a strided type in MPI_Ibcast goes to the previous component, device or host buffer" \
    "handed to the previous component: a non-contiguous datatype while GPU support is on" \
    5 5 --mca coll_adapt2_verbose 20 -- "$PROG" mixed
# No mock, no GPU here (or a real one): the device decision is reported once
# per process either way.
expect_output "verbose: the device decision is reported" \
    "GPU buffers: (no usable CUDA device|CUDA device found)" 2 2 --mca coll_adapt2_verbose 10 --mca coll_adapt2_nodes block:1 -- "$BIN/topology_check" block:1
expect_output "invalid coll_adapt2_device_mock reported" \
    "invalid value '7' for MCA parameter coll_adapt2_device_mock" 2 2 --mca coll_adapt2_device_mock 7 \
    --mca coll_adapt2_verbose 1 --mca coll_adapt2_nodes block:1 -- "$BIN/topology_check" block:1

# Every (op, type) with a GPU kernel and every collective, bit for bit against
# the same call on host memory (test/mpi/device_ops_check.c). Open MPI's
# op/avx saturates 8-bit sums where the kernels wrap as the C loops do: off.
OPS="$BIN/device_ops_check"
check "mock device, every (op, type) kernel, 3 ranks" 3 --mca op ^avx -- "$OPS" mock exact 1,777,20001
check "mock device on even ranks, host memory on odd, 4 ranks" 4 --mca op ^avx -- "$OPS" mock-mixed exact 1,5000
check "mock device, random floats, reproducible mode, 3 ranks" 3 --mca op ^avx \
    --mca coll_adapt2_reproducible 1 -- "$OPS" mock random 3,30001

# With GPU support on, blocking calls up to coll_adapt2_device_bounce_max
# (1 MiB) are planned as host calls on every rank. Host buffers on a GPU
# machine (mock 2) keep the direct paths, derived types with holes and
# allgather/reduce-scatter; device buffers (mock 1) are copied whole through
# pinned host memory, their holes untouched. The programs check every byte
# and that adapt2 ran every call.
for mock in 2 1; do
    what=$([ $mock = 1 ] && echo "device buffers bounced" || echo "host buffers on a GPU machine")
    check "mock device, $what: blocking bcast, derived types, to 1 MiB" 4 --mca coll_adapt2_device_mock $mock -- \
        "$BIN/bcast_check" -t int,vector,struct -s 1,4000,30000,1048576 -r all
    [ $mock = 2 ] && also_expect "mock device, $what: small broadcasts take the direct path" \
        "direct calls per rank: [1-9]" 1
    check "mock device, $what: blocking reduce and allreduce, derived types, in place and not" 4 \
        --mca coll_adapt2_device_mock $mock --mca mpi_param_check 0 --mca op ^avx -- "$BIN/reduce_check" \
        --coll reduce,allreduce --ops sum,max --types int,double,vector:int,indexed:double --sizes 8,4000,30000 \
        --inplace=both
    check "mock device, $what: blocking allgather and reduce_scatter_block" 3 --mca coll_adapt2_device_mock $mock \
        --mca mpi_param_check 0 -- "$BIN/ring_check" --colls allgather,rsb --types int,vec --counts 1,300,4000 --forms blocking
done
expect_output "mock device, bounce off: a strided blocking bcast goes to the previous component" \
    "handed to the previous component: a non-contiguous datatype while GPU support is on" 4 4 \
    --mca coll_adapt2_device_mock 1 --mca coll_adapt2_device_bounce_max 0 --mca coll_adapt2_verbose 20 -- \
    "$BIN/bcast_check" -t vector -s 4000 -r 0 --expect previous

# A real GPU when this machine has one (ADAPT2_GPU_TESTS=0 skips them).
if [ "${ADAPT2_GPU_TESTS:-1}" = 1 ] && "$OPS" probe 2>/dev/null; then
    unset OMPI_MCA_coll_adapt2_device_segment_size # (lib.sh) the default floor, as users get it
    for np in 2 3 4; do
        for memory in device managed mixed; do
            check "GPU: $np ranks, $memory memory, every (op, type) kernel" $np --mca op ^avx -- \
                "$OPS" $memory exact 1,1000,100003
        done
    done
    check "GPU: 4 ranks, device memory, random floats, reproducible mode" 4 --mca op ^avx \
        --mca coll_adapt2_reproducible 1 -- "$OPS" device random 7,100003
    check "GPU: 3 ranks, device memory, 64 KiB of pinned buffers, 1 stream, 4 KiB segments" 3 --mca op ^avx \
        --mca coll_adapt2_device_pinned_max_bytes 65536 --mca coll_adapt2_device_streams 1 \
        --mca coll_adapt2_bcast_segment_size 4096 --mca coll_adapt2_reduce_segment_size 4096 -- \
        "$OPS" device exact 1,100003
    check "GPU: perf/device_bench, 2 ranks, both paths' data checked" 2 -- \
        "$ADAPT2_BUILDDIR/perf/device_bench" -s 4K:4M -i 2
    expect_output "GPU: verbose reports the CUDA device" "GPU buffers: CUDA device found" 2 2 \
        --mca coll_adapt2_verbose 10 -- "$OPS" device exact 1
else
    echo "skip GPU cases: no usable CUDA device here (device_ops_check probe)"
fi
finish
