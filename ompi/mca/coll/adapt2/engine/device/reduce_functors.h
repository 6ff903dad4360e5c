// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// What each reduction kernel computes on one element, written once for the
// GPU (nvcc compiles cuda/reduce_kernels.cu with it) and the host (g++: the
// CPU reference the unit tests check). So a kernel and its reference cannot
// drift apart: they are the same source.
//
// Semantics are Open MPI's (ompi/mca/op/base/op_base_functions.c), bit for
// bit, so a reduction gives the same result on a GPU as on the host:
//   sum, prod, band, bor, bxor   inout = inout OP in
//   max                          inout = inout > in ? inout : in
//   min                          inout = inout < in ? inout : in
//   land, lor, lxor              0 or 1
//   minloc, maxloc               the better value; on equal values the
//                                smaller index and inout's value
// The operand order of max/min decides NaN and signed-zero results: a NaN in
// either operand gives `in`, and so does +0 against -0. Every op touches one
// element: no reassociation, and nvcc runs with -fmad=false.
#ifndef ADAPT2_ENGINE_DEVICE_REDUCE_FUNCTORS_H
#define ADAPT2_ENGINE_DEVICE_REDUCE_FUNCTORS_H

#include <cstdint>
#include <type_traits>

#ifdef __CUDACC__
#define ADAPT2_HD __host__ __device__
#else
#define ADAPT2_HD
#endif

namespace adapt2 {

// MPI's pair types: {value; int index;}, the layout of MPI_FLOAT_INT etc.
struct float_int {
    float v;
    int i;
};
struct double_int {
    double v;
    int i;
};
struct long_int {
    long v;
    int i;
};
struct int_int {
    int v;
    int i;
};
struct short_int {
    short v;
    int i;
};
static_assert(sizeof(float_int) == 8 && sizeof(double_int) == 16 && sizeof(long_int) == 16 && sizeof(int_int) == 8 &&
                  sizeof(short_int) == 8,
              "pair layout differs from MPI's");

namespace reduce {

// Integer sums and products wrap modulo 2^bits as Open MPI's C loops do on
// every platform we build for. They are computed unsigned and at least as
// wide as int: signed overflow is undefined in C++, and uint16 * uint16
// would be promoted to (overflowing) int.
template <class T>
using wrap_t = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

struct op_sum {
    template <class T>
    static ADAPT2_HD T apply(const T &in, const T &inout) {
        if constexpr (std::is_integral_v<T>)
            return T(wrap_t<T>(inout) + wrap_t<T>(in));
        else
            return inout + in;
    }
};
struct op_prod {
    template <class T>
    static ADAPT2_HD T apply(const T &in, const T &inout) {
        if constexpr (std::is_integral_v<T>)
            return T(wrap_t<T>(inout) * wrap_t<T>(in));
        else
            return inout * in;
    }
};
struct op_max {
    template <class T>
    static ADAPT2_HD T apply(const T &in, const T &inout) {
        return inout > in ? inout : in;
    }
};
struct op_min {
    template <class T>
    static ADAPT2_HD T apply(const T &in, const T &inout) {
        return inout < in ? inout : in;
    }
};
struct op_land {
    template <class T>
    static ADAPT2_HD T apply(const T &in, const T &inout) {
        return T(inout && in);
    }
};
struct op_lor {
    template <class T>
    static ADAPT2_HD T apply(const T &in, const T &inout) {
        return T(inout || in);
    }
};
struct op_lxor {
    template <class T>
    static ADAPT2_HD T apply(const T &in, const T &inout) {
        return T(bool(inout) != bool(in));
    }
};
struct op_band {
    template <class T>
    static ADAPT2_HD T apply(const T &in, const T &inout) {
        return T(inout & in);
    }
};
struct op_bor {
    template <class T>
    static ADAPT2_HD T apply(const T &in, const T &inout) {
        return T(inout | in);
    }
};
struct op_bxor {
    template <class T>
    static ADAPT2_HD T apply(const T &in, const T &inout) {
        return T(inout ^ in);
    }
};

// MINLOC/MAXLOC: `in` replaces inout where its value is strictly better;
// equal values keep inout's value and take the smaller index. A NaN value is
// never better nor equal, so inout stays.
template <bool Max>
struct op_loc {
    template <class P>
    static ADAPT2_HD P apply(const P &in, const P &inout) {
        bool better;
        if constexpr (Max)
            better = in.v > inout.v;
        else
            better = in.v < inout.v;
        if (better) return in;
        P r = inout;
        if (in.v == inout.v && in.i < inout.i) r.i = in.i;
        return r;
    }
};
using op_minloc = op_loc<false>;
using op_maxloc = op_loc<true>;

// The loop every kernel runs: elements first, first + stride, ... below
// count. A GPU thread starts at its global index with the grid's size as
// stride; the host reference runs it with (0, 1) or simulates threads.
template <class Op, class T>
ADAPT2_HD void reduce_strided(const T *in, T *inout, unsigned long long first, unsigned long long count,
                              unsigned long long stride) {
    for (unsigned long long i = first; i < count; i += stride) inout[i] = Op::apply(in[i], inout[i]);
}

}  // namespace reduce
}  // namespace adapt2

