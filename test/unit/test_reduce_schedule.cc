// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Reduce and allreduce over the fake network, under many completion orders:
// results equal the serial reduction (left to right for a non-commutative
// op), each rank combines every child contribution exactly once per segment,
// the staging pool's cap holds, reproducible mode is bitwise deterministic,
// nothing stays posted or borrowed.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "threads.h"
#include "cmocka_cxx.h"
#include "collectives.h"
#include "segments.h"
#include "test_support.h"

using namespace adapt2;
using namespace adapt2::test;

namespace {

// ---- the ops --------------------------------------------------------------
// 2x2 matrices of uint32 (mod 2^32): inout = in * inout. Not commutative.
int matmul(void *ctx, const void *in, void *inout, size_t n) {
    ++static_cast<OpCounter *>(ctx)->combines;
    auto *a = static_cast<const uint32_t *>(in);
    auto *b = static_cast<uint32_t *>(inout);
    for (size_t k = 0; k < n; ++k, a += 4, b += 4) {
        uint32_t r[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
                         a[2] * b[1] + a[3] * b[3]};
        std::memcpy(b, r, sizeof r);
    }
    return 0;
}

int sum_float(void *ctx, const void *in, void *inout, size_t n) {
    ++static_cast<OpCounter *>(ctx)->combines;
    auto *a = static_cast<const float *>(in);
    auto *b = static_cast<float *>(inout);
    for (size_t i = 0; i < n; ++i) b[i] = a[i] + b[i];
    return 0;
}

// out = in1 + in2: the optional three-buffer combine (commutative ops only).
int sum3_i32(void *ctx, const void *in1, const void *in2, void *out, size_t n) {
    auto *k = static_cast<OpCounter *>(ctx);
    ++k->combines, ++k->combines3;
    auto *a = static_cast<const int32_t *>(in1), *b = static_cast<const int32_t *>(in2);
    auto *o = static_cast<int32_t *>(out);
    for (size_t i = 0; i < n; ++i) o[i] = a[i] + b[i];
    return 0;
}

enum class Kind { sum, matmul, fsum };

size_t unit_of(Kind k) { return k == Kind::matmul ? 16 : 4; }

// Rank r's contribution, element e.
void contribution(Kind k, int r, size_t e, char *out) {
    if (k == Kind::sum) {
        int32_t v = static_cast<int32_t>(r * 1000 + e % 977);
        std::memcpy(out, &v, 4);
    } else if (k == Kind::fsum) {
        float v = static_cast<float>(1.0 / (1 + r * 3 + e % 7)) * (e % 2 ? 1e4f : 1e-3f);  // rounding-sensitive
        std::memcpy(out, &v, 4);
    } else {
        uint32_t m[4] = {static_cast<uint32_t>(r + 1), static_cast<uint32_t>(e % 5 + 1),
                         static_cast<uint32_t>(r * 7 + 3), static_cast<uint32_t>(e % 3)};
        std::memcpy(out, m, 16);
    }
}

// ---- one run --------------------------------------------------------------
struct Case {
    bool allreduce = false;
    Kind kind = Kind::sum;
    int p = 4, root = 0;
    size_t elems = 100;
    int algorithm = ADAPT2_ALG_KNOMIAL;  // auto's tree, but segmented whatever the size
    size_t segment = 64;                 // bytes
    int recv_window = 4, send_window = 2;
    bool strided = false, in_place = false, reproducible = false, ring = false, recdoubling = false;
    bool rabenseifner = false;
    bool three_buffer = false;  // the op has a three-buffer combine (sum only)
    bool mixed = false;         // with strided: only odd ranks' buffers are (the same data,
                                // other layouts: MPI allows it; every rank must run the same algorithm)
    size_t pool_max = 1 << 20;
    NetworkOptions net;

    bool strided_at(int r) const { return strided && (!mixed || r % 2 == 1); }

