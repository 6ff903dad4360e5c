// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Sizes and kernel names of the device reductions (device_ops.h). Plain C++:
// part of the engine whether or not CUDA is built.
#include "device_ops.h"

#include <cstdio>

#include "reduce_functors.h"

namespace adapt2 {

size_t device_type_size(DeviceType t) {
    switch (t) {
#define ADAPT2_TYPE_SIZE_CASE(unused, name, T) \
    case DeviceType::name: return sizeof(T);
        ADAPT2_DEVICE_TYPES(ADAPT2_TYPE_SIZE_CASE)
#undef ADAPT2_TYPE_SIZE_CASE
    case DeviceType::count_: break;
    }
    return 0;
}

void device_kernel_name(DeviceOp op, DeviceType t, char *buf, size_t len) {
    if (len == 0) return;
    if (op >= DeviceOp::count_ || t >= DeviceType::count_) {  // no such kernel: an empty name
        buf[0] = '\0';
        return;
    }
    snprintf(buf, len, "adapt2_reduce_%s_%s", device_op_name(op), device_type_name(t));
}

}  // namespace adapt2
