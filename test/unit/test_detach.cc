// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Decoupled ("detached") completion over the fake network: one rank stalls
// (it starts its calls only after everyone else has run as far as it can).
// Ranks that do not depend on its data must complete all their calls
// meanwhile, even though their sends to it are still pending; the rest must
// not; once the stalled rank catches up every call finishes with the right
// data, although each detached rank poisoned its buffer right after its call
// completed. Several back-to-back calls per rank check that later calls'
// messages never mix with earlier ones. The detach pool's cap bounds what
// detaching holds: past it, calls wait as before.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "threads.h"
#include "cmocka_cxx.h"
#include "collectives.h"
#include "counters.h"
#include "test_support.h"
#include "tree.h"

using namespace adapt2;
using namespace adapt2::test;

namespace {

constexpr size_t kHuge = size_t{1} << 40;

// What the engine reported for one call on one rank.
struct Call {
    int done = 0, finished = 0;
    int done_status = -99, finished_status = -99;
    bool finished_before_done = false;
    std::function<void()> on_detach;  // runs when the call detaches (poisons the buffer)
};

void call_done(void *ctx, int status) {
    auto *c = static_cast<Call *>(ctx);
    ++c->done;
    c->done_status = status;
    if (status == ADAPT2_STATUS_DETACHED && c->on_detach) c->on_detach();
}

void call_finished(void *ctx, int status) {
    auto *c = static_cast<Call *>(ctx);
    if (c->done == 0) c->finished_before_done = true;
    ++c->finished;
    c->finished_status = status;
}

struct Setup {
    int p = 8, root = 0, stalled = 3;
    int algorithm = ADAPT2_ALG_BINOMIAL;
    size_t bytes = 1000, segment = 128;
    int calls = 3;
    size_t cap = kHuge;  // detach pool cap
    bool commutative = true;
    NetworkOptions net;