    std::string str() const {
        char b[300];
        std::snprintf(b, sizeof b,
                      "%s kind=%d p=%d root=%d elems=%zu alg=%d seg=%zu win=%d:%d strided=%d%s inplace=%d "
                      "repro=%d 3buf=%d pool=%zu order=%d overtake=%d seed=%llu",
                      allreduce ? (ring           ? "ring allreduce"
                                   : recdoubling  ? "recdoubling allreduce"
                                   : rabenseifner ? "rabenseifner allreduce"
                                                  : "allreduce")
                                : "reduce",
                      static_cast<int>(kind), p, root, elems, algorithm, segment, recv_window, send_window, strided,
                      mixed ? " (odd ranks)" : "", in_place, reproducible, three_buffer, pool_max,
                      static_cast<int>(net.order), net.overtake_pending, static_cast<unsigned long long>(net.seed));
        return b;
    }
};

struct Rank {
    std::vector<char> send, recv;  // memory (strided layouts take twice the bytes)
    Strided send_s{}, recv_s{};
    OpCounter ops;
    Done done;
};

// Packed byte i of a buffer.
char &packed_at(std::vector<char> &mem, bool strided, size_t i) { return mem[strided ? 2 * i : i]; }

// Serial reduction over ranks 0..p-1, left to right.
std::vector<char> expected(const Case &c) {
    const size_t u = unit_of(c.kind);
    std::vector<char> acc(c.elems * u), x(u);
    OpCounter unused;
    for (size_t e = 0; e < c.elems; ++e) contribution(c.kind, c.p - 1, e, &acc[e * u]);
    for (int r = c.p - 2; r >= 0; --r) {  // acc = x_r op acc, right to left: the same product
        for (size_t e = 0; e < c.elems; ++e) {
            contribution(c.kind, r, e, x.data());
            if (c.kind == Kind::matmul) matmul(&unused, x.data(), &acc[e * u], 1);
            if (c.kind == Kind::sum) sum_i32(&unused, x.data(), &acc[e * u], 1);
            if (c.kind == Kind::fsum) sum_float(&unused, x.data(), &acc[e * u], 1);
        }
    }
    return acc;
}

// Runs the case; returns the root's (or rank 0's) result bytes.
std::vector<char> run_case(const Case &c) {
    const size_t u = unit_of(c.kind), bytes = c.elems * u, mem = bytes * (c.strided ? 2 : 1);
    FakeWorld world(c.p, c.net, c.pool_max);
    std::vector<Rank> ranks(c.p);
    for (int r = 0; r < c.p; ++r) {
        Rank &k = ranks[r];
        k.send.assign(mem, 0x11);
        k.recv.assign(mem, 0x22);
        std::vector<char> v(u);
        bool own_in_recv = c.in_place && (c.allreduce || r == c.root);
        auto &dst = own_in_recv ? k.recv : k.send;
        for (size_t e = 0; e < c.elems; ++e) {
            contribution(c.kind, r, e, v.data());
            for (size_t b = 0; b < u; ++b) packed_at(dst, c.strided_at(r), e * u + b) = v[b];
        }
        k.send_s.base = k.send.data();
        k.recv_s.base = k.recv.data();
    }
    adapt2_tree_settings_t tree{};
    tree.algorithm = c.algorithm;
    tree.fanout = 3, tree.radix = 3, tree.chains = 2;
    tree.segment_size = c.segment;
    tree.recv_window = c.recv_window;
    tree.send_window = c.send_window;
    for (int r : entry_order(c.p, c.net.seed * 13 + 5)) {
        Rank &k = ranks[r];
        auto buf = [&](std::vector<char> &m, Strided &s) {
            return c.strided_at(r) ? strided_buffer(&s, bytes) : contiguous_buffer(m.data(), bytes);
        };
        adapt2_buffer_t own = buf(k.send, k.send_s), result = buf(k.recv, k.recv_s);
        adapt2_reduction_t op{u,
                              c.kind != Kind::matmul,
                              &k.ops,
                              c.kind == Kind::matmul ? matmul
                              : c.kind == Kind::sum  ? sum_i32
                                                     : sum_float,
                              c.three_buffer && c.kind == Kind::sum ? sum3_i32 : nullptr,
                              0,
                              0};
        int rc;
        if (c.allreduce) {
            adapt2_allreduce_settings_t s{};
            s.tree = tree;
            s.algorithm = c.ring           ? ADAPT2_ALLREDUCE_RING
                          : c.recdoubling  ? ADAPT2_ALLREDUCE_RECDOUBLING
                          : c.rabenseifner ? ADAPT2_ALLREDUCE_RABENSEIFNER
                                           : ADAPT2_ALLREDUCE_TREE;
            s.reproducible = c.reproducible;
            rc = start_allreduce(world.comm(r), own, result, c.in_place, op, 100, s, on_done, &k.done);
        } else {
            adapt2_reduce_settings_t s{tree, c.reproducible};
            rc = start_reduce(world.comm(r), own, result, c.in_place, op, c.root, 100, s, on_done, &k.done);
        }
        if (rc != 0) fail_msg("%s: start failed %d", c.str().c_str(), rc);
    }
    world.run();

    const std::vector<char> want = expected(c);
    const int nseg = Segments(bytes, c.segment, u).count();
    std::vector<char> first;
    for (int r = 0; r < c.p; ++r) {
        Rank &k = ranks[r];
        if (k.done.calls != 1 || k.done.status != 0)
            fail_msg("%s: rank %d done %d times, status %d", c.str().c_str(), r, k.done.calls, k.done.status);
        if (world.comm(r).pool().bytes_lent() != 0) fail_msg("%s: rank %d kept buffers", c.str().c_str(), r);
        if (!c.allreduce && r != c.root) continue;
        std::vector<char> got(bytes);
        for (size_t i = 0; i < bytes; ++i) got[i] = packed_at(k.recv, c.strided_at(r), i);
        bool exact = c.kind != Kind::fsum;  // float sums depend on the combine order
        if (exact && got != want) fail_msg("%s: rank %d: wrong result", c.str().c_str(), r);
        if (c.strided_at(r)) {
            for (size_t i = 0; i < bytes; ++i) {
                if (k.recv[2 * i + 1] != 0x22) fail_msg("%s: rank %d: hole %zu written", c.str().c_str(), r, i);
            }
        }
        if (first.empty()) first = got;
        if (c.allreduce && got != first) fail_msg("%s: ranks disagree", c.str().c_str());
    }
    // Every child contribution is combined exactly once per segment.
    auto tree_of = world.comm(0).trees().get(
        c.kind == Kind::matmul
            ? TreeSpec{TreeShape::in_order_binomial, 0}
            : (c.algorithm == ADAPT2_ALG_KNOMIAL ? TreeSpec{TreeShape::knomial, 3} : TreeSpec{TreeShape::binomial, 0}),
        c.allreduce ? 0 : c.root);
    if (!c.ring && !c.recdoubling && !c.rabenseifner && (c.algorithm == ADAPT2_ALG_KNOMIAL || c.kind == Kind::matmul)) {
        for (int r = 0; r < c.p; ++r) {
            long want_combines = static_cast<long>(tree_of->children(r).size()) * nseg;
            if (ranks[r].ops.combines != want_combines)
                fail_msg("%s: rank %d combined %ld times, expected %ld", c.str().c_str(), r, ranks[r].ops.combines,
                         want_combines);
        }
    }
    // A root with children that does not reduce in place combines the first
    // two operands of every segment straight into the result; nobody else
    // does (the others adopt a buffer as the accumulator).
    if (c.three_buffer && !c.allreduce) {
        for (int r = 0; r < c.p; ++r) {
            bool pairs = r == c.root && !c.in_place && !c.strided_at(r) && !c.reproducible && c.p > 1;
            long want3 = pairs ? nseg : 0;
            if (ranks[r].ops.combines3 != want3)
                fail_msg("%s: rank %d combined %ld times into a third buffer, expected %ld", c.str().c_str(), r,
                         ranks[r].ops.combines3, want3);
        }
    }
    const FakeNetwork &net = world.net;
    if (net.unmatched() != 0 || net.posted() != net.completed())
        fail_msg("%s: %zu unmatched, %ld posted, %ld completed", c.str().c_str(), net.unmatched(), net.posted(),
                 net.completed());
    return first;
}

void test_reduce_sum_and_matmul(void **) {
    long runs = 0;
    for (Kind kind : {Kind::sum, Kind::matmul}) {
        for (int p : {1, 2, 3, 5, 8, 9}) {
            for (int root : {0, p / 2, p - 1}) {
                for (size_t elems : {1, 15, 16, 17, 64}) {  // 64-byte segments: 16 ints, 4 matrices
                    for (auto net : completion_orders(3)) {
                        Case c;
                        c.kind = kind, c.p = p, c.root = root, c.elems = elems, c.net = net;
                        run_case(c);
                        ++runs;
                    }
                }
            }
        }
    }
    std::printf("# %ld reductions checked\n", runs);
}

// The optional three-buffer combine gives the same results and the same
// number of combines, whatever the arrival order.
void test_reduce_three_buffer(void **) {
    long runs = 0;
    for (int p : {1, 2, 3, 5, 8}) {
        for (int root : {0, p - 1}) {
            for (bool in_place : {false, true}) {
                for (bool strided : {false, true}) {
                    for (size_t elems : {1, 17, 64}) {
                        for (auto net : completion_orders(3)) {
                            Case c;
                            c.three_buffer = true, c.p = p, c.root = root, c.in_place = in_place;
                            c.strided = strided, c.elems = elems, c.net = net;
                            run_case(c);
                            ++runs;
                        }
                    }
                }
            }
        }
    }
    std::printf("# %ld three-buffer reductions checked\n", runs);
}

void test_allreduce_sum_and_matmul(void **) {
    for (Kind kind : {Kind::sum, Kind::matmul}) {
        for (int p : {1, 2, 3, 5, 8}) {
            for (size_t elems : {1, 17, 64}) {
                for (auto net : completion_orders(3)) {
                    Case c;
                    c.allreduce = true, c.kind = kind, c.p = p, c.elems = elems, c.net = net;
                    run_case(c);
                }
            }
        }
    }
}

void test_shapes_windows_and_layouts(void **) {
    for (int alg : {ADAPT2_ALG_BINOMIAL, ADAPT2_ALG_FLAT, ADAPT2_ALG_PIPELINE, ADAPT2_ALG_CHAIN, ADAPT2_ALG_KARY,
                    ADAPT2_ALG_TWO_TREE}) {
        for (auto [rw, sw] : {std::pair{1, 1}, std::pair{3, 2}, std::pair{8, 4}}) {
            for (bool allreduce : {false, true}) {
                for (auto net : completion_orders(2)) {
                    Case c;
                    c.allreduce = allreduce, c.p = 7, c.root = 3, c.elems = 50, c.algorithm = alg;
                    c.recv_window = rw, c.send_window = sw, c.net = net;
                    c.strided = rw == 3;
                    run_case(c);
                }
            }
        }
    }
}

void test_in_place(void **) {
    for (Kind kind : {Kind::sum, Kind::matmul}) {
        for (bool allreduce : {false, true}) {
            for (bool strided : {false, true}) {
                for (auto net : completion_orders(2)) {
                    Case c;
                    c.allreduce = allreduce, c.kind = kind, c.p = 6, c.root = 4, c.elems = 40;
                    c.in_place = true, c.strided = strided, c.net = net;
                    run_case(c);
                }
            }
        }
    }
}

// The pool's cap bounds the slots; with no room at all each schedule still
// gets the buffers of one slot and completes.
void test_pool_cap(void **) {
    for (size_t cap : {size_t{0}, size_t{64 * 3}, size_t{1} << 20}) {
        for (bool allreduce : {false, true}) {
            Case c;
            c.allreduce = allreduce, c.p = 9, c.elems = 200, c.pool_max = cap, c.recv_window = 8;
            c.algorithm = ADAPT2_ALG_FLAT;  // the root needs 9 buffers per slot
            run_case(c);
        }
    }
    // Peak staging per rank stays within max(cap, one slot).
    const size_t cap = 64 * 5;
    FakeWorld world(4, {}, cap);
    std::vector<Rank> ranks(4);
    adapt2_tree_settings_t tree{ADAPT2_ALG_FLAT, 3, 3, 2, 64, 16, 2, 0, 0, 0};
    for (int r = 0; r < 4; ++r) {
        ranks[r].send.assign(64 * 40, 1);
        ranks[r].recv.assign(64 * 40, 0);
        adapt2_reduction_t op{4, 1, &ranks[r].ops, sum_i32, nullptr, 0, 0};
        adapt2_reduce_settings_t s{tree, 0};
        start_reduce(world.comm(r), contiguous_buffer(ranks[r].send.data(), 64 * 40),
                     contiguous_buffer(ranks[r].recv.data(), 64 * 40), false, op, 0, 7, s, on_done, &ranks[r].done);
    }
    world.run();
    const size_t one_slot = 4 * 64;  // 3 children + own/acc buffer at the root
    assert_true(world.comm(0).pool().peak_bytes_lent() <= std::max(cap, one_slot));
    for (int e = 0; e < 64 * 40 / 4; ++e) {
        int32_t v;
        std::memcpy(&v, &ranks[0].recv[4 * e], 4);
        if (v != 4 * 0x01010101) fail_msg("capped reduce: element %d is %d", e, v);
    }
}

// Layouts of a rank's buffers: contiguous, strided, strided on odd ranks only.
enum class Layout { contiguous, strided, mixed };
constexpr Layout kLayouts[] = {Layout::contiguous, Layout::strided, Layout::mixed};
void set_layout(Case *c, Layout l) {
    c->strided = l != Layout::contiguous;
    c->mixed = l == Layout::mixed;
}

// The ring: any p, fewer elements than ranks (empty blocks), segments
// smaller than a block, windows, in place, every layout (non-contiguous
// buffers are staged); every rank gets the serial sum.
void test_ring_allreduce(void **) {
    long runs = 0;
    for (int p : {2, 3, 4, 7, 9}) {
        for (size_t elems : {1, 5, 64, 301}) {
            for (size_t seg : {size_t{0}, size_t{8}, size_t{64}}) {
                for (auto net : completion_orders(2)) {
                    for (Layout layout : kLayouts) {
                        Case c;
                        c.allreduce = c.ring = true, c.p = p, c.elems = elems, c.segment = seg, c.net = net;
                        c.recv_window = seg == 8 ? 1 : 4, c.send_window = seg == 8 ? 1 : 3;
                        c.in_place = elems == 64;
                        set_layout(&c, layout);
                        run_case(c);
                        ++runs;
                    }
                }
            }
        }
    }
    std::printf("# %ld ring allreduces checked\n", runs);
}

// Recursive doubling: every p (pre/post steps when p is not a power of two),
// non-commutative ops in rank order, in place, every layout.
void test_recursive_doubling(void **) {
    for (Kind kind : {Kind::sum, Kind::matmul}) {
        for (int p : {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13}) {
            for (size_t elems : {1, 33}) {
                for (auto net : completion_orders(2)) {
                    for (Layout layout : kLayouts) {
                        Case c;
                        c.allreduce = c.recdoubling = true, c.kind = kind, c.p = p, c.elems = elems, c.net = net;
                        c.in_place = p % 2 == 1;
                        set_layout(&c, layout);
                        run_case(c);
                    }
                }
            }
        }
    }
}

// Rabenseifner's: every p (pairs when p is not a power of two: the sum's
// pair splits the work, the matrix product's giver hands over all of it),
// fewer elements than ranks (empty blocks), messages past the fake's eager
// size, in the user's buffer or (strided layouts) a pool buffer, in place,
// and completion orders where pending sends overtake.
void test_rabenseifner(void **) {
    long runs = 0;
    for (Kind kind : {Kind::sum, Kind::matmul}) {
        for (int p : {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13}) {
            for (size_t elems : {size_t{1}, size_t{5}, size_t{33}, size_t{300}}) {
                for (auto net : completion_orders(2)) {
                    for (Layout layout : kLayouts) {
                        Case c;
                        c.allreduce = c.rabenseifner = true, c.kind = kind, c.p = p, c.elems = elems, c.net = net;
                        c.in_place = (p + static_cast<int>(elems)) % 2 == 1;
                        set_layout(&c, layout);
                        run_case(c);
                        ++runs;
                    }
                }
            }
        }
    }
    std::printf("# %ld Rabenseifner allreduces checked\n", runs);
}

// Reproducible: whatever the completion order, float results are bitwise
// equal; reduce and allreduce alike.
void test_reproducible_is_bitwise_stable(void **) {
    for (int variant : {0, 1, 2, 3, 4}) {  // reduce, tree allreduce, ring, recursive doubling, Rabenseifner's
        std::vector<char> reference;
        for (auto net : completion_orders(12)) {
            Case c;
            c.allreduce = variant > 0, c.ring = variant == 2, c.recdoubling = variant == 3;
            c.rabenseifner = variant == 4;
            c.kind = Kind::fsum, c.p = 9, c.root = 2, c.elems = 300;
            c.reproducible = true, c.net = net;
            std::vector<char> got = run_case(c);
            if (reference.empty()) reference = got;
            if (got != reference) fail_msg("%s: result differs from the first order", c.str().c_str());
        }
    }
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reduce_sum_and_matmul),
        cmocka_unit_test(test_reduce_three_buffer),
        cmocka_unit_test(test_allreduce_sum_and_matmul),
        cmocka_unit_test(test_shapes_windows_and_layouts),
        cmocka_unit_test(test_in_place),
        cmocka_unit_test(test_pool_cap),
        cmocka_unit_test(test_ring_allreduce),
        cmocka_unit_test(test_recursive_doubling),
        cmocka_unit_test(test_rabenseifner),
        cmocka_unit_test(test_reproducible_is_bitwise_stable),
    };
    const int failed = cmocka_run_group_tests_name("reduce_schedule", tests, nullptr, nullptr);
    // again with no second thread (threads.h: the inbox without locked instructions)
    adapt2::g_threads_may_race.store(false);
    return failed + cmocka_run_group_tests_name("reduce_schedule, one thread", tests, nullptr, nullptr);
}
