// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// The real adapt2 engine on the simulated network: broadcasts and reduces
// over several shapes, sizes and segmentations, flat and multi-level (nodes
// of 4 ranks), deliver every segment exactly once and the right data to every
// rank, and multi-level broadcasts cross nodes exactly nodes-1 times per
// byte; the noise loop runs every call to completion on every rank,
// deterministically for a seed.
#include <cstdio>
#include <cstring>
#include <map>
#include <vector>

#include "adapt2_collective.h"
#include "cmocka_cxx.h"
#include "decision.h"
#include "lockstep.h"
#include "loop.h"
#include "network.h"

using namespace adapt2::sim;

namespace {

// Counts the data messages (not the zero-byte hellos) each rank receives
// and sends.
struct Counter : MessageObserver {
    std::vector<long> recv_msgs, recv_bytes, send_msgs, send_bytes;
    std::map<std::pair<int, int>, int> per_dst_tag;  // (dst, tag) -> messages
    explicit Counter(int p) : recv_msgs(p), recv_bytes(p), send_msgs(p), send_bytes(p) {}
    void matched(int src, int dst, int tag, size_t bytes) override {
        if (bytes == 0) return;
        ++recv_msgs[dst], recv_bytes[dst] += long(bytes);
        ++send_msgs[src], send_bytes[src] += long(bytes);
        ++per_dst_tag[{dst, tag}];
    }
};

struct Listener : CallListener {
    std::vector<int> done, finished;
    explicit Listener(int p) : done(p), finished(p) {}
    void call_done(int r) override { ++done[r]; }
    void call_finished(int r) override { ++finished[r]; }
};

// Starts rank r's call at time 0, on its CPU.
struct Starter : EventSink {
    Collective *c = nullptr;
    void on_event(const Event &e) override { c->start(e.rank); }
};

Machine small_machine() {
    Machine m;
    m.ranks_per_node = 4;
    m.cores_per_node = 4;
    return m;
}

// One collective on every rank of a small simulated machine, with its data
// moved and every message counted.
struct SimRun {
    Network net;
    Counter count;
    Listener listener;
    Adapt2Collective coll;
    Starter starter;

