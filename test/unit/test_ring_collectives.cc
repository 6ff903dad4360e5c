// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Allgather (ring, Bruck, linear and multi-level) and Reduce_scatter_block over the fake network, under many
// completion orders: every byte of every rank's result, for any p, block
// sizes down to empty, segments smaller than a block or none, narrow and
// wide windows, contiguous or strided (non-contiguous) send and receive
// buffers, in place or not. Holes of strided buffers stay untouched, each
// call is done exactly once, nothing stays posted or borrowed.
#include <cstdio>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "cmocka_cxx.h"
#include "collectives.h"
#include "test_support.h"

using namespace adapt2;
using namespace adapt2::test;

namespace {

std::string join(const std::vector<int> &v) {
    std::string s;
    for (int x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
    return s;
}

struct Case {
    int collective = ADAPT2_COLL_ALLGATHER;
    int algorithm = ADAPT2_ALLGATHER_RING;  // the collective's (adapt2_bridge.h)
    bool commutative = true;                // reduce_scatter_block: int32 sums, or affine maps (not commutative)
    int p = 4;
    size_t elems = 10;  // per block (reduce_scatter_block: elements of the op, allgather: bytes)
    size_t segment = 0;
    int recv_window = 4, send_window = 2;
    bool strided_send = false, strided_recv = false, in_place = false;
    std::vector<int> nodes;   // per rank, when the ranks' nodes are known (empty: unknown)
    bool whole_down = false;  // multi-level: the result goes down in one message
    NetworkOptions net;

    std::string str() const {
        char s[256];
        std::snprintf(
            s, sizeof s, "%s algorithm %d%s p=%d elems=%zu seg=%zu win=%d:%d send=%s recv=%s%s order=%d seed=%llu",
            collective == ADAPT2_COLL_ALLGATHER ? "allgather" : "reduce_scatter_block", algorithm,
            commutative ? "" : " non-commutative", p, elems, segment, recv_window, send_window,
            strided_send ? "strided" : "contig", strided_recv ? "strided" : "contig", in_place ? " in-place" : "",
            static_cast<int>(net.order), static_cast<unsigned long long>(net.seed));
        std::string out = s;
        if (!nodes.empty()) out += " nodes=" + join(nodes);
        if (whole_down) out += " whole-down";
        return out;
    }
};

// Packed byte i of a buffer laid out contiguously or strided (byte i at 2i).
char &packed_at(std::vector<char> &m, bool strided, size_t i) { return m[strided ? 2 * i : i]; }

int32_t contribution(int rank, size_t element) { return static_cast<int32_t>(rank * 1009 + element % 991); }

// Rank's element of a reduce_scatter_block: an int32, or an affine map (a, b).
void element_of(const Case &c, int rank, size_t element, uint32_t out[2]) {
    out[0] = static_cast<uint32_t>(contribution(rank, element));
    out[1] = static_cast<uint32_t>(rank * 7 + element * 3 + 1);
    if (!c.commutative) out[0] |= 1;  // odd multipliers: no map collapses the others
}

// The serial result x0 op (x1 op (... op x_{p-1})).
void expected_element(const Case &c, size_t element, uint32_t out[2]) {
    element_of(c, c.p - 1, element, out);
    for (int q = c.p - 2; q >= 0; --q) {
        uint32_t x[2];
        element_of(c, q, element, x);
        if (c.commutative) {
            out[0] += x[0];
        } else {
            compose_affine(nullptr, x, out, 1);
        }
    }
}

struct Rank {
    std::vector<char> send, recv;
    Strided send_s{}, recv_s{};
    Done done;
};

// The user buffers of one rank: `send_bytes` and `recv_bytes` packed bytes.
adapt2_buffer_t describe(std::vector<char> &m, Strided &s, bool strided, size_t bytes) {
    s.base = m.data();
    return strided ? strided_buffer(&s, bytes) : contiguous_buffer(m.data(), bytes);
}

void check_node_links(const Case &c, FakeWorld &world, size_t block);

void run_case(const Case &c) {
    const bool gather = c.collective == ADAPT2_COLL_ALLGATHER;
    const size_t unit = gather ? 1 : c.commutative ? 4 : 8, block = c.elems * unit, all = block * c.p;
    const size_t send_bytes = gather ? block : all;
    const size_t recv_bytes = gather || c.in_place ? all : block;
    FakeWorld world(c.p, c.net);
    FakeNetwork &net = world.net;
    if (!c.nodes.empty()) {
        for (int r = 0; r < c.p; ++r) world.comm(r).set_topology(Topology{c.nodes, {}});
    }
    std::vector<Rank> ranks(c.p);
    for (int r = 0; r < c.p; ++r) {
        Rank &k = ranks[r];
        k.send.assign(send_bytes * 2 + 1, 0x11);
        k.recv.assign(recv_bytes * 2 + 1, 0x22);
        // The contribution: in the send buffer, or in place in the receive buffer.
        std::vector<char> &src = c.in_place ? k.recv : k.send;
        const bool strided = c.in_place ? c.strided_recv : c.strided_send;
        const size_t base = gather && c.in_place ? block * r : 0;
        for (size_t i = 0; i < (gather ? block : all); ++i) {
            char byte;
            if (gather) {
                byte = static_cast<char>(r * 37 + i * 11);
            } else {
                uint32_t v[2];
                element_of(c, r, i / unit, v);
                byte = reinterpret_cast<const char *>(v)[i % unit];
            }
            packed_at(src, strided, base + i) = byte;
        }
    }
    for (int r = 0; r < c.p; ++r) {
        Rank &k = ranks[r];
        adapt2_call_t call{};
        call.collective = c.collective;
        call.send = describe(k.send, k.send_s, c.strided_send, send_bytes);
        call.recv = describe(k.recv, k.recv_s, c.strided_recv, recv_bytes);
        call.in_place = c.in_place;
        call.reduction = c.commutative ? adapt2_reduction_t{4, 1, nullptr, sum_i32, nullptr, 0, 0}
                                       : adapt2_reduction_t{8, 0, nullptr, compose_affine, nullptr, 0, 0};
        call.settings.algorithm = c.algorithm;
        call.settings.tree.segment_size = c.segment;
        call.settings.tree.recv_window = c.recv_window;
        call.settings.tree.send_window = c.send_window;
        call.settings.pipeline_min_bytes = c.whole_down ? SIZE_MAX : 0;
        call.done = on_done;
        call.ctx = &k.done;
        if (start_call(world.comm(r), call) != 0) fail_msg("%s: start failed", c.str().c_str());
    }
    net.run();
    for (int r = 0; r < c.p; ++r) {
        Rank &k = ranks[r];
        if (k.done.calls != 1 || k.done.status != 0)
            fail_msg("%s: rank %d done %d times, status %d", c.str().c_str(), r, k.done.calls, k.done.status);
        if (world.comm(r).pool().bytes_lent() != 0) fail_msg("%s: rank %d kept buffers", c.str().c_str(), r);
        const size_t check = gather ? all : block;
        for (size_t i = 0; i < check; ++i) {
            char want;
            if (gather) {
                const int q = static_cast<int>(i / block);
                want = static_cast<char>(q * 37 + (i % block) * 11);
            } else {
                uint32_t v[2];
                expected_element(c, block / unit * r + i / unit, v);
                want = reinterpret_cast<const char *>(v)[i % unit];
            }
            if (packed_at(k.recv, c.strided_recv, i) != want)
                fail_msg("%s: rank %d: byte %zu is %d, expected %d", c.str().c_str(), r, i,
                         packed_at(k.recv, c.strided_recv, i), want);
        }
        for (size_t i = 0; c.strided_recv && i < recv_bytes; ++i)
            if (k.recv[2 * i + 1] != 0x22) fail_msg("%s: rank %d: hole %zu written", c.str().c_str(), r, i);
    }
    if (net.unmatched() != 0) fail_msg("%s: %zu operations left unmatched", c.str().c_str(), net.unmatched());
    if (gather && c.algorithm == ADAPT2_ALLGATHER_MULTI_LEVEL) check_node_links(c, world, block);
}

// The multi-level allgather brings each node every other node's blocks
// once: (nodes - 1) * p blocks cross between nodes in all, whatever the
// placement (the ring sends p - 1 per rank, over a node link wherever the
// next rank is elsewhere).
void check_node_links(const Case &c, FakeWorld &world, size_t block) {
    const int nodes = c.nodes.empty() ? 1 : Topology{c.nodes, {}}.nodes();
    uint64_t crossed = 0;
    for (int r = 0; r < c.p; ++r) crossed += world.comm(r).internode_bytes();
    const uint64_t want = static_cast<uint64_t>(nodes - 1) * static_cast<uint64_t>(c.p) * block;
    if (crossed != want)
        fail_msg("%s: %llu bytes crossed between nodes, expected %llu", c.str().c_str(),
                 static_cast<unsigned long long>(crossed), static_cast<unsigned long long>(want));
}

long sweep(int collective, int algorithm, bool commutative = true) {
    long runs = 0;
    for (int p : {1, 2, 3, 4, 6, 7, 8})
        for (size_t elems : {size_t{0}, size_t{1}, size_t{5}, size_t{33}})
            for (size_t segment : {size_t{0}, size_t{4}, size_t{12}})
                for (int layout = 0; layout < 8; ++layout)
                    for (const NetworkOptions &net : completion_orders(3)) {
                        Case c;
                        c.collective = collective, c.algorithm = algorithm, c.commutative = commutative;
                        c.p = p, c.elems = elems, c.segment = segment, c.net = net;
                        c.strided_send = layout & 1, c.strided_recv = layout & 2, c.in_place = layout & 4;
                        if (layout % 3 == 1) c.recv_window = 1, c.send_window = 1;
                        run_case(c);
                        ++runs;
                    }
    return runs;
}

void test_allgather(void **) {
    std::printf("# %ld ring allgathers checked\n", sweep(ADAPT2_COLL_ALLGATHER, ADAPT2_ALLGATHER_RING));
}

void test_bruck_allgather(void **) {
    std::printf("# %ld Bruck allgathers checked\n", sweep(ADAPT2_COLL_ALLGATHER, ADAPT2_ALLGATHER_BRUCK));
}

void test_linear_allgather(void **) {
    std::printf("# %ld linear allgathers checked\n", sweep(ADAPT2_COLL_ALLGATHER, ADAPT2_ALLGATHER_LINEAR));
}

// Placements of p ranks on nodes: one node, nodes of 2 in blocks, 3 nodes
// round-robin, uneven nodes with ids out of order, one rank per node.
std::vector<std::vector<int>> placements(int p) {
    std::vector<int> one(p, 0), pairs(p), cyclic(p), uneven(p), single(p);
    for (int r = 0; r < p; ++r) {
        pairs[r] = r / 2, cyclic[r] = r % 3, single[r] = 100 - r;
        uneven[r] = r == 0 ? 7 : r < 4 ? 3 : r % 2 ? 7 : 5;  // node 7 leads, holds ranks 0, 5, 7, ...
    }
    return {{}, one, pairs, cyclic, uneven, single};
}

// The multi-level allgather on every placement, in every completion order,
// contiguous and strided, in place or not, bundles down as they land or the
// whole result at once: every byte, and the node links each crossed once
// per block and node.
void test_multi_level_allgather(void **) {
    long runs = 0;
    for (int p : {1, 2, 3, 5, 8})
        for (size_t elems : {size_t{0}, size_t{1}, size_t{33}})
            for (const std::vector<int> &nodes : placements(p))
                for (int layout = 0; layout < 8; ++layout)
                    for (const NetworkOptions &net : completion_orders(3)) {
                        Case c;
                        c.algorithm = ADAPT2_ALLGATHER_MULTI_LEVEL;
                        c.p = p, c.elems = elems, c.nodes = nodes, c.net = net;
                        c.strided_send = layout & 1, c.strided_recv = layout & 2, c.in_place = layout & 4;
                        c.whole_down = (layout + static_cast<int>(net.seed)) % 2;
                        run_case(c);
                        ++runs;
                    }
    std::printf("# %ld multi-level allgathers checked\n", runs);
}

void test_reduce_scatter_block(void **) {
    const long runs = sweep(ADAPT2_COLL_REDUCE_SCATTER_BLOCK, ADAPT2_REDUCE_SCATTER_RING);
    std::printf("# %ld ring reduce_scatter_blocks checked\n", runs);
}

void test_halving_reduce_scatter_block(void **) {
    const long runs = sweep(ADAPT2_COLL_REDUCE_SCATTER_BLOCK, ADAPT2_REDUCE_SCATTER_HALVING);
    std::printf("# %ld recursive-halving reduce_scatter_blocks checked\n", runs);
}

// A non-commutative op with the ring asked for: recursive halving combines
// in rank order (p not a power of two included), every element checked.
void test_non_commutative_reduce_scatter_block(void **) {
    const long runs = sweep(ADAPT2_COLL_REDUCE_SCATTER_BLOCK, ADAPT2_REDUCE_SCATTER_RING, false);
    std::printf("# %ld non-commutative reduce_scatter_blocks checked\n", runs);
}

// Broadcast, reduce and allreduce through the same call description and
// entry point, one after the other on one set of communicators (each call
// reserves its own tags from the communicator): every rank's data checked.
void test_entry_point_runs_every_collective(void **) {
    const int p = 5;
    const size_t n = 300;  // int32 elements
    for (const NetworkOptions &net_options : completion_orders(3)) {
        FakeWorld world(p, net_options);
        FakeNetwork &net = world.net;
        std::vector<std::vector<int32_t>> send(p, std::vector<int32_t>(n)), recv(p, std::vector<int32_t>(n));
        std::vector<Done> done(p);
        for (int collective : {ADAPT2_COLL_BCAST, ADAPT2_COLL_REDUCE, ADAPT2_COLL_ALLREDUCE}) {
            const int root = 2;
            for (int r = 0; r < p; ++r) {
                for (size_t i = 0; i < n; ++i) send[r][i] = contribution(r, i), recv[r][i] = r == root ? 7 * i : -1;
                adapt2_call_t call{};
                call.collective = collective;
                call.send = contiguous_buffer(reinterpret_cast<char *>(send[r].data()), n * 4);
                call.recv = contiguous_buffer(reinterpret_cast<char *>(recv[r].data()), n * 4);
                call.root = root;
                call.reduction = {4, 1, nullptr, sum_i32, nullptr, 0, 0};
                call.settings.tree.algorithm = ADAPT2_ALG_BINOMIAL;
                call.settings.tree.segment_size = 256;
                call.settings.tree.recv_window = 4, call.settings.tree.send_window = 2;
                call.settings.algorithm = ADAPT2_ALLREDUCE_TREE;
                call.done = on_done;
                call.ctx = &done[r];
                if (start_call(world.comm(r), call) != 0) fail_msg("collective %d: start failed", collective);
            }
            net.run();
            for (int r = 0; r < p; ++r) {
                const bool has_result = collective != ADAPT2_COLL_REDUCE || r == root;
                for (size_t i = 0; has_result && i < n; ++i) {
                    int32_t want = 7 * static_cast<int32_t>(i);
                    if (collective != ADAPT2_COLL_BCAST) {
                        want = 0;
                        for (int q = 0; q < p; ++q) want += contribution(q, i);
                    }
                    if (recv[r][i] != want)
                        fail_msg("collective %d: rank %d element %zu is %d, expected %d", collective, r, i, recv[r][i],
                                 want);
                }
            }
        }
        for (int r = 0; r < p; ++r) assert_int_equal(done[r].calls, 3);
        if (net.unmatched() != 0) fail_msg("%zu operations left unmatched", net.unmatched());
    }
}

// Calls started through the entry point before the earlier ones finish get
// tags of their own from the communicator: two allgathers in flight at once,
// each with its own data, both right (with shared tags their messages would
// be matched to the wrong call).
void test_calls_in_flight_get_their_own_tags(void **) {
    const int p = 4, calls = 3;
    const size_t block = 40;
    for (const NetworkOptions &net_options : completion_orders(3)) {
        FakeWorld world(p, net_options);
        std::vector<std::vector<std::vector<char>>> send(p), recv(p);
        std::vector<Done> done(p);
        for (int r = 0; r < p; ++r) {
            for (int c = 0; c < calls; ++c) {
                send[r].emplace_back(block);
                recv[r].emplace_back(block * p, 0);
                for (size_t i = 0; i < block; ++i) send[r][c][i] = static_cast<char>(c * 101 + r * 13 + i);
                adapt2_call_t call{};
                call.collective = ADAPT2_COLL_ALLGATHER;
                call.send = contiguous_buffer(send[r][c].data(), block);
                call.recv = contiguous_buffer(recv[r][c].data(), block * p);
                call.settings.algorithm = c % 2 ? ADAPT2_ALLGATHER_BRUCK : ADAPT2_ALLGATHER_RING;
                call.settings.tree.segment_size = 8;
                call.settings.tree.recv_window = 4, call.settings.tree.send_window = 2;
                call.done = on_done;
                call.ctx = &done[r];
                if (start_call(world.comm(r), call) != 0) fail_msg("call %d: start failed", c);
            }
        }
        world.run();
        for (int r = 0; r < p; ++r) {
            assert_int_equal(done[r].calls, calls);
            for (int c = 0; c < calls; ++c) {
                for (size_t i = 0; i < block * p; ++i) {
                    const char want = static_cast<char>(c * 101 + static_cast<int>(i / block) * 13 + i % block);
                    if (recv[r][c][i] != want)
                        fail_msg("rank %d call %d byte %zu is %d, expected %d", r, c, i, recv[r][c][i], want);
                }
            }
        }
    }
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_allgather),
        cmocka_unit_test(test_bruck_allgather),
        cmocka_unit_test(test_linear_allgather),
        cmocka_unit_test(test_multi_level_allgather),
        cmocka_unit_test(test_reduce_scatter_block),
        cmocka_unit_test(test_halving_reduce_scatter_block),
        cmocka_unit_test(test_non_commutative_reduce_scatter_block),
        cmocka_unit_test(test_entry_point_runs_every_collective),
        cmocka_unit_test(test_calls_in_flight_get_their_own_tags),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
