// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// A call's memory: the arena its flows live in (call_arena.h) and the
// schedules a communicator keeps (schedule_cache.h). Starting a broadcast,
// reduce or allreduce of a shape seen before takes nothing from the heap
// (global operator new is counted while the engine starts the call, the fake
// network's own bookkeeping excluded), and results stay right while kept
// schedules serve call after call of changing shapes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "call_arena.h"
#include "cmocka_cxx.h"
#include "collectives.h"
#include "schedule.h"
#include "schedule_cache.h"
#include "test_support.h"

using namespace adapt2;
using namespace adapt2::test;

// ---- counting operator new ------------------------------------------------
// Every form is replaced (the library's nothrow and array forms too), so that
// each delete frees what the matching new allocated (AddressSanitizer checks).

namespace {
thread_local bool counting = false;
long news = 0;  // operator new calls while counting

void *counted(size_t n, size_t align) {
    if (counting) ++news;
    if (n == 0) n = 1;
    if (align <= alignof(std::max_align_t)) return std::malloc(n);
    return std::aligned_alloc(align, (n + align - 1) / align * align);
}
void *counted_or_throw(size_t n, size_t align) {
    if (void *p = counted(n, align)) return p;
    throw std::bad_alloc();
}
}  // namespace

void *operator new(size_t n) { return counted_or_throw(n, 0); }
void *operator new[](size_t n) { return counted_or_throw(n, 0); }
void *operator new(size_t n, std::align_val_t a) { return counted_or_throw(n, static_cast<size_t>(a)); }
void *operator new[](size_t n, std::align_val_t a) { return counted_or_throw(n, static_cast<size_t>(a)); }
void *operator new(size_t n, const std::nothrow_t &) noexcept { return counted(n, 0); }
void *operator new[](size_t n, const std::nothrow_t &) noexcept { return counted(n, 0); }
void *operator new(size_t n, std::align_val_t a, const std::nothrow_t &) noexcept {
    return counted(n, static_cast<size_t>(a));
}
void *operator new[](size_t n, std::align_val_t a, const std::nothrow_t &) noexcept {
    return counted(n, static_cast<size_t>(a));
}
// These replace the global operator new, so malloc'd memory is what they free.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void *p) noexcept { std::free(p); }
void operator delete[](void *p) noexcept { std::free(p); }
void operator delete(void *p, size_t) noexcept { std::free(p); }
void operator delete[](void *p, size_t) noexcept { std::free(p); }
void operator delete(void *p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void *p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void *p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void *p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void *p, const std::nothrow_t &) noexcept { std::free(p); }
void operator delete[](void *p, const std::nothrow_t &) noexcept { std::free(p); }
void operator delete(void *p, std::align_val_t, const std::nothrow_t &) noexcept { std::free(p); }
void operator delete[](void *p, std::align_val_t, const std::nothrow_t &) noexcept { std::free(p); }