    SimRun(int p, const Adapt2Config &c) : net(p, small_machine()), count(p), listener(p), coll(net, listener, c) {
        net.set_move_data(true);
        net.set_observer(&count);
        starter.c = &coll;
    }
    void run(int p) {
        for (int r = 0; r < p; ++r) net.at(r, 0.0, &starter);
        net.run();
    }
};

// Segments of the plan the engine itself picks (auto may not segment).
long segments_of(size_t bytes, size_t seg) { return seg == 0 || seg >= bytes ? 1 : long((bytes + seg - 1) / seg); }

// Whether adapt2 builds multi-level trees for p ranks of small_machine()
// (coll_adapt2_topology on and more than one node), as the collective decides.
bool multi_level(int p, bool topology) { return topology && p > small_machine().ranks_per_node; }

void run_bcast(int p, int root, int algorithm, size_t bytes, size_t seg, bool sync, bool topology) {
    Adapt2Config c = default_adapt2_config(CollKind::bcast, bytes, false);
    c.bcast.algorithm = algorithm;
    set_segment_size(c, seg);
    set_topology(c, topology);
    if (sync) force_sync(c);
    c.root = root;
    c.move_data = true;
    SimRun sim(p, c);
    auto &count = sim.count;
    auto &l = sim.listener;
    auto &coll = sim.coll;
    for (size_t i = 0; i < bytes; ++i) coll.own(root)[i] = char(i * 7 + 3);
    sim.run(p);
    adapt2_bcast_settings_t s = c.bcast;
    s.topology = multi_level(p, topology);
    const long nseg = segments_of(bytes, adapt2::plan_bcast(s, bytes, p).segment_bytes);
    for (int r = 0; r < p; ++r) {
        if (l.done[r] != 1 || l.finished[r] != 1)
            fail_msg("p=%d alg=%d rank %d: done %d finished %d", p, algorithm, r, l.done[r], l.finished[r]);
        if (r == root) continue;
        if (count.recv_msgs[r] != nseg || count.recv_bytes[r] != long(bytes))
            fail_msg("p=%d alg=%d seg=%zu rank %d got %ld messages, %ld bytes (want %ld, %zu)", p, algorithm, seg, r,
                     count.recv_msgs[r], count.recv_bytes[r], nseg, bytes);
        if (std::memcmp(coll.own(r), coll.own(root), bytes) != 0) fail_msg("p=%d rank %d: wrong data", p, r);
    }
    for (const auto &kv : count.per_dst_tag) {
        // Decoupled calls use one tag per segment (detach.h): each comes once.
        if (!sync && kv.second != 1 && nseg <= 64)
            fail_msg("rank %d got tag %d %d times", kv.first.first, kv.first.second, kv.second);
    }
    assert_int_equal(sim.net.unmatched(), 0);
    // A multi-level tree crosses between nodes once per node but the root's.
    const int nodes = (p + small_machine().ranks_per_node - 1) / small_machine().ranks_per_node;
    if (multi_level(p, topology) && sim.net.inter_node_bytes() != uint64_t(nodes - 1) * bytes)
        fail_msg("p=%d alg=%d: %llu bytes crossed nodes, want %llu", p, algorithm,
                 (unsigned long long)sim.net.inter_node_bytes(), (unsigned long long)(nodes - 1) * bytes);
}

void test_bcast_every_segment_once(void **) {
    const int algs[] = {ADAPT2_ALG_AUTO, ADAPT2_ALG_BINOMIAL, ADAPT2_ALG_KNOMIAL, ADAPT2_ALG_PIPELINE, ADAPT2_ALG_FLAT};
    for (int alg : algs) {
        for (int p : {2, 5, 16, 33}) {
            for (size_t seg : {size_t(0), size_t(1000), size_t(4096)}) {
                for (bool topology : {false, true}) {
                    run_bcast(p, p / 3, alg, 10000, seg, false, topology);
                    run_bcast(p, 0, alg, 10000, seg, true, topology);
                }
            }
        }
    }
}

void run_reduce(int p, int root, size_t bytes, size_t seg, int algorithm, bool topology) {
    Adapt2Config c = default_adapt2_config(CollKind::reduce, bytes, false);
    c.reduce.tree.algorithm = algorithm;
    set_segment_size(c, seg);
    set_topology(c, topology);
    c.root = root;
    c.move_data = true;
    SimRun sim(p, c);
    auto &count = sim.count;
    auto &l = sim.listener;
    auto &coll = sim.coll;
    const size_t n = bytes / sizeof(float);
    for (int r = 0; r < p; ++r) {
        float *own = reinterpret_cast<float *>(coll.own(r));
        for (size_t i = 0; i < n; ++i) own[i] = float((r + 1) * (i % 5));
    }
    sim.run(p);
    const float *result = reinterpret_cast<const float *>(coll.result(root));
    for (size_t i = 0; i < n; ++i) {
        const float want = float(p * (p + 1) / 2 * (i % 5));
        if (result[i] != want) fail_msg("reduce p=%d element %zu: %g, want %g", p, i, result[i], want);
    }
    adapt2_tree_settings_t s = c.reduce.tree;
    s.topology = multi_level(p, topology);
    const long nseg = segments_of(bytes, adapt2::plan_reduce(s, bytes, true, 1, p).segment_bytes);
    for (int r = 0; r < p; ++r) {
        if (l.done[r] != 1 || l.finished[r] != 1) fail_msg("reduce p=%d rank %d not finished once", p, r);
        if (r != root && (count.send_msgs[r] != nseg || count.send_bytes[r] != long(bytes)))
            fail_msg("reduce p=%d rank %d sent %ld messages %ld bytes", p, r, count.send_msgs[r], count.send_bytes[r]);
    }
}

void test_reduce_every_segment_once(void **) {
    for (int p : {2, 7, 16}) {
        for (size_t seg : {size_t(0), size_t(1024)}) {
            for (bool topology : {false, true}) {
                run_reduce(p, 0, 8192, seg, ADAPT2_ALG_AUTO, topology);
                run_reduce(p, p - 1, 8192, seg, ADAPT2_ALG_BINOMIAL, topology);
            }
        }
    }
}

LoopResult noisy_loop(const std::string &alg, uint64_t seed, int p) {
    NoiseModel noise;
    if (!noise.parse("p=0.2,d=500us", seed).empty()) fail_msg("noise spec");
    LoopConfig loop;
    loop.iterations = 12;
    loop.compute_us = 200;
    loop.noise = noise;
    Machine m = small_machine();
    const size_t bytes = 256 << 10;
    CollectiveFactory make;
    if (alg == "binomial") {
        LockstepConfig c;
        c.bytes = bytes;
        make = [c](Network &n, CallListener &l) { return make_lockstep(n, l, c); };
    } else {
        Adapt2Config c = default_adapt2_config(CollKind::bcast, bytes, false);
        set_segment_size(c, 64 << 10);
        c.bcast.algorithm = ADAPT2_ALG_BINOMIAL;
        make = [c](Network &n, CallListener &l) { return std::make_unique<Adapt2Collective>(n, l, c); };
    }
    return run_loop(p, m, loop, make);
}

void test_noise_loop_deterministic(void **) {
    for (const char *alg : {"adapt2", "binomial"}) {
        LoopResult a = noisy_loop(alg, 3, 24), b = noisy_loop(alg, 3, 24), c = noisy_loop(alg, 4, 24);
        if (!a.complete || !c.complete) fail_msg("%s: a rank did not finish every call", alg);
        if (a.mean_time != b.mean_time || a.messages != b.messages) fail_msg("%s: not deterministic", alg);
        if (a.mean_noise <= 0) fail_msg("%s: no noise injected", alg);
        if (a.mean_noise == c.mean_noise && a.mean_time == c.mean_time) fail_msg("%s: the seed changes nothing", alg);
    }
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bcast_every_segment_once),
        cmocka_unit_test(test_reduce_every_segment_once),
        cmocka_unit_test(test_noise_loop_deterministic),
    };
    return cmocka_run_group_tests_name("sim_engine", tests, nullptr, nullptr);
}
