// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// The GPU reduction kernels: inout[i] = in[i] op inout[i] for i < count, one
// extern "C" kernel per (op, type) of device_op_supported(), named as
// device_kernel_name() says ("adapt2_reduce_sum_float32", ...), so the device
// backend finds them by name in the fatbin. The arithmetic is the host's
// (reduce_functors.h); nvcc runs with -fmad=false so no product is fused
// into a sum. Built into a fatbin only (cuda.inc): no host code here.
#include "reduce_functors.h"

namespace {

// Grid-stride loop: any launch shape covers any count.
template <class Op, class T>
__device__ void reduce_grid(const T *in, T *inout, unsigned long long count) {
    unsigned long long first = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    adapt2::reduce::reduce_strided<Op>(in, inout, first, count, stride);
}

}  // namespace

#define ADAPT2_REDUCE_KERNEL(op, name, T)                                                                     \
    extern "C" __global__ void adapt2_reduce_##op##_##name(const T *in, T *inout, unsigned long long count) { \
        reduce_grid<adapt2::reduce::op_##op>(in, inout, count);                                               \
    }
ADAPT2_DEVICE_KERNELS(ADAPT2_REDUCE_KERNEL)