namespace {

// The fake network allocates as it queues messages: its posts do not count.
class UncountedTransport final : public Transport {
public:
    explicit UncountedTransport(std::unique_ptr<Transport> inner) : inner_(std::move(inner)) {}
    int send(const void *buf, size_t len, int peer, int tag, Op *op) override {
        return paused([&] { return inner_->send(buf, len, peer, tag, op); });
    }
    int recv(void *buf, size_t len, int peer, int tag, Op *op) override {
        return paused([&] { return inner_->recv(buf, len, peer, tag, op); });
    }

private:
    template <typename F>
    static int paused(F post) {
        const bool was = counting;
        counting = false;
        int rc = post();
        counting = was;
        return rc;
    }
    std::unique_ptr<Transport> inner_;
};

// ---- the arena ----------------------------------------------------------------

void test_arena_grows_to_the_largest_call(void **) {
    CallArena arena;
    assert_int_equal(arena.capacity(), 0);
    void *a = arena.allocate(100, 8);
    void *b = arena.allocate(3, 1);
    void *c = arena.allocate(64, 64);
    assert_true(reinterpret_cast<uintptr_t>(c) % 64 == 0);
    std::memset(a, 1, 100), std::memset(b, 2, 3), std::memset(c, 3, 64);  // usable (ASan checks)
    assert_true(arena.used() >= 167);
    arena.reset();
    const size_t grown = arena.capacity();
    assert_true(grown >= 167);  // the first call's needs, one block now
    // The same call again comes from the block, in the same places.
    auto *base = static_cast<char *>(arena.allocate(100, 8));
    assert_true(arena.allocate(3, 1) == base + 100);
    void *c2 = arena.allocate(64, 64);
    assert_true(static_cast<char *>(c2) >= base && static_cast<char *>(c2) + 64 <= base + grown);
    arena.reset();
    assert_int_equal(arena.capacity(), grown);  // no growth for a call that fit
    // A bigger call overflows to the heap and grows the block after.
    std::vector<void *> got;
    for (int i = 0; i < 50; ++i) got.push_back(arena.allocate(100, 16));
    for (void *p : got) std::memset(p, 4, 100);
    assert_true(arena.used() >= 5000);
    arena.reset();
    assert_true(arena.capacity() >= 5000);
}

void test_arena_refuses_oversized_alignment(void **) {
    CallArena arena;
    bool threw = false;
    try {
        (void)arena.allocate(8, 128);
    } catch (const std::bad_alloc &) {
        threw = true;
    }
    assert_true(threw);
}

// ---- the cache --------------------------------------------------------------

void test_cache_keeps_at_most_its_max(void **) {
    FakeNetwork net(1, {});
    Comm comm(net.endpoint(0), 0, 1, 1 << 20);
    ScheduleCache &cache = comm.schedules();
    cache.set_max(2);
    std::vector<Schedule *> s;
    for (int i = 0; i < 3; ++i) s.push_back(new_schedule(comm, nullptr, nullptr).release());
    assert_int_equal(cache.kept(), 0);  // all three in use
    for (Schedule *x : s) x->recycle();
    assert_int_equal(cache.kept(), 2);  // the third was freed (ASan/valgrind: no leak)
    Schedule *again = new_schedule(comm, nullptr, nullptr).release();
    assert_true(again == s[0] || again == s[1]);
    assert_int_equal(cache.kept(), 1);
    again->recycle();
    cache.set_max(0);
    assert_int_equal(cache.kept(), 0);             // shrinking frees the kept ones
    new_schedule(comm, nullptr, nullptr).reset();  // a handle recycles what it did not start
    assert_int_equal(cache.kept(), 0);
}

// ---- calls that allocate nothing ----------------------------------------------

enum class Kind { bcast, reduce, allreduce };
const char *kind_name(Kind k) { return k == Kind::bcast ? "bcast" : k == Kind::reduce ? "reduce" : "allreduce"; }

struct World {
    FakeNetwork net;
    std::vector<std::unique_ptr<Comm>> comms;
    World(int p, const NetworkOptions &o) : net(p, o) {
        for (int r = 0; r < p; ++r) {
            auto t = std::make_unique<UncountedTransport>(net.endpoint(r));
            comms.push_back(std::make_unique<Comm>(std::move(t), r, p, 1 << 20));
        }
    }
};

int32_t value(int rank, size_t i, int call) { return rank * 1000 + static_cast<int32_t>(i) * 3 + call; }

// One call on every rank, every element checked. Returns the operator new
// calls the engine made while starting it on all ranks.
long run_call(World &w, Kind kind, size_t ints, int root, int call, int tag, const adapt2_tree_settings_t &tree) {
    const int p = static_cast<int>(w.comms.size());
    std::vector<std::vector<int32_t>> in(p, std::vector<int32_t>(ints)), out(p, std::vector<int32_t>(ints, -1));
    std::vector<Done> done(p);
    const size_t bytes = ints * sizeof(int32_t);
    adapt2_reduction_t op{sizeof(int32_t), true, nullptr, sum_i32, nullptr, 0, 0};
    for (int r = 0; r < p; ++r)
        for (size_t i = 0; i < ints; ++i) in[r][i] = kind == Kind::bcast && r != root ? -7 : value(r, i, call);
    const long before = news;
    for (int r = 0; r < p; ++r) {
        adapt2_buffer_t own = contiguous_buffer(reinterpret_cast<char *>(in[r].data()), bytes);
        adapt2_buffer_t res = contiguous_buffer(reinterpret_cast<char *>(out[r].data()), bytes);
        counting = true;
        int rc = 0;
        if (kind == Kind::bcast) {
            rc = start_bcast(*w.comms[r], own, root, tag, tree, on_done, &done[r]);
        } else if (kind == Kind::reduce) {
            rc = start_reduce(*w.comms[r], own, res, false, op, root, tag, {tree, 0}, on_done, &done[r]);
        } else {
            adapt2_allreduce_settings_t s{};
            s.tree = tree;
            s.algorithm = ADAPT2_ALLREDUCE_TREE;
            rc = start_allreduce(*w.comms[r], own, res, false, op, tag, s, on_done, &done[r]);
        }
        counting = false;
        if (rc != 0) fail_msg("%s call %d: rank %d: start failed (%d)", kind_name(kind), call, r, rc);
    }
    const long started = news - before;
    w.net.run();
    for (int r = 0; r < p; ++r) {
        if (done[r].calls != 1 || done[r].status != 0)
            fail_msg("%s call %d: rank %d done %d times, status %d", kind_name(kind), call, r, done[r].calls,
                     done[r].status);
        if (kind == Kind::reduce && r != root) continue;
        for (size_t i = 0; i < ints; ++i) {
            int32_t want = 0;
            if (kind == Kind::bcast) {
                want = value(root, i, call);
            } else {
                for (int q = 0; q < p; ++q) want += value(q, i, call);
            }
            const int32_t got = kind == Kind::bcast ? in[r][i] : out[r][i];
            if (got != want)
                fail_msg("%s call %d: rank %d element %zu is %d, expected %d", kind_name(kind), call, r, i, got, want);
        }
    }
    return started;
}

void test_repeated_calls_start_without_allocating(void **) {
    for (const NetworkOptions &order : completion_orders(2)) {
        for (int p : {2, 5, 8}) {
            World w(p, order);
            adapt2_tree_settings_t tree = defaults::tree_settings(0);
            tree.algorithm = ADAPT2_ALG_BINOMIAL;
            int call = 0, tag = -1000;
            // Shapes alternate (kinds, sizes, one or several segments,
            // roots): the kept schedule serves them all. Each round repeats
            // the first one's shapes (with new data).
            for (int round = 0; round < 4; ++round) {
                int shape = 0;
                for (Kind kind : {Kind::bcast, Kind::reduce, Kind::allreduce}) {
                    for (size_t ints : {size_t{1}, size_t{300}}) {
                        tree.segment_size = ints > 1 ? 256 : 0;
                        const long got = run_call(w, kind, ints, shape++ % p, call, tag, tree);
                        tag -= 64;
                        ++call;
                        // Round 0 sizes the schedule and the pools; after that nothing.
                        if (round >= 1 && got != 0)
                            fail_msg("p=%d order=%d: %s of %zu ints, round %d: %ld allocations starting it", p,
                                     static_cast<int>(order.order), kind_name(kind), ints, round, got);
                    }
                }
            }
            for (auto &c : w.comms) {
                if (c->schedules().kept() < 1) fail_msg("p=%d: no schedule kept", p);
                if (c->pool().bytes_lent() != 0) fail_msg("p=%d: buffers still lent", p);
            }
        }
    }
}

// The control: with no schedules kept, every start allocates (the counter
// sees the engine's allocations).
void test_without_cache_every_start_allocates(void **) {
    World w(4, {});
    for (auto &c : w.comms) c->schedules().set_max(0);
    adapt2_tree_settings_t tree = defaults::tree_settings(0);
    for (int call = 0; call < 4; ++call) {
        const long got = run_call(w, Kind::allreduce, 10, 0, call, -1000 - 64 * call, tree);
        if (got < 4) fail_msg("call %d: %ld allocations on 4 ranks without a cache", call, got);
    }
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arena_grows_to_the_largest_call),
        cmocka_unit_test(test_arena_refuses_oversized_alignment),
        cmocka_unit_test(test_cache_keeps_at_most_its_max),
        cmocka_unit_test(test_repeated_calls_start_without_allocating),
        cmocka_unit_test(test_without_cache_every_start_allocates),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