// The (op, type) matrix as X-macros, so the kernels, their sizes and their
// tests are generated from one list. It must equal device_op_supported();
// test_device_ops checks that it does. K(op, type_name, C type) is called
// once per kernel; op and type_name are DeviceOp / DeviceType enumerators.
// (laid out by hand)
// clang-format off
#define ADAPT2_DEVICE_INT_TYPES(F, K)                                                               \
    F(K, int8, int8_t) F(K, uint8, uint8_t) F(K, int16, int16_t) F(K, uint16, uint16_t)             \
    F(K, int32, int32_t) F(K, uint32, uint32_t) F(K, int64, int64_t) F(K, uint64, uint64_t)
#define ADAPT2_DEVICE_FLOAT_TYPES(F, K) F(K, float32, float) F(K, float64, double)
#define ADAPT2_DEVICE_PAIR_TYPES(F, K)                                                              \
    F(K, float_int, ::adapt2::float_int) F(K, double_int, ::adapt2::double_int)                     \
    F(K, long_int, ::adapt2::long_int) F(K, int_int, ::adapt2::int_int)                             \
    F(K, short_int, ::adapt2::short_int)

#define ADAPT2_DEVICE_ARITH_OPS(K, t, T) K(sum, t, T) K(prod, t, T) K(max, t, T) K(min, t, T)
#define ADAPT2_DEVICE_INT_OPS(K, t, T)                                                              \
    ADAPT2_DEVICE_ARITH_OPS(K, t, T) K(land, t, T) K(lor, t, T) K(lxor, t, T)                       \
    K(band, t, T) K(bor, t, T) K(bxor, t, T)
#define ADAPT2_DEVICE_LOC_OPS(K, t, T) K(minloc, t, T) K(maxloc, t, T)

#define ADAPT2_DEVICE_KERNELS(K)                                                                    \
    ADAPT2_DEVICE_INT_TYPES(ADAPT2_DEVICE_INT_OPS, K)                                               \
    ADAPT2_DEVICE_FLOAT_TYPES(ADAPT2_DEVICE_ARITH_OPS, K)                                           \
    ADAPT2_DEVICE_PAIR_TYPES(ADAPT2_DEVICE_LOC_OPS, K)

// Every type once: F(unused, type_name, C type).
#define ADAPT2_DEVICE_TYPES(F)                                                                      \
    ADAPT2_DEVICE_INT_TYPES(F, ~) ADAPT2_DEVICE_FLOAT_TYPES(F, ~) ADAPT2_DEVICE_PAIR_TYPES(F, ~)
// clang-format on

#endif
