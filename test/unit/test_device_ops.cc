// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// The GPU reductions' contract and the CPU reference of their arithmetic.
//
// Every kernel in cuda/reduce_kernels.cu runs reduce_strided() with a functor
// of reduce_functors.h. Here the same functors, compiled for the host, run over
// arrays of edge values (limits, wrap-around, -0, infinities, NaNs, ties), and
// each element is compared with an expected value written independently below
// from Open MPI's op semantics (ompi/mca/op/base/op_base_functions.c). One
// CMocka test per kernel, generated from the kernel list.
#include "cmocka_cxx.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "device/device_ops.h"
#include "device/reduce_functors.h"

using namespace adapt2;

namespace {

constexpr int n_ops = int(DeviceOp::count_);
constexpr int n_types = int(DeviceType::count_);

template <class T>
constexpr bool is_pair_v = std::is_class_v<T>;

// ---- expected results, written without the functors ----------------------

// Integers: sums and products wrap (the builtins store the result modulo
// 2^bits); logical ops give 0 or 1.
template <class T>
T expect_int(DeviceOp op, T in, T inout) {
    T r{};
    switch (op) {
    case DeviceOp::sum: (void)__builtin_add_overflow(inout, in, &r); return r;
    case DeviceOp::prod: (void)__builtin_mul_overflow(inout, in, &r); return r;
    case DeviceOp::max: return std::max(inout, in);
    case DeviceOp::min: return std::min(inout, in);
    case DeviceOp::land: return T(inout != 0 && in != 0 ? 1 : 0);
    case DeviceOp::lor: return T(inout != 0 || in != 0 ? 1 : 0);
    case DeviceOp::lxor: return T((inout != 0) != (in != 0) ? 1 : 0);
    case DeviceOp::band: return T(inout & in);
    case DeviceOp::bor: return T(inout | in);
    case DeviceOp::bxor: return T(inout ^ in);
    default: fail_msg("%s is not an integer op", device_op_name(op));
    }
    return r;
}

// Floats: Open MPI computes max as `inout > in ? inout : in` (min alike), so
// a NaN on either side, or a tie (+0 against -0 included), gives `in`.
template <class F>
F expect_float(DeviceOp op, F in, F inout) {
    switch (op) {
    case DeviceOp::sum: return inout + in;
    case DeviceOp::prod: return inout * in;
    case DeviceOp::max:
    case DeviceOp::min:
        if (std::isnan(in) || std::isnan(inout) || in == inout) return in;
        return op == DeviceOp::max ? std::fmax(in, inout) : std::fmin(in, inout);
    default: fail_msg("%s is not a floating-point op", device_op_name(op));
    }
    return in;
}

// Pairs (MPI standard, MINLOC/MAXLOC): the better value with its index;
// equal values give the smaller index (Open MPI keeps inout's value, which
// shows with +0 against -0). A NaN compares neither better nor equal, so
// Open MPI leaves inout as it is.
template <class V>
bool is_nan(V x) {
    if constexpr (std::is_floating_point_v<V>)
        return std::isnan(x);
    else
        return false;
}

template <class P>
P expect_loc(DeviceOp op, P in, P inout) {
    if (is_nan(in.v) || is_nan(inout.v)) return inout;
    if (in.v == inout.v) return P{inout.v, std::min(in.i, inout.i)};
    auto best = op == DeviceOp::maxloc ? std::max(in.v, inout.v) : std::min(in.v, inout.v);
    return best == in.v ? in : inout;
}

template <class T>
T expected(DeviceOp op, const T &in, const T &inout) {
    if constexpr (is_pair_v<T>)
        return expect_loc(op, in, inout);
    else if constexpr (std::is_floating_point_v<T>)
        return expect_float(op, in, inout);
    else
        return expect_int(op, in, inout);
}

// ---- comparison: bit for bit, except a NaN from arithmetic ----------------

template <class T>
bool same_bits(const T &a, const T &b) {
    return std::memcmp(&a, &b, sizeof a) == 0;
}

// max/min/minloc/maxloc select an operand, so even NaN payloads must match;
// a sum or product that gives NaN may give any NaN (a GPU gives its own).
template <class T>
bool same(DeviceOp op, const T &got, const T &want) {
    if constexpr (is_pair_v<T>) {
        return same_bits(got.v, want.v) && got.i == want.i;  // padding is not compared
    } else if constexpr (std::is_floating_point_v<T>) {
        bool arith = op == DeviceOp::sum || op == DeviceOp::prod;
        return same_bits(got, want) || (arith && std::isnan(got) && std::isnan(want));
    } else {
        return got == want;
    }
}

// ---- edge values ------------------------------------------------------------

uint64_t lcg(uint64_t &s) { return s = s * 6364136223846793005ULL + 1442695040888963407ULL; }

template <class T>
std::vector<T> int_values() {
    using L = std::numeric_limits<T>;
    std::vector<T> v = {
        L::min(),        T(L::min() + 1), T(0),    T(1),   T(2), T(3), T(L::max() / 2), T(L::max() / 2 + 1),
        T(L::max() - 1), L::max(),        T(0x5a), T(0x7f)};
    if constexpr (L::is_signed)
        for (int d : {-1, -2, -3}) v.push_back(T(d));
    uint64_t s = sizeof(T);
    for (int k = 0; k < 16; k++) v.push_back(T(lcg(s) >> 17));  // random bit patterns
    return v;
}

template <class F>
std::vector<F> float_values() {
    using L = std::numeric_limits<F>;
    std::vector<F> v = {F(0),
                        -F(0),
                        F(1),
                        F(-1),
                        F(0.1),
                        F(3),
                        F(-2.5),
                        L::max(),
                        L::lowest(),
                        L::min(),
                        L::denorm_min(),
                        -L::denorm_min(),
                        L::epsilon(),
                        F(1) + L::epsilon(),
                        L::infinity(),
                        -L::infinity(),
                        L::quiet_NaN(),
                        -L::quiet_NaN(),
                        F(std::nan("7"))};
    uint64_t s = 17;
    for (int k = 0; k < 12; k++) v.push_back(F(int64_t(lcg(s) >> 20) - (1LL << 43)) / F(1 << 20));
    return v;
}

template <class P>
std::vector<P> pair_values() {
    using V = decltype(P::v);
    std::vector<V> vals;
    if constexpr (std::is_floating_point_v<V>)
        vals = {V(0),
                -V(0),
                V(1),
                V(-1),
                V(2),
                std::numeric_limits<V>::infinity(),
                -std::numeric_limits<V>::infinity(),
                std::numeric_limits<V>::quiet_NaN()};
    else
        vals = {std::numeric_limits<V>::min(), V(-1), V(0), V(1), V(2), std::numeric_limits<V>::max()};
    std::vector<P> v;
    for (V x : vals)
        for (int i : {INT_MIN, -1, 0, 1, 5, INT_MAX}) v.push_back(P{x, i});
    return v;
}

template <class T>
std::vector<T> values() {
    if constexpr (is_pair_v<T>)
        return pair_values<T>();
    else if constexpr (std::is_floating_point_v<T>)
        return float_values<T>();
    else
        return int_values<T>();
}

// ---- one kernel ---------------------------------------------------------------

// Runs the kernel's loop on every (in, inout) pair of edge values, as one
// thread would and as a grid of 7 threads would, and checks each element;
// a tail past `count` must stay untouched.
template <DeviceOp Op, DeviceType Type, class Functor, class T>
void check_kernel() {
    std::vector<T> v = values<T>();
    std::vector<T> in, inout;
    for (const T &a : v)
        for (const T &b : v) in.push_back(a), inout.push_back(b);
    const size_t count = in.size(), tail = 3;
    for (unsigned threads : {1u, 7u}) {
        std::vector<T> out = inout;
        out.resize(count + tail, v[0]);
        for (unsigned t = 0; t < threads; t++)
            reduce::reduce_strided<Functor>(in.data(), out.data(), t, count, threads);
        for (size_t i = 0; i < count; i++) {
            T want = expected(Op, in[i], inout[i]);
            if (!same(Op, out[i], want))
                fail_msg("%s on %s: element %zu (edge values #%zu, #%zu) differs, %u threads", device_op_name(Op),
                         device_type_name(Type), i, i / v.size(), i % v.size(), threads);
        }
        for (size_t i = count; i < count + tail; i++) assert_true(same(Op, out[i], v[0]));
    }
}

#define ADAPT2_KERNEL_TEST(op, name, T) \
    void test_##op##_##name(void **) { check_kernel<DeviceOp::op, DeviceType::name, reduce::op_##op, T>(); }
ADAPT2_DEVICE_KERNELS(ADAPT2_KERNEL_TEST)
#undef ADAPT2_KERNEL_TEST

// ---- the contract -------------------------------------------------------------

// MPI-3.1 5.9.2: which predefined ops apply to which types.
#define INT_OPS "sum prod max min land lor lxor band bor bxor"
#define FLOAT_OPS "sum prod max min"
#define LOC_OPS "minloc maxloc"
const struct {
    DeviceType type;
    const char *ops;
    size_t size;
} mpi_table[] = {
    {DeviceType::int8, INT_OPS, 1},      {DeviceType::uint8, INT_OPS, 1},     {DeviceType::int16, INT_OPS, 2},
    {DeviceType::uint16, INT_OPS, 2},    {DeviceType::int32, INT_OPS, 4},     {DeviceType::uint32, INT_OPS, 4},
    {DeviceType::int64, INT_OPS, 8},     {DeviceType::uint64, INT_OPS, 8},    {DeviceType::float32, FLOAT_OPS, 4},
    {DeviceType::float64, FLOAT_OPS, 8}, {DeviceType::float_int, LOC_OPS, 8}, {DeviceType::double_int, LOC_OPS, 16},
    {DeviceType::long_int, LOC_OPS, 16}, {DeviceType::int_int, LOC_OPS, 8},   {DeviceType::short_int, LOC_OPS, 8},
};

bool listed(const char *ops, const char *op) {
    std::string list = std::string(" ") + ops + " ";
    return list.find(std::string(" ") + op + " ") != std::string::npos;
}

void test_supported_follows_mpi(void **) {
    assert_int_equal(sizeof mpi_table / sizeof mpi_table[0], n_types);
    for (const auto &row : mpi_table)
        for (int o = 0; o < n_ops; o++) {
            DeviceOp op = DeviceOp(o);
            if (device_op_supported(op, row.type) != listed(row.ops, device_op_name(op)))
                fail_msg("supported(%s, %s) is wrong", device_op_name(op), device_type_name(row.type));
        }
    assert_false(device_op_supported(DeviceOp::band, DeviceType::float32));
    assert_false(device_op_supported(DeviceOp::land, DeviceType::float64));
    assert_false(device_op_supported(DeviceOp::minloc, DeviceType::int32));
    assert_false(device_op_supported(DeviceOp::sum, DeviceType::double_int));
    assert_true(device_op_supported(DeviceOp::maxloc, DeviceType::short_int));
}

// The kernel list (what the .cu compiles) is exactly the supported table,
// each kernel once, with the element size device_type_size() reports.
void test_kernel_list_is_the_supported_table(void **) {
    bool seen[n_ops][n_types] = {};
    int kernels = 0;
#define ADAPT2_MARK(op, name, T)                                     \
    assert_false(seen[int(DeviceOp::op)][int(DeviceType::name)]);    \
    seen[int(DeviceOp::op)][int(DeviceType::name)] = true;           \
    assert_int_equal(device_type_size(DeviceType::name), sizeof(T)); \
    kernels++;
    ADAPT2_DEVICE_KERNELS(ADAPT2_MARK)
#undef ADAPT2_MARK
    for (int o = 0; o < n_ops; o++)
        for (int t = 0; t < n_types; t++) assert_int_equal(seen[o][t], device_op_supported(DeviceOp(o), DeviceType(t)));
    assert_int_equal(kernels, 8 * 10 + 2 * 4 + 5 * 2);
}

void test_type_sizes(void **) {
    for (const auto &row : mpi_table) assert_int_equal(device_type_size(row.type), row.size);
    assert_int_equal(device_type_size(DeviceType::count_), 0);
    // MPI's pair layouts: the index right after the value, aligned.
    assert_int_equal(offsetof(float_int, i), 4);
    assert_int_equal(offsetof(double_int, i), 8);
    assert_int_equal(offsetof(long_int, i), 8);
    assert_int_equal(offsetof(int_int, i), 4);
    assert_int_equal(offsetof(short_int, i), 4);
}

void test_kernel_names(void **) {
    char buf[64];
    for (int o = 0; o < n_ops; o++)
        for (int t = 0; t < n_types; t++) {
            device_kernel_name(DeviceOp(o), DeviceType(t), buf, sizeof buf);
            std::string want =
                std::string("adapt2_reduce_") + device_op_name(DeviceOp(o)) + "_" + device_type_name(DeviceType(t));
            assert_string_equal(buf, want.c_str());
        }
    device_kernel_name(DeviceOp::sum, DeviceType::float32, buf, sizeof buf);
    assert_string_equal(buf, "adapt2_reduce_sum_float32");
    device_kernel_name(DeviceOp::maxloc, DeviceType::double_int, buf, sizeof buf);
    assert_string_equal(buf, "adapt2_reduce_maxloc_double_int");
    device_kernel_name(DeviceOp::bxor, DeviceType::uint64, buf, 10);  // truncated, terminated
    assert_string_equal(buf, "adapt2_re");
    buf[0] = 'x';
    device_kernel_name(DeviceOp::sum, DeviceType::int8, buf, 0);  // no room: untouched
    assert_int_equal(buf[0], 'x');
    device_kernel_name(DeviceOp::count_, DeviceType::int8, buf, sizeof buf);
    assert_string_equal(buf, "");
}

// A few results spelled out, so the edge semantics are visible here and not
// only in the expected-value functions above.
void test_edge_semantics(void **) {
    using reduce::op_max;
    using reduce::op_min;
    float nan = std::numeric_limits<float>::quiet_NaN();
    assert_true(std::isnan(op_max::apply(nan, 1.0f)));      // NaN in: NaN
    assert_true(op_max::apply(1.0f, nan) == 1.0f);          // NaN inout: in
    assert_true(std::signbit(op_max::apply(-0.0f, 0.0f)));  // tie: in
    assert_false(std::signbit(op_min::apply(0.0f, -0.0f)));
    assert_int_equal(reduce::op_sum::apply<int32_t>(1, INT32_MAX), INT32_MIN);
    assert_int_equal(reduce::op_prod::apply<uint16_t>(65535, 65535), 1);
    assert_int_equal(reduce::op_sum::apply<int8_t>(1, 127), -128);
    assert_int_equal(reduce::op_lxor::apply<int32_t>(-4, 7), 0);
    assert_int_equal(reduce::op_land::apply<uint64_t>(1ULL << 40, 2), 1);
    double_int r = reduce::op_minloc::apply(double_int{-0.0, 3}, double_int{0.0, 9});
    assert_true(r.v == 0.0 && !std::signbit(r.v) && r.i == 3);
    int_int m = reduce::op_maxloc::apply(int_int{5, 1}, int_int{4, 0});
    assert_true(m.v == 5 && m.i == 1);
}

}  // namespace

int main(void) {
#define ADAPT2_KERNEL_ENTRY(op, name, T) cmocka_unit_test(test_##op##_##name),
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_supported_follows_mpi),
                                       cmocka_unit_test(test_kernel_list_is_the_supported_table),
                                       cmocka_unit_test(test_type_sizes),
                                       cmocka_unit_test(test_kernel_names),
                                       cmocka_unit_test(test_edge_semantics),
                                       ADAPT2_DEVICE_KERNELS(ADAPT2_KERNEL_ENTRY)};
#undef ADAPT2_KERNEL_ENTRY
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
