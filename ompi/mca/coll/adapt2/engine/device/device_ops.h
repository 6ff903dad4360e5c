// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// The reductions adapt2 can run on a GPU: predefined MPI ops on integer and
// floating types, and MINLOC/MAXLOC on (value, index) pairs.
//
// Shared by three parties, so it stays plain (no Open MPI, no CUDA header):
// the C layer maps an (MPI_Op, MPI_Datatype) to a (DeviceOp, DeviceType);
// the device backend looks up the kernel by kernel_name(); the kernels
// (cuda/*.cu) are compiled under the same names.
//
// Every kernel computes inout[i] = in[i] op inout[i] for i < count, element
// by element, in that operand order (Open MPI's op convention), without
// reassociation or fused multiply-add, so results equal the host's.
#ifndef ADAPT2_ENGINE_DEVICE_OPS_H
#define ADAPT2_ENGINE_DEVICE_OPS_H

#include <cstddef>
#include <cstdint>

namespace adapt2 {

enum class DeviceOp : uint8_t { sum, prod, max, min, land, lor, lxor, band, bor, bxor, minloc, maxloc, count_ };

// Pair types (MPI_FLOAT_INT, ...) are structs {value; int index;} laid out
// as MPI defines them; only MINLOC/MAXLOC apply to them.
enum class DeviceType : uint8_t {
    int8,
    uint8,
    int16,
    uint16,
    int32,
    uint32,
    int64,
    uint64,
    float32,
    float64,
    float_int,
    double_int,
    long_int,
    int_int,
    short_int,
    count_
};

inline const char *device_op_name(DeviceOp op) {
    static const char *const names[] = {"sum",  "prod", "max", "min",  "land",   "lor",
                                        "lxor", "band", "bor", "bxor", "minloc", "maxloc"};
    return names[static_cast<int>(op)];
}

inline const char *device_type_name(DeviceType t) {
    static const char *const names[] = {"int8",      "uint8",      "int16",    "uint16",  "int32",
                                        "uint32",    "int64",      "uint64",   "float32", "float64",
                                        "float_int", "double_int", "long_int", "int_int", "short_int"};
    return names[static_cast<int>(t)];
}

inline bool device_type_is_pair(DeviceType t) { return t >= DeviceType::float_int; }
inline bool device_type_is_float(DeviceType t) { return t == DeviceType::float32 || t == DeviceType::float64; }

// Whether a kernel exists for (op, type), following MPI's rules: sum, prod,
// max, min on integers and floats; logical ops on integers; bitwise ops on
// integers; minloc/maxloc on pairs only.
inline bool device_op_supported(DeviceOp op, DeviceType t) {
    if (device_type_is_pair(t)) return op == DeviceOp::minloc || op == DeviceOp::maxloc;
    if (op == DeviceOp::minloc || op == DeviceOp::maxloc) return false;
    if (device_type_is_float(t)) return op <= DeviceOp::min;
    return op < DeviceOp::count_;
}

// Size in bytes of one element of `t` (pairs include their padding).
size_t device_type_size(DeviceType t);

// The kernel's symbol: "adapt2_reduce_<op>_<type>", e.g.
// "adapt2_reduce_sum_float32". Writes at most `len` bytes into buf.
void device_kernel_name(DeviceOp op, DeviceType t, char *buf, size_t len);

}  // namespace adapt2

#endif
