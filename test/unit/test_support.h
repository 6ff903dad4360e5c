// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// The engine's unit-test harness: a world of simulated ranks over the fake
// network (FakeWorld), the completion orders to try, the order ranks enter a
// call, a non-contiguous layout for the pack/unpack hooks, a `done`
// recorder, and the standard ops (int32 sums, affine maps: not commutative).
// Settings come from the parameter table (param_defaults.h).
#ifndef ADAPT2_TEST_SUPPORT_H
#define ADAPT2_TEST_SUPPORT_H

#include <algorithm>
#include <cstdint>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include "../../ompi/mca/coll/adapt2/adapt2_bridge.h"
#include "comm.h"
#include "fake_transport.h"
#include "param_defaults.h"

namespace adapt2::test {

// A non-contiguous layout: packed byte i lives at memory[2 * i].
struct Strided {
    char *base;
};
inline int strided_pack(void *p, size_t offset, size_t len, void *dst) {
    auto *s = static_cast<Strided *>(p);
    for (size_t i = 0; i < len; ++i) static_cast<char *>(dst)[i] = s->base[2 * (offset + i)];
    return 0;
}
inline int strided_unpack(void *p, size_t offset, size_t len, const void *src) {
    auto *s = static_cast<Strided *>(p);
    for (size_t i = 0; i < len; ++i) s->base[2 * (offset + i)] = static_cast<const char *>(src)[i];
    return 0;
}
inline adapt2_buffer_t contiguous_buffer(char *p, size_t bytes) { return {p, bytes, nullptr, nullptr, nullptr, 0, 0}; }
inline adapt2_buffer_t strided_buffer(Strided *s, size_t bytes) {
    return {nullptr, bytes, s, strided_pack, strided_unpack, 0, 0};
}

struct Done {
    int calls = 0;
    int status = 0;
};
inline void on_done(void *ctx, int status) {
    auto *d = static_cast<Done *>(ctx);
    ++d->calls;
    d->status = status;
}

// Random orders (odd seeds also let pending sends overtake each other, as
// pml ucx does, with 64-byte and larger messages pending until matched),
// then newest-first, then everything inline and eager.
inline std::vector<NetworkOptions> completion_orders(int random_seeds) {
    std::vector<NetworkOptions> out;
    for (int s = 1; s <= random_seeds; ++s) {
        bool overtake = s % 2 == 1;
        out.push_back({Order::random, static_cast<uint64_t>(s), 0.3, overtake ? 48u : 64u, overtake});
    }
    out.push_back({Order::lifo, 99, 0.0, 0, true});
    out.push_back({Order::fifo, 98, 1.0, 1 << 20, false});
    return out;
}

// p ranks over one fake network, each with its Comm (staging pool cap,
// detach pool cap: 0, no detaching).
struct FakeWorld {
    FakeNetwork net;
    std::vector<std::unique_ptr<Comm>> comms;
    FakeWorld(int p, const NetworkOptions &options, size_t pool_max = 1 << 20, size_t detach_max = 0)
        : net(p, options) {
        for (int r = 0; r < p; ++r) {
            comms.push_back(std::make_unique<Comm>(net.endpoint(r), r, p, pool_max, 0, detach_max));
        }
    }
    Comm &comm(int r) { return *comms[r]; }
    int size() const { return static_cast<int>(comms.size()); }
    void run() { net.run(); }
};

// The order in which p ranks enter a call: shuffled by `seed`.
inline std::vector<int> entry_order(int p, uint64_t seed) {
    std::vector<int> order(p);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), std::mt19937_64(seed));
    return order;
}

// An op's ctx may count its combines (nullptr: not counted).
struct OpCounter {
    long combines = 0;   // one per contribution combined
    long combines3 = 0;  // into a third buffer
};
inline void count_combine(void *ctx) {
    if (ctx) ++static_cast<OpCounter *>(ctx)->combines;
}

// inout += in, int32.
inline int sum_i32(void *ctx, const void *in, void *inout, size_t n) {
    count_combine(ctx);
    auto *a = static_cast<const int32_t *>(in);
    auto *b = static_cast<int32_t *>(inout);
    for (size_t i = 0; i < n; ++i) b[i] += a[i];
    return 0;
}

// Associative, not commutative: elements are affine maps x -> a x + b, as
// (a, b) pairs of uint32, and inout = in o inout (composition, wrapping).
inline int compose_affine(void *ctx, const void *in, void *inout, size_t n) {
    count_combine(ctx);
    auto *f = static_cast<const uint32_t *>(in);
    auto *g = static_cast<uint32_t *>(inout);
    for (size_t i = 0; i < n; ++i) {
        g[2 * i + 1] = f[2 * i] * g[2 * i + 1] + f[2 * i + 1];
        g[2 * i] = f[2 * i] * g[2 * i];
    }
    return 0;
}

}  // namespace adapt2::test

#endif