    std::string str() const {
        char b[200];
        std::snprintf(b, sizeof b,
                      "p=%d root=%d stalled=%d alg=%d bytes=%zu seg=%zu calls=%d cap=%zu comm=%d order=%d seed=%llu", p,
                      root, stalled, algorithm, bytes, segment, calls, cap, commutative, static_cast<int>(net.order),
                      static_cast<unsigned long long>(net.seed));
        return b;
    }
};

adapt2_tree_settings_t tree_settings(const Setup &s) {
    adapt2_tree_settings_t t{};
    t.algorithm = s.algorithm;
    t.fanout = 3, t.radix = 3, t.chains = 2;
    t.segment_size = s.segment;
    t.recv_window = 4;
    t.send_window = 2;
    t.detach_max_message = kHuge;
    return t;
}

TreeSpec spec_of(int algorithm) {
    switch (algorithm) {
    case ADAPT2_ALG_CHAIN: return {TreeShape::chain, 2};
    case ADAPT2_ALG_KARY: return {TreeShape::kary, 3};
    case ADAPT2_ALG_FLAT: return {TreeShape::flat, 0};
    case ADAPT2_ALG_IN_ORDER_BINOMIAL: return {TreeShape::in_order_binomial, 0};
    default: return {TreeShape::binomial, 0};
    }
}

// `rank` and every rank below it in the tree.
std::set<int> subtree(const Tree &tree, int rank) {
    std::set<int> out{rank};
    for (int c : tree.children(rank)) {
        auto sub = subtree(tree, c);
        out.insert(sub.begin(), sub.end());
    }
    return out;
}

// The world: comms with a detach pool, one record per (rank, call).
struct World : FakeWorld {
    std::vector<std::vector<Call>> calls;  // [rank][call]
    World(const Setup &s) : FakeWorld(s.p, s.net, 1 << 20, s.cap), calls(s.p, std::vector<Call>(s.calls)) {}
    void check_clean(const Setup &s) {
        for (int r = 0; r < s.p; ++r) {
            for (int k = 0; k < s.calls; ++k) {
                const Call &c = calls[r][k];
                if (c.done != 1 || c.finished != 1 || c.finished_before_done || c.finished_status != 0 ||
                    (c.done_status != 0 && c.done_status != ADAPT2_STATUS_DETACHED))
                    fail_msg("%s: rank %d call %d: done %d (%d) finished %d (%d)", s.str().c_str(), r, k, c.done,
                             c.done_status, c.finished, c.finished_status);
            }
            if (comms[r]->pool().bytes_lent() != 0 || comms[r]->detach_pool().bytes_lent() != 0)
                fail_msg("%s: rank %d kept buffers", s.str().c_str(), r);
            if (comms[r]->detach_pool().peak_bytes_lent() > s.cap)
                fail_msg("%s: rank %d held %zu detached bytes, cap %zu", s.str().c_str(), r,
                         comms[r]->detach_pool().peak_bytes_lent(), s.cap);
        }
        if (net.unmatched() != 0 || net.posted() != net.completed())
            fail_msg("%s: %zu unmatched, %ld posted, %ld completed", s.str().c_str(), net.unmatched(), net.posted(),
                     net.completed());
    }
    int detached(int rank) const {
        int n = 0;
        for (const Call &c : calls[rank]) n += c.done_status == ADAPT2_STATUS_DETACHED;
        return n;
    }
};

// Whether every segment is larger than the network's eager limit.
bool rendezvous(const Setup &s) {
    size_t last = s.bytes % s.segment ? s.bytes % s.segment : s.segment;
    return s.net.eager_limit < std::min({s.bytes, s.segment, last});
}

// Call k's tag block: 64 tags each, counting down (as Open MPI reserves them).
int tag_of(int k) { return 10000 - 64 * k; }

char pattern(int k, size_t i) { return static_cast<char>((i * 131 + 7 * k + 3) ^ (i >> 8)); }

// ---- broadcast --------------------------------------------------------------

void start_bcasts(World &w, const Setup &s, std::vector<std::vector<std::vector<char>>> &mem, int r) {
    auto settings = tree_settings(s);
    for (int k = 0; k < s.calls; ++k) {
        std::vector<char> &m = mem[r][k];
        if (r == s.root) w.calls[r][k].on_detach = [&m] { std::fill(m.begin(), m.end(), 0x77); };
        adapt2_buffer_t buf = contiguous_buffer(m.data(), s.bytes);
        if (start_bcast(*w.comms[r], buf, s.root, tag_of(k), settings, call_done, &w.calls[r][k], call_finished) != 0)
            fail_msg("%s: start failed", s.str().c_str());
    }
}

void run_bcast(const Setup &s) {
    World w(s);
    std::vector<std::vector<std::vector<char>>> mem(s.p, std::vector<std::vector<char>>(s.calls));
    for (int r = 0; r < s.p; ++r) {
        for (int k = 0; k < s.calls; ++k) {
            mem[r][k].assign(s.bytes, 0x5a);
            for (size_t i = 0; r == s.root && i < s.bytes; ++i) mem[r][k][i] = pattern(k, i);
        }
    }
    for (int r = 0; r < s.p; ++r) {
        if (r != s.stalled) start_bcasts(w, s, mem, r);
    }
    w.net.run();
    // Only the stalled rank's subtree waits for it.
    const Tree tree = build_tree(spec_of(s.algorithm), s.p, s.root);
    const std::set<int> waiting = subtree(tree, s.stalled);
    const bool all_fit = s.cap >= s.bytes * s.calls;
    for (int r = 0; r < s.p; ++r) {
        if (r == s.stalled) continue;
        bool passes_on = tree.children(r).size() > 0;
        for (int k = 0; k < s.calls; ++k) {
            int done = w.calls[r][k].done;
            if (waiting.count(r) && done)
                fail_msg("%s: rank %d call %d done before the stalled rank ran", s.str().c_str(), r, k);
            if (!waiting.count(r) && (all_fit || !passes_on) && done != 1)
                fail_msg("%s: rank %d call %d waits for the stalled rank", s.str().c_str(), r, k);
        }
    }
    start_bcasts(w, s, mem, s.stalled);
    w.net.run();
    w.check_clean(s);
    for (int r = 0; r < s.p; ++r) {
        for (int k = 0; r != s.root && k < s.calls; ++k) {
            for (size_t i = 0; i < s.bytes; ++i) {
                if (mem[r][k][i] != pattern(k, i))
                    fail_msg("%s: rank %d call %d byte %zu wrong", s.str().c_str(), r, k, i);
            }
        }
    }
    // Messages that complete unmatched (eager) leave nothing to detach from.
    if (all_fit && rendezvous(s) && w.detached(s.root) != s.calls)
        fail_msg("%s: the root detached %d calls", s.str().c_str(), w.detached(s.root));
}

void test_bcast_stalled_rank(void **) {
    for (int alg : {ADAPT2_ALG_BINOMIAL, ADAPT2_ALG_CHAIN, ADAPT2_ALG_KARY, ADAPT2_ALG_FLAT}) {
        for (const auto &net : completion_orders(6)) {
            for (int stalled : {1, 2, 5, 7}) {
                Setup s;
                s.algorithm = alg;
                s.net = net;
                s.stalled = stalled;
                s.root = stalled == 5 ? 6 : 0;
                s.bytes = stalled == 7 ? 100 : 1000;  // one segment, or several
                run_bcast(s);
            }
        }
    }
}

// With the cap reached, calls wait as before (and still finish right).
void test_bcast_cap(void **) {
    for (size_t cap : {size_t{0}, size_t{1000}, size_t{2500}}) {
        for (const auto &net : completion_orders(4)) {
            Setup s;
            s.cap = cap;
            s.net = net;
            s.calls = 4;
            run_bcast(s);
        }
    }
    // Without detaching, a root whose child is stalled cannot complete a
    // rendezvous send to it.
    Setup s;
    s.cap = 0;
    s.stalled = 1;  // a child of the binomial root
    s.net = {Order::random, 5, 0.3, 0, false};
    World w(s);
    std::vector<std::vector<std::vector<char>>> mem(
        s.p, std::vector<std::vector<char>>(s.calls, std::vector<char>(s.bytes, 1)));
    start_bcasts(w, s, mem, s.root);
    w.net.run();
    assert_int_equal(w.calls[s.root][0].done, 0);
    for (int r = 1; r < s.p; ++r) start_bcasts(w, s, mem, r);
    w.net.run();
    w.check_clean(s);
}

// ---- reduce -----------------------------------------------------------------

int32_t value(int r, int k, size_t e) { return static_cast<int32_t>(r * 1000 + k * 100 + e % 97); }

// Element e of the result: 32-bit words (2e, 2e+1) for the maps.
uint32_t expected(const Setup &s, int k, size_t word) {
    if (s.commutative) {
        uint32_t acc = 0;
        for (int r = 0; r < s.p; ++r) acc += static_cast<uint32_t>(value(r, k, word));
        return acc;
    }
    const size_t e = word / 2;
    uint32_t a = static_cast<uint32_t>(value(s.p - 1, k, 2 * e)),
             b = static_cast<uint32_t>(value(s.p - 1, k, 2 * e + 1));
    for (int r = s.p - 2; r >= 0; --r) {
        uint32_t xa = static_cast<uint32_t>(value(r, k, 2 * e)), xb = static_cast<uint32_t>(value(r, k, 2 * e + 1));
        uint32_t na = xa * a, nb = xa * b + xb;
        a = na, b = nb;
    }
    return word % 2 ? b : a;
}

struct ReduceMem {
    std::vector<std::vector<int32_t>> own, result;  // [call]
};

void start_reduces(World &w, const Setup &s, std::vector<ReduceMem> &mem, int r) {
    adapt2_reduce_settings_t settings{tree_settings(s), 0};
    adapt2_reduction_t op{
        s.commutative ? 4u : 8u, s.commutative, nullptr, s.commutative ? sum_i32 : compose_affine, nullptr, 0, 0};
    const size_t n = s.bytes / 4;
    for (int k = 0; k < s.calls; ++k) {
        std::vector<int32_t> &own = mem[r].own[k];
        w.calls[r][k].on_detach = [&own] { std::fill(own.begin(), own.end(), -1); };
        adapt2_buffer_t o = contiguous_buffer(reinterpret_cast<char *>(own.data()), n * 4);
        adapt2_buffer_t res = contiguous_buffer(reinterpret_cast<char *>(mem[r].result[k].data()), n * 4);
        if (start_reduce(*w.comms[r], o, res, false, op, s.root, tag_of(k), settings, call_done, &w.calls[r][k],
                         call_finished) != 0)
            fail_msg("%s: start failed", s.str().c_str());
    }
}

void run_reduce(const Setup &s) {
    World w(s);
    const size_t n = s.bytes / 4;
    std::vector<ReduceMem> mem(s.p);
    for (int r = 0; r < s.p; ++r) {
        for (int k = 0; k < s.calls; ++k) {
            mem[r].own.emplace_back(n);
            for (size_t e = 0; e < n; ++e) mem[r].own[k][e] = value(r, k, e);
            mem[r].result.emplace_back(n, 0x5a5a5a5a);
        }
    }
    for (int r = 0; r < s.p; ++r) {
        if (r != s.stalled) start_reduces(w, s, mem, r);
    }
    w.net.run();
    const bool all_fit = s.cap >= s.bytes * s.calls;
    for (int r = 0; r < s.p; ++r) {
        for (int k = 0; r != s.stalled && k < s.calls; ++k) {
            int done = w.calls[r][k].done;
            if (r == s.root && done) fail_msg("%s: root call %d done without the stalled rank", s.str().c_str(), k);
            if (r != s.root && all_fit && done != 1)
                fail_msg("%s: rank %d call %d waits for the stalled rank", s.str().c_str(), r, k);
        }
    }
    // The stalled rank's children cannot have delivered: they detached.
    const Tree tree = build_tree(spec_of(s.algorithm), s.p, s.root);
    for (int c : tree.children(s.stalled)) {
        if (all_fit && rendezvous(s) && w.detached(c) != s.calls)
            fail_msg("%s: rank %d detached %d calls", s.str().c_str(), c, w.detached(c));
    }
    start_reduces(w, s, mem, s.stalled);
    w.net.run();
    w.check_clean(s);
    for (int k = 0; k < s.calls; ++k) {
        for (size_t e = 0; e < n; ++e) {
            if (static_cast<uint32_t>(mem[s.root].result[k][e]) != expected(s, k, e))
                fail_msg("%s: call %d element %zu wrong", s.str().c_str(), k, e);
        }
    }
}

void test_reduce_stalled_rank(void **) {
    for (int alg : {ADAPT2_ALG_BINOMIAL, ADAPT2_ALG_CHAIN, ADAPT2_ALG_FLAT, ADAPT2_ALG_IN_ORDER_BINOMIAL}) {
        for (const auto &net : completion_orders(6)) {
            for (int stalled : {1, 4, 7}) {
                for (bool commutative : {true, false}) {
                    Setup s;
                    s.algorithm = commutative ? alg : ADAPT2_ALG_IN_ORDER_BINOMIAL;
                    s.net = net;
                    s.stalled = stalled;
                    s.root = stalled == 4 ? 5 : 0;
                    s.commutative = commutative;
                    s.bytes = stalled == 7 ? 96 : 1200;
                    run_reduce(s);
                }
            }
        }
    }
}

void test_reduce_cap(void **) {
    for (size_t cap : {size_t{0}, size_t{1200}, size_t{3000}}) {
        for (const auto &net : completion_orders(4)) {
            Setup s;
            s.cap = cap;
            s.net = net;
            s.calls = 4;
            s.bytes = 1200;
            run_reduce(s);
        }
    }
}

// ---- blocking calls: a grace period, then copies only for late peers --------

struct Graces {
    std::vector<Grace *> g;
    explicit Graces(int p) : g(p, nullptr) {}
    void fire_all() {
        for (Grace *x : g) {
            if (x) x->fire();
        }
    }
    ~Graces() {
        for (Grace *x : g) {
            if (x) x->release();
        }
    }
};

adapt2_tree_settings_t blocking_settings(const Setup &s) {
    adapt2_tree_settings_t t = tree_settings(s);
    t.blocking = 1;
    return t;
}

// Broadcast: with everybody present the root copies nothing and completes
// without detaching; with a child of the root stalled, the root waits for
// the grace period, then serves only that child from a copy. (Interior
// ranks always receive into a copy: `interior` copies of the message.)
void run_bcast_grace(const Setup &s, bool stall) {
    World w(s);
    Graces graces(s.p);
    std::vector<std::vector<char>> mem(s.p, std::vector<char>(s.bytes, 0x5a));
    for (size_t i = 0; i < s.bytes; ++i) mem[s.root][i] = pattern(0, i);
    std::vector<char> &root_mem = mem[s.root];
    w.calls[s.root][0].on_detach = [&root_mem] { std::fill(root_mem.begin(), root_mem.end(), 0x77); };
    auto settings = blocking_settings(s);
    const uint64_t copied_before = counter_value(Counter::detach_bytes);
    const Tree tree = build_tree(spec_of(s.algorithm), s.p, s.root);
    uint64_t interior = 0;
    for (int r = 0; r < s.p; ++r) interior += r != s.root && tree.children(r).size() > 0;
    auto start = [&](int r) {
        adapt2_buffer_t buf = contiguous_buffer(mem[r].data(), s.bytes);
        if (start_bcast(*w.comms[r], buf, s.root, tag_of(0), settings, call_done, &w.calls[r][0], call_finished,
                        &graces.g[r]) != 0)
            fail_msg("%s: start failed", s.str().c_str());
    };
    for (int r = 0; r < s.p; ++r) {
        if (!stall || r != s.stalled) start(r);
    }
    w.net.run();
    if (!graces.g[s.root]) fail_msg("%s: a blocking root got no grace period", s.str().c_str());
    for (int r = 0; r < s.p; ++r) {
        if (r != s.root && graces.g[r]) fail_msg("%s: rank %d got a grace period", s.str().c_str(), r);
    }
    if (!stall) {
        if (w.calls[s.root][0].done != 1 || w.calls[s.root][0].done_status != 0)
            fail_msg("%s: with everybody present the root must complete without detaching", s.str().c_str());
        if (counter_value(Counter::detach_bytes) != copied_before + interior * s.bytes)
            fail_msg("%s: copied without need", s.str().c_str());
    } else {
        if (w.calls[s.root][0].done != 0)
            fail_msg("%s: the root completed before the grace period ended", s.str().c_str());
        const uint64_t copied_before_grace = counter_value(Counter::detach_bytes);
        graces.fire_all();
        w.net.run();
        if (w.calls[s.root][0].done_status != ADAPT2_STATUS_DETACHED)
            fail_msg("%s: the root did not detach after the grace period", s.str().c_str());
        if (counter_value(Counter::detach_bytes) - copied_before_grace != s.bytes)
            fail_msg("%s: the root copied %llu bytes", s.str().c_str(),
                     static_cast<unsigned long long>(counter_value(Counter::detach_bytes) - copied_before_grace));
        start(s.stalled);
        w.net.run();
    }
    graces.fire_all();  // what a waiter does once the call is done (a no-op now)
    w.net.run();
    for (int r = 0; r < s.p; ++r) {
        for (size_t i = 0; r != s.root && i < s.bytes; ++i) {
            if (mem[r][i] != pattern(0, i)) fail_msg("%s: rank %d byte %zu wrong", s.str().c_str(), r, i);
        }
    }
    Setup one = s;
    one.calls = 1;
    w.check_clean(one);
}

void test_bcast_grace(void **) {
    for (const auto &net : completion_orders(6)) {
        for (int alg : {ADAPT2_ALG_FLAT, ADAPT2_ALG_BINOMIAL}) {
            Setup s;
            s.calls = 1;
            s.algorithm = alg;
            s.net = net;
            s.stalled = 1;                         // a child of the root in both trees
            s.bytes = (size_t{128} << 10) + 1000;  // roots await from 128 KiB (bcast.cc)
            s.segment = 32 << 10;
            run_bcast_grace(s, false);
            run_bcast_grace(s, true);
        }
    }
}

// Below watch_min_bytes (and await_min_bytes) a blocking root does not wait
// for hellos: with a child stalled it copies at once and detaches without a
// grace period.
void test_bcast_small_copies_at_once(void **) {
    for (const auto &net : completion_orders(4)) {
        Setup s;
        s.calls = 1;
        s.algorithm = ADAPT2_ALG_FLAT;
        s.net = net;
        s.stalled = 1;
        World w(s);
        Graces graces(s.p);
        std::vector<std::vector<char>> mem(s.p, std::vector<char>(s.bytes, 0x5a));
        for (size_t i = 0; i < s.bytes; ++i) mem[s.root][i] = pattern(0, i);
        auto settings = blocking_settings(s);
        settings.await_min_bytes = s.bytes + 1;
        settings.watch_min_bytes = s.bytes + 1;
        auto start = [&](int r) {
            adapt2_buffer_t buf = contiguous_buffer(mem[r].data(), s.bytes);
            if (start_bcast(*w.comms[r], buf, s.root, tag_of(0), settings, call_done, &w.calls[r][0], call_finished,
                            &graces.g[r]) != 0)
                fail_msg("%s: start failed", s.str().c_str());
        };
        for (int r = 0; r < s.p; ++r) {
            if (r != s.stalled) start(r);
        }
        w.net.run();
        if (graces.g[s.root]) fail_msg("%s: a small broadcast got a grace period", s.str().c_str());
        if (rendezvous(s) && w.calls[s.root][0].done_status != ADAPT2_STATUS_DETACHED)
            fail_msg("%s: the root did not detach at once", s.str().c_str());
        std::fill(mem[s.root].begin(), mem[s.root].end(), 0x77);  // the user's buffer is free
        start(s.stalled);
        w.net.run();
        for (int r = 0; r < s.p; ++r) {
            for (size_t i = 0; r != s.root && i < s.bytes; ++i) {
                if (mem[r][i] != pattern(0, i)) fail_msg("%s: rank %d byte %zu wrong", s.str().c_str(), r, i);
            }
        }
        w.check_clean(s);
    }
}

// From watch_min_bytes to await_min_bytes a blocking root watches
// (late_peers.h). Call 0, all in step: it sends from the user's buffer and
// copies nothing. Call 1, a child stalled: the grace period ends and the
// root still waits for it, copying nothing. Call 2: it copies at once, and
// so on while its children are not in step; after 8 calls in step (calls
// 3-10, all starting together) it watches again: no copy in calls 10-13.
struct WatchedCalls {
    const Setup &s;
    World w;
    std::vector<Graces> graces;                       // [call]
    std::vector<std::vector<std::vector<char>>> mem;  // [call][rank]
    adapt2_tree_settings_t settings;
    explicit WatchedCalls(const Setup &setup)
        : s(setup),
          w(setup),
          graces(setup.calls, Graces(setup.p)),
          mem(setup.calls, std::vector<std::vector<char>>(setup.p, std::vector<char>(setup.bytes, 0x5a))),
          settings(blocking_settings(setup)) {
        settings.await_min_bytes = s.bytes + 1;
        settings.watch_min_bytes = s.bytes;
        for (int c = 0; c < s.calls; ++c) {
            for (size_t i = 0; i < s.bytes; ++i) mem[c][s.root][i] = pattern(c, i);
        }
    }
    void start(int r, int c) {
        adapt2_buffer_t buf = contiguous_buffer(mem[c][r].data(), s.bytes);
        if (start_bcast(*w.comms[r], buf, s.root, tag_of(c), settings, call_done, &w.calls[r][c], call_finished,
                        &graces[c].g[r]) != 0)
            fail_msg("%s: call %d: start failed", s.str().c_str(), c);
    }
    // Runs call c on every rank but `absent` (-1: none); what it copied.
    uint64_t run(int c, int absent) {
        const uint64_t before = counter_value(Counter::detach_bytes);
        for (int r = 0; r < s.p; ++r) {
            if (r != absent) start(r, c);
        }
        w.net.run();
        return counter_value(Counter::detach_bytes) - before;
    }
    void check_data() {
        for (int c = 0; c < s.calls; ++c) {
            for (int r = 0; r < s.p; ++r) {
                for (size_t i = 0; r != s.root && i < s.bytes; ++i) {
                    if (mem[c][r][i] != pattern(c, i))
                        fail_msg("%s: call %d rank %d byte %zu wrong", s.str().c_str(), c, r, i);
                }
            }
        }
    }
};

void test_bcast_watching_root(void **) {
    for (const auto &net : completion_orders(4)) {
        Setup s;
        s.p = 4, s.calls = 14, s.algorithm = ADAPT2_ALG_FLAT, s.net = net, s.stalled = 2;
        s.bytes = 3000, s.segment = 1000;
        WatchedCalls t(s);
        const Call &root0 = t.w.calls[s.root][0];
        if (t.run(0, -1) != 0 || !t.graces[0].g[s.root] || root0.done != 1)
            fail_msg("%s: in step the root must send from the user's buffer, with a grace period", s.str().c_str());
        t.graces[0].fire_all();
        // Eager sends complete without their receiver: then nobody is late.
        const bool waits = rendezvous(s);
        const uint64_t before = counter_value(Counter::detach_bytes);
        if (t.run(1, s.stalled) != 0 || t.w.calls[s.root][1].done != (waits ? 0 : 1))
            fail_msg("%s: the root must wait for a late child (rendezvous), copying nothing", s.str().c_str());
        t.graces[1].fire_all();  // the period ends: the child is late
        t.w.net.run();
        if (t.w.calls[s.root][1].done != (waits ? 0 : 1) || counter_value(Counter::detach_bytes) != before)
            fail_msg("%s: watching, the root copied or completed at the grace's end", s.str().c_str());
        t.start(s.stalled, 1);
        t.w.net.run();
        if (counter_value(Counter::detach_bytes) != before || t.w.calls[s.root][1].done != 1)
            fail_msg("%s: the late child's call must end without a copy", s.str().c_str());
        for (int c = 2; c < s.calls; ++c) {
            const uint64_t copied = t.run(c, -1);
            const bool copies = waits && c <= 9;  // from the call after the late one, until 8 calls in step
            if (copied != (copies ? s.bytes : 0) || (t.graces[c].g[s.root] != nullptr) == copies)
                fail_msg("%s: call %d copied %llu bytes (grace %d), expected %zu", s.str().c_str(), c,
                         static_cast<unsigned long long>(copied), t.graces[c].g[s.root] != nullptr,
                         copies ? s.bytes : 0);
            t.graces[c].fire_all();
            t.w.net.run();
        }
        t.check_data();
        t.w.check_clean(s);
    }
}

// Reduce: a leaf of the root sends from its own buffer once the root said
// hello, no copy, and copies when the grace period ends if the root is
// stalled; a leaf of an interior rank copies at once (that parent may detach
// before pulling); an interior rank whose parent is stalled detaches for free
// once its own data is combined (what is left sits in its slots) if all its
// segments fit in its slots, else it copies the rest when the period ends.
// Below `await_min` (coll_adapt2_detach_await_min_bytes) a leaf of the root
// copies at once too.
void run_reduce_grace(const Setup &s, bool stall, size_t await_min = 0) {
    World w(s);
    Graces graces(s.p);
    const size_t n = s.bytes / 4;
    std::vector<std::vector<int32_t>> own(s.p, std::vector<int32_t>(n)), result(s.p, std::vector<int32_t>(n, 7));
    for (int r = 0; r < s.p; ++r) {
        for (size_t e = 0; e < n; ++e) own[r][e] = value(r, 0, e);
        std::vector<int32_t> &o = own[r];
        w.calls[r][0].on_detach = [&o] { std::fill(o.begin(), o.end(), -1); };
    }
    adapt2_reduce_settings_t settings{blocking_settings(s), 0};
    settings.tree.await_min_bytes = await_min;
    settings.tree.watch_min_bytes = kHuge;  // watching: test_reduce_watching_leaf
    adapt2_reduction_t op{4, 1, nullptr, sum_i32, nullptr, 0, 0};
    const uint64_t copied_before = counter_value(Counter::detach_bytes);
    const Tree tree = build_tree(spec_of(s.algorithm), s.p, s.root);
    auto copies_at_once = [&](int r) {  // leaves of interior ranks, and of the root below await_min
        return r != s.root && tree.children(r).size() == 0 && (tree.parent(r) != s.root || s.bytes < await_min);
    };
    uint64_t at_once = 0;
    for (int r = 0; r < s.p; ++r) at_once += copies_at_once(r) && (!stall || r != s.stalled) ? s.bytes : 0;
    auto start = [&](int r) {
        adapt2_buffer_t o = contiguous_buffer(reinterpret_cast<char *>(own[r].data()), n * 4);
        adapt2_buffer_t res = contiguous_buffer(reinterpret_cast<char *>(result[r].data()), n * 4);
        if (start_reduce(*w.comms[r], o, res, false, op, s.root, tag_of(0), settings, call_done, &w.calls[r][0],
                         call_finished, &graces.g[r]) != 0)
            fail_msg("%s: start failed", s.str().c_str());
    };
    for (int r = 0; r < s.p; ++r) {
        if (!stall || r != s.stalled) start(r);
    }
    w.net.run();
    if (!stall) {
        if (counter_value(Counter::detach_bytes) != copied_before + at_once)
            fail_msg("%s: copied without need", s.str().c_str());
    } else {
        // The stalled rank's children: leaves wait for the grace period;
        // interior ones are done already, with nothing copied.
        for (int c : tree.children(s.stalled)) {
            bool leaf = tree.children(c).size() == 0;
            int done = w.calls[c][0].done;
            if (leaf && !copies_at_once(c) && done)
                fail_msg("%s: leaf %d completed before the grace period ended", s.str().c_str(), c);
            if (leaf && copies_at_once(c) && done != 1)
                fail_msg("%s: leaf %d of an interior rank did not detach at once", s.str().c_str(), c);
            bool fits = s.bytes <= s.segment * 4;  // recv_window 4 slots
            if (!leaf && fits && (done != 1 || w.calls[c][0].done_status != ADAPT2_STATUS_DETACHED))
                fail_msg("%s: interior rank %d did not detach for free", s.str().c_str(), c);
        }
        if (counter_value(Counter::detach_bytes) != copied_before + at_once)
            fail_msg("%s: copied before the grace period", s.str().c_str());
        graces.fire_all();
        w.net.run();
        for (int c : tree.children(s.stalled)) {
            if (w.calls[c][0].done != 1) fail_msg("%s: rank %d not done after the grace period", s.str().c_str(), c);
        }
        start(s.stalled);
        w.net.run();
    }
    graces.fire_all();
    w.net.run();
    for (size_t e = 0; e < n; ++e) {
        if (static_cast<uint32_t>(result[s.root][e]) != expected(s, 0, e))
            fail_msg("%s: element %zu wrong", s.str().c_str(), e);
    }
    Setup one = s;
    one.calls = 1;
    w.check_clean(one);
}

void test_reduce_grace(void **) {
    for (const auto &net : completion_orders(6)) {
        Setup s;
        s.calls = 1;
        s.algorithm = ADAPT2_ALG_BINOMIAL;  // 0's children 4, 2, 1; 4's are 6, 5; 2's is 3; 6's is 7
        s.net = net;
        for (size_t bytes : {size_t{96}, size_t{1200}}) {
            for (int stalled : {0, 4, 6}) {
                s.bytes = bytes;
                s.stalled = stalled;
                for (size_t await_min : {size_t{0}, bytes + 1}) {
                    run_reduce_grace(s, false, await_min);
                    run_reduce_grace(s, true, await_min);
                }
            }
        }
    }
}

// A reduce leaf of the root watches as a broadcast root does (late_peers.h):
// in step no leaf copies; a late root is waited for, copying nothing; from
// the next call the leaves copy, until 8 calls in step (calls 3-10).
void test_reduce_watching_leaf(void **) {
    for (const auto &net : completion_orders(4)) {
        Setup s;
        s.p = 4, s.calls = 14, s.algorithm = ADAPT2_ALG_FLAT, s.net = net, s.root = 0, s.stalled = 0;
        s.bytes = 3000, s.segment = 1000;
        World w(s);
        std::vector<Graces> graces(s.calls, Graces(s.p));
        const size_t n = s.bytes / 4;
        std::vector<std::vector<std::vector<int32_t>>> own(s.calls), result(s.calls);
        for (int c = 0; c < s.calls; ++c) {
            own[c].assign(s.p, std::vector<int32_t>(n));
            result[c].assign(s.p, std::vector<int32_t>(n, 7));
            for (int r = 0; r < s.p; ++r) {
                for (size_t e = 0; e < n; ++e) own[c][r][e] = value(r, c, e);
            }
        }
        adapt2_reduce_settings_t settings{blocking_settings(s), 0};
        settings.tree.await_min_bytes = s.bytes + 1;
        settings.tree.watch_min_bytes = s.bytes;
        adapt2_reduction_t op{4, 1, nullptr, sum_i32, nullptr, 0, 0};
        auto start = [&](int r, int c) {
            adapt2_buffer_t o = contiguous_buffer(reinterpret_cast<char *>(own[c][r].data()), n * 4);
            adapt2_buffer_t res = contiguous_buffer(reinterpret_cast<char *>(result[c][r].data()), n * 4);
            if (start_reduce(*w.comms[r], o, res, false, op, s.root, tag_of(c), settings, call_done, &w.calls[r][c],
                             call_finished, &graces[c].g[r]) != 0)
                fail_msg("%s: call %d: start failed", s.str().c_str(), c);
        };
        auto run = [&](int c, int absent) {  // what the call copied, all ranks together
            const uint64_t before = counter_value(Counter::detach_bytes);
            for (int r = 0; r < s.p; ++r) {
                if (r != absent) start(r, c);
            }
            w.net.run();
            return counter_value(Counter::detach_bytes) - before;
        };
        const bool waits = rendezvous(s);  // eager sends complete without the root
        if (run(0, -1) != 0 || w.calls[1][0].done != 1 || !graces[0].g[1])
            fail_msg("%s: in step a leaf must send from the user's buffer, with a grace period", s.str().c_str());
        graces[0].fire_all();
        const uint64_t before = counter_value(Counter::detach_bytes);
        if (run(1, s.root) != 0 || w.calls[1][1].done != (waits ? 0 : 1))
            fail_msg("%s: a leaf must wait for a late root (rendezvous), copying nothing", s.str().c_str());
        graces[1].fire_all();  // the period ends: the root is late
        w.net.run();
        start(s.root, 1);
        w.net.run();
        if (counter_value(Counter::detach_bytes) != before || w.calls[1][1].done != 1)
            fail_msg("%s: the late root's call must end without a copy", s.str().c_str());
        for (int c = 2; c < s.calls; ++c) {
            const bool copies = waits && c <= 9;  // from the call after the late one, until 8 calls in step
            const uint64_t copied = run(c, -1), leaves = s.p - 1;
            if (copied != (copies ? leaves * s.bytes : 0))
                fail_msg("%s: call %d copied %llu bytes, expected %llu", s.str().c_str(), c,
                         static_cast<unsigned long long>(copied),
                         static_cast<unsigned long long>(copies ? leaves * s.bytes : 0));
            graces[c].fire_all();
            w.net.run();
        }
        for (int c = 0; c < s.calls; ++c) {
            for (size_t e = 0; e < n; ++e) {
                if (static_cast<uint32_t>(result[c][s.root][e]) != expected(s, c, e))
                    fail_msg("%s: call %d element %zu wrong", s.str().c_str(), c, e);
            }
        }
        w.check_clean(s);
    }
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bcast_stalled_rank),   cmocka_unit_test(test_bcast_cap),
        cmocka_unit_test(test_reduce_stalled_rank),  cmocka_unit_test(test_reduce_cap),
        cmocka_unit_test(test_bcast_grace),          cmocka_unit_test(test_bcast_small_copies_at_once),
        cmocka_unit_test(test_bcast_watching_root),  cmocka_unit_test(test_reduce_grace),
        cmocka_unit_test(test_reduce_watching_leaf),
    };
    const int failed = cmocka_run_group_tests_name("detach", tests, nullptr, nullptr);
    // again with no second thread (threads.h: the inbox without locked instructions)
    adapt2::g_threads_may_race.store(false);
    return failed + cmocka_run_group_tests_name("detach, one thread", tests, nullptr, nullptr);
}
