// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// The broadcast schedule over the fake network, under many completion orders:
// every rank gets every byte, each segment reaches each rank exactly once,
// windows are never exceeded, `done` fires exactly once per rank, nothing is
// left posted or borrowed.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "threads.h"
#include "cmocka_cxx.h"
#include "collectives.h"
#include "fake_transport.h"
#include "segments.h"
#include "test_support.h"

using namespace adapt2;
using namespace adapt2::test;

namespace {

constexpr char kPoison = 0x5a;

char pattern(size_t i) { return static_cast<char>((i * 131 + 7) ^ (i >> 8)); }

int failing_pack(void *, size_t, size_t, void *) { return -7; }

enum class Layout { contiguous, strided, mixed };

struct Case {
    int p = 4;
    int root = 0;
    size_t bytes = 1000;
    TreeSpec tree{TreeShape::binomial, 0};
    size_t segment = 64;
    int recv_window = 4, send_window = 2;
    Layout layout = Layout::contiguous;
    NetworkOptions net;
    size_t pool_max = 1 << 20;

    std::string str() const {
        char b[256];
        std::snprintf(b, sizeof b,
                      "p=%d root=%d bytes=%zu tree=%s(%d) seg=%zu win=%d:%d layout=%d order=%d overtake=%d seed=%llu",
                      p, root, bytes, std::string(tree_shape_name(tree.shape)).c_str(), tree.param, segment,
                      recv_window, send_window, static_cast<int>(layout), static_cast<int>(net.order),
                      net.overtake_pending, static_cast<unsigned long long>(net.seed));
        return b;
    }
};

adapt2_bcast_settings_t settings_for(const Case &c) {
    adapt2_bcast_settings_t s{};
    s.algorithm = ADAPT2_ALG_BINOMIAL;  // replaced below: tests force the tree directly
    switch (c.tree.shape) {
    case TreeShape::binomial: s.algorithm = ADAPT2_ALG_BINOMIAL; break;
    case TreeShape::in_order_binomial: s.algorithm = ADAPT2_ALG_IN_ORDER_BINOMIAL; break;
    case TreeShape::binary: s.algorithm = ADAPT2_ALG_BINARY; break;
    case TreeShape::kary: s.algorithm = ADAPT2_ALG_KARY; break;
    case TreeShape::knomial: s.algorithm = ADAPT2_ALG_KNOMIAL; break;
    case TreeShape::chain: s.algorithm = ADAPT2_ALG_CHAIN; break;
    case TreeShape::pipeline: s.algorithm = ADAPT2_ALG_PIPELINE; break;
    case TreeShape::flat: s.algorithm = ADAPT2_ALG_FLAT; break;
    case TreeShape::two_tree: s.algorithm = ADAPT2_ALG_TWO_TREE; break;
    }
    s.fanout = s.radix = s.chains = c.tree.param;
    s.segment_size = c.segment;
    s.recv_window = c.recv_window;
    s.send_window = c.send_window;
    return s;
}

bool strided_rank(const Case &c, int r) {
    return c.layout == Layout::strided || (c.layout == Layout::mixed && r % 2 == 1);
}

// Runs one broadcast on every rank of a fresh fake world and checks it all.
void run_case(const Case &c) {
    FakeWorld world(c.p, c.net, c.pool_max);
    FakeNetwork &net = world.net;

    std::vector<std::vector<char>> mem(c.p);
    std::vector<Strided> strided(c.p);
    std::vector<adapt2_buffer_t> bufs(c.p);
    for (int r = 0; r < c.p; ++r) {
        bool s = strided_rank(c, r);
        mem[r].assign(c.bytes * (s ? 2 : 1) + 1, kPoison);
        for (size_t i = 0; r == c.root && i < c.bytes; ++i) mem[r][s ? 2 * i : i] = pattern(i);
        strided[r].base = mem[r].data();
        bufs[r] = s ? adapt2_buffer_t{nullptr, c.bytes, &strided[r], strided_pack, strided_unpack, 0, 0}
                    : adapt2_buffer_t{mem[r].data(), c.bytes, nullptr, nullptr, nullptr, 0, 0};
    }
    // Ranks enter the collective in a random order.
    std::vector<Done> done(c.p);
    auto s = settings_for(c);
    for (int r : entry_order(c.p, c.net.seed * 7 + 1)) {
        int rc = start_bcast(world.comm(r), bufs[r], c.root, 42, s, on_done, &done[r]);
        if (rc != 0) fail_msg("%s: start failed %d", c.str().c_str(), rc);
    }
    world.run();

    // two trees: the halves' segments (a one-segment message becomes two
    // messages), and each half's windows
    const bool halves = c.tree.shape == TreeShape::two_tree && c.bytes >= 2;
    int nseg = Segments(c.bytes, c.segment).count();
    if (halves && nseg == 1) nseg = 2;
    const int flows = halves ? 2 : 1;
    for (int r = 0; r < c.p; ++r) {
        if (done[r].calls != 1 || done[r].status != 0)
            fail_msg("%s: rank %d done %d times, status %d", c.str().c_str(), r, done[r].calls, done[r].status);
        bool st = strided_rank(c, r);
        for (size_t i = 0; i < c.bytes; ++i) {
            if (mem[r][st ? 2 * i : i] != pattern(i)) fail_msg("%s: rank %d byte %zu wrong", c.str().c_str(), r, i);
            if (st && mem[r][2 * i + 1] != kPoison) fail_msg("%s: rank %d hole %zu written", c.str().c_str(), r, i);
        }
        if (mem[r].back() != kPoison) fail_msg("%s: rank %d wrote past the end", c.str().c_str(), r);
        long expect = r == c.root ? 0 : nseg;
        if (net.messages_received(r) != expect)
            fail_msg("%s: rank %d received %ld segments, expected %ld", c.str().c_str(), r, net.messages_received(r),
                     expect);
        if (net.max_recvs_in_flight(r) > flows * c.recv_window)
            fail_msg("%s: rank %d had %d receives posted", c.str().c_str(), r, net.max_recvs_in_flight(r));
        for (int d = 0; d < c.p; ++d) {
            if (net.max_sends_in_flight(r, d) > flows * c.send_window)
                fail_msg("%s: %d->%d had %d sends in flight", c.str().c_str(), r, d, net.max_sends_in_flight(r, d));
        }
        if (world.comm(r).pool().bytes_lent() != 0) fail_msg("%s: rank %d kept staging buffers", c.str().c_str(), r);
    }
    if (net.unmatched() != 0 || net.posted() != net.completed())
        fail_msg("%s: %zu unmatched, %ld posted, %ld completed", c.str().c_str(), net.unmatched(), net.posted(),
                 net.completed());
}

const TreeSpec kTrees[] = {
    {TreeShape::binomial, 0}, {TreeShape::in_order_binomial, 0},
    {TreeShape::binary, 0},   {TreeShape::kary, 3},
    {TreeShape::knomial, 3},  {TreeShape::chain, 2},
    {TreeShape::pipeline, 0}, {TreeShape::flat, 0},
    {TreeShape::two_tree, 0},
};

std::vector<NetworkOptions> orders(int random_seeds) { return completion_orders(random_seeds); }

void test_contiguous_all_shapes(void **) {
    long runs = 0;
    for (int p : {1, 2, 3, 4, 5, 8, 13}) {
        for (const auto &tree : kTrees) {
            for (int root : {0, p / 2, p - 1}) {
                for (size_t bytes : {0, 1, 63, 64, 65, 5 * 64 + 3}) {
                    for (auto net : orders(4)) {
                        Case c;
                        c.p = p, c.root = root, c.bytes = bytes, c.tree = tree, c.net = net;
                        run_case(c);
                        ++runs;
                    }
                }
            }
        }
    }
    std::printf("# %ld broadcasts checked\n", runs);
}

void test_windows(void **) {
    for (auto [rw, sw] : {std::pair{1, 1}, std::pair{2, 1}, std::pair{3, 2}, std::pair{64, 8}}) {
        for (const auto &tree : kTrees) {
            for (auto net : orders(6)) {
                Case c;
                c.p = 9, c.root = 4, c.bytes = 40 * 64 + 1, c.tree = tree, c.net = net;
                c.recv_window = rw, c.send_window = sw;
                run_case(c);
            }
        }
    }
}

void test_noncontiguous_and_mixed_layouts(void **) {
    for (Layout layout : {Layout::strided, Layout::mixed}) {
        for (const auto &tree : kTrees) {
            for (size_t bytes : {1, 64, 65, 17 * 64 + 5}) {
                for (auto net : orders(3)) {
                    Case c;
                    c.p = 6, c.root = 1, c.bytes = bytes, c.tree = tree, c.net = net, c.layout = layout;
                    run_case(c);
                }
            }
        }
    }
}

// A pool with no room still lends each schedule one buffer, so the broadcast
// completes (slowly) and the overdraft is given back.
void test_pool_cap_zero_still_completes(void **) {
    for (auto net : orders(3)) {
        Case c;
        c.p = 5, c.root = 2, c.bytes = 30 * 64, c.layout = Layout::strided, c.pool_max = 0, c.net = net;
        c.recv_window = 8, c.send_window = 4;
        run_case(c);
    }
}

void test_unsegmented_large(void **) {
    Case c;
    c.p = 4, c.bytes = 1 << 20, c.segment = 0;
    run_case(c);
    c.segment = 1 << 16;
    c.tree = {TreeShape::pipeline, 0};
    run_case(c);
}

// A pack error at the root completes the root's call with that error, once.
void test_pack_error_reported_once(void **) {
    FakeNetwork net(2, {});
    Comm root(net.endpoint(0), 0, 2, 1 << 20);
    std::vector<char> mem(256, 0);
    adapt2_buffer_t buf{nullptr, 256, mem.data(), failing_pack, strided_unpack, 0, 0};
    Done done;
    Case c;
    auto s = settings_for(c);
    assert_int_equal(start_bcast(root, buf, 0, 1, s, on_done, &done), 0);
    net.run();
    assert_int_equal(done.calls, 1);
    assert_int_equal(done.status, -7);
    assert_int_equal(root.pool().bytes_lent(), 0);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_contiguous_all_shapes),
        cmocka_unit_test(test_windows),
        cmocka_unit_test(test_noncontiguous_and_mixed_layouts),
        cmocka_unit_test(test_pool_cap_zero_still_completes),
        cmocka_unit_test(test_unsegmented_large),
        cmocka_unit_test(test_pack_error_reported_once),
    };
    const int failed = cmocka_run_group_tests_name("bcast_schedule", tests, nullptr, nullptr);
    // again with no second thread (threads.h: the inbox without locked instructions)
    adapt2::g_threads_may_race.store(false);
    return failed + cmocka_run_group_tests_name("bcast_schedule, one thread", tests, nullptr, nullptr);
}
