// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// The simulated network against LogGP times computed by hand: one eager
// message, one rendezvous message, a sender's port serializing two
// messages, a busy CPU delaying a completion, intra- vs inter-node links,
// single-copy (get) transfers, per-link eager limits, cores shared by
// ranks/cores, by busy ranks and across the host, memory bandwidth shared by
// concurrent copies, the scheduling delay of oversubscribed cores, token
// buckets, a whole lock-step binomial broadcast of 4 ranks, alone and in
// adapt2_bench's loop.
#include <cmath>
#include <vector>

#include "cmocka_cxx.h"
#include "lockstep.h"
#include "loop.h"
#include "network.h"

using namespace adapt2::sim;

namespace {

// L 0.5, o 0.1, g 0.2, G 0.001 us/byte: 1000 bytes take 1 us on the wire.
Machine hand_machine() {
    Machine m;
    m.intra = {0.5, 0.1, 0.2, 0.001};
    m.inter = {5.0, 1.0, 2.0, 0.01};
    m.ranks_per_node = 2;
    m.cores_per_node = 2;
    m.eager_limit = 4096;
    return m;
}

// Records when each completion's handler ran (after the receive overhead).
struct Recorder : Completer {
    Network &net;
    int id;
    std::vector<double> send_done, recv_done;
    explicit Recorder(Network &n)
        : net(n), id(n.add_completer(this)), send_done(n.ranks(), -1), recv_done(n.ranks(), -1) {}
    void completed(int rank, void *, bool is_recv) override { (is_recv ? recv_done : send_done)[rank] = net.now(rank); }
};

void near(double got, double want) {
    if (std::fabs(got - want) > 1e-9) fail_msg("got %.9f, want %.9f", got, want);
}

// Rank 0 sends `bytes` to rank `to` (tag 7), the receive posted first.
void post_message(Network &net, Recorder &rec, int to, size_t bytes) {
    net.recv(to, 0, 7, nullptr, bytes, rec.id, nullptr);
    net.send(0, to, 7, nullptr, bytes, rec.id, nullptr);
}

void test_eager_message(void **) {
    Network net(2, hand_machine());
    Recorder rec(net);
    post_message(net, rec, 1, 1000);
    net.run();
    // sender: o = 0.1, wire 1.0 -> injected at 1.1; lands at 1.1 + L = 1.6;
    // the receiver's handler runs after its o: 1.7.
    near(rec.send_done[0], 1.1);
    near(rec.recv_done[1], 1.7);
}

void test_rendezvous_message(void **) {
    Network net(2, hand_machine());
    Recorder rec(net);
    post_message(net, rec, 1, 5000);
    net.run();
    // envelope: o + L = 0.6; data pulled then: 5 us of wire, left at 5.6,
    // lands at 6.1; receiver's o: 6.2.
    near(rec.send_done[0], 5.6);
    near(rec.recv_done[1], 6.2);
}

void test_port_serializes(void **) {
    Machine m = hand_machine();
    m.ranks_per_node = m.cores_per_node = 3;
    Network net(3, m);
    Recorder rec(net);
    net.recv(1, 0, 1, nullptr, 1000, rec.id, nullptr);
    net.recv(2, 0, 1, nullptr, 1000, rec.id, nullptr);
    net.send(0, 1, 1, nullptr, 1000, rec.id, nullptr);  // port 0.1 .. 1.1
    net.send(0, 2, 1, nullptr, 1000, rec.id, nullptr);  // CPU ready at 0.2, port at 1.1 .. 2.1
    net.run();
    near(rec.recv_done[1], 1.7);
    near(rec.recv_done[2], 2.1 + 0.5 + 0.1);
}

void test_gap_bounds_small_messages(void **) {
    Network net(3, [] {
        Machine m = hand_machine();
        m.ranks_per_node = m.cores_per_node = 3;
        return m;
    }());
    Recorder rec(net);
    net.recv(1, 0, 1, nullptr, 10, rec.id, nullptr);
    net.recv(2, 0, 1, nullptr, 10, rec.id, nullptr);
    net.send(0, 1, 1, nullptr, 10, rec.id, nullptr);  // starts 0.1, port busy g = 0.2
    net.send(0, 2, 1, nullptr, 10, rec.id, nullptr);  // CPU 0.2, port free at 0.3
    net.run();
    near(rec.recv_done[1], 0.1 + 0.01 + 0.5 + 0.1);
    near(rec.recv_done[2], 0.3 + 0.01 + 0.5 + 0.1);
}

// A CPU busy until 10 handles a completion due at 1.6 at 10 (+ its o).
struct Busy : EventSink {
    Network &net;
    explicit Busy(Network &n) : net(n) {}
    void on_event(const Event &e) override { net.charge(e.rank, 10.0 - net.now(e.rank)); }
};

void test_busy_cpu_delays_completion(void **) {
    Network net(2, hand_machine());
    Recorder rec(net);
    Busy busy(net);
    net.at(1, 0.0, &busy);
    post_message(net, rec, 1, 1000);
    net.run();
    near(rec.recv_done[1], 10.1);
}

// Two ranks on one core: every CPU cost doubles (o 0.2 each side).
void test_shared_core_slows_cpu(void **) {
    Machine m = hand_machine();
    m.cores_per_node = 1;
    Network net(2, m);
    Recorder rec(net);
    post_message(net, rec, 1, 1000);
    net.run();
    near(rec.recv_done[1], 0.2 + 1.0 + 0.5 + 0.2);
}

void test_inter_node_link(void **) {
    Network net(3, hand_machine());  // nodes {0,1}, {2}
    Recorder rec(net);
    post_message(net, rec, 2, 1000);
    net.run();
    // inter: o 1, wire 10 -> injected at 11, lands at 16, receiver o: 17.
    near(rec.send_done[0], 11.0);
    near(rec.recv_done[2], 17.0);
    assert_int_equal(net.inter_node_bytes(), 1000);
}

// Single copy: the envelope (o + L) is matched at 0.6, the receiver's CPU
// copies 5000 bytes (5 us) and pays its o: 5.7; the sender hears of it L
// later (6.1). Its port stays free: a second transfer to rank 2 (envelope
// posted at 0.2) copies at the same time and is done at 5.8.
void test_single_copy_get(void **) {
    Machine m = hand_machine();
    m.ranks_per_node = m.cores_per_node = 3;
    m.intra.get = true;
    Network net(3, m);
    Recorder rec(net);
    net.recv(1, 0, 7, nullptr, 5000, rec.id, nullptr);
    net.recv(2, 0, 7, nullptr, 5000, rec.id, nullptr);
    net.send(0, 1, 7, nullptr, 5000, rec.id, nullptr);
    net.send(0, 2, 7, nullptr, 5000, rec.id, nullptr);
    net.run();
    near(rec.recv_done[1], 5.7);
    near(rec.recv_done[2], 5.8);
    near(rec.send_done[0], 5.8 + 0.5);
    // Below the eager limit nothing changes (test_eager_message's times).
    Network small(2, m);
    Recorder r2(small);
    small.recv(1, 0, 7, nullptr, 1000, r2.id, nullptr);
    small.send(0, 1, 7, nullptr, 1000, r2.id, nullptr);
    small.run();
    near(r2.recv_done[1], 1.7);
}

// A 5000-byte message is eager between nodes (inter.eager 65536), and a
// rendezvous inside a node (4096): o 1 + wire 50 = 51 (send done), lands 56,
// receiver's o: 57.
void test_eager_limit_per_link(void **) {
    Machine m = hand_machine();
    m.inter.eager = 65536;
    Network net(3, m);
    Recorder rec(net);
    net.send(0, 2, 7, nullptr, 5000, rec.id, nullptr);  // no receive posted yet: eager anyway
    net.run();
    near(rec.send_done[0], 51.0);
    net.recv(2, 0, 7, nullptr, 5000, rec.id, nullptr);
    net.run();
    near(rec.recv_done[2], 57.0);
}

// Three ranks on one core, shared by busy ranks: rank 2 computes until 10,
// so the sender's o (0.1) and the receiver's take twice as long: injected at
// 0.2, left 1.2, landed 1.7, received 1.9. With rank 2 idle: 1.7, as on a
// core of one's own (test_eager_message).
void test_share_by_busy_ranks(void **) {
    for (bool busy : {true, false}) {
        Machine m = hand_machine();
        m.ranks_per_node = 3;
        m.cores_per_node = 1;
        m.share_busy = true;
        Network net(3, m);
        Recorder rec(net);
        if (busy) net.charge(2, 10.0);
        post_message(net, rec, 1, 1000);
        net.run();
        near(rec.recv_done[1], busy ? 1.9 : 1.7);
    }
}

// Two nodes of one rank on a host of one core (host_cores=1): every CPU
// cost doubles across the host: o 2, wire 10, lands 17, receiver's o: 19.
void test_host_cores(void **) {
    Machine m = hand_machine();
    m.ranks_per_node = m.cores_per_node = 1;
    m.host_cores = 1;
    Network net(2, m);
    Recorder rec(net);
    post_message(net, rec, 1, 1000);
    net.run();
    near(rec.recv_done[1], 19.0);
}

// Memory shared by concurrent copies (mem_G 0.002 us/byte, twice a copy's
// G): rank 1's copy of 5000 bytes (envelope at 0.6) runs alone: 5 us,
// received at 5.7. Rank 2's (envelope at 0.7) starts while rank 1's runs:
// two at once, each at least 2 x 5000 x 0.002 = 20 us: received at 20.8.
void test_memory_bandwidth(void **) {
    Machine m = hand_machine();
    m.ranks_per_node = m.cores_per_node = 3;
    m.intra.get = true;
    m.mem_G = 0.002;
    Network net(3, m);
    Recorder rec(net);
    net.recv(1, 0, 7, nullptr, 5000, rec.id, nullptr);
    net.recv(2, 0, 7, nullptr, 5000, rec.id, nullptr);
    net.send(0, 1, 7, nullptr, 5000, rec.id, nullptr);
    net.send(0, 2, 7, nullptr, 5000, rec.id, nullptr);
    net.run();
    near(rec.recv_done[1], 5.7);
    near(rec.recv_done[2], 20.8);
}

// Two ranks on one core: each message also waits wake_us (3) for the
// scheduler: test_shared_core_slows_cpu's 1.9 + 3.
void test_wake_delay(void **) {
    Machine m = hand_machine();
    m.cores_per_node = 1;
    m.wake_us = 3;
    Network net(2, m);
    Recorder rec(net);
    post_message(net, rec, 1, 1000);
    net.run();
    near(rec.recv_done[1], 4.9);
}

// A token bucket on the inter-node link (tbf): G 0.01 sustained, G0 0.001
// while tokens last, 1500 bytes of them. One 1000-byte message: o 1, then
// 1 us on the sender's port and 1 on the receiver's (landed at 2 + L = 7),
// received at 8. A second one right behind it (port free at 3, 100 tokens
// refilled: 600): 0.6 + 400 bytes at 0.01 = 4.6 us on each port, landed at
// 12.6, received at 13.6.
void test_token_bucket(void **) {
    for (int messages : {1, 2}) {
        Machine m = hand_machine();
        m.inter.G = 0.01;
        m.inter.G0 = 0.001;
        m.inter.burst = 1500;
        Network net(3, m);
        Recorder rec(net);
        for (int i = 0; i < messages; ++i) {
            post_message(net, rec, 2, 1000);
        }
        net.run();
        near(rec.recv_done[2], messages == 1 ? 8.0 : 13.6);
    }
}

// perf/adapt2_bench's loop (barrier): 3 lock-step binomial calls of 4 ranks
// (test_lockstep_binomial_by_hand: 3.4 each), each started 1 us after the
// last rank returned from the previous one.
void test_barrier_loop(void **) {
    Machine m = hand_machine();
    m.ranks_per_node = 4;
    m.cores_per_node = 4;
    LockstepConfig c;
    c.algorithm = Lockstep::binomial;
    c.bytes = 1000;
    LoopConfig loop;
    loop.iterations = 3;
    loop.barrier = true;
    loop.barrier_us = 1.0;
    LoopResult r = run_loop(4, m, loop, [&](Network &n, CallListener &l) { return make_lockstep(n, l, c); });
    assert_true(r.complete);
    near(r.median_last, 3.4);
    near(r.max_time, 2 * (3.4 + 1.0) + 3.4);
    assert_int_equal(r.messages, 9);
}

// The machine spec parser knows the new keys and refuses unknown ones.
void test_parse_machine(void **) {
    Machine m;
    assert_string_equal(parse_machine("intra.get=1,inter.eager=65536,host_cores=2,share=1,copy=1e-4,eager=8192,"
                                      "mem=6e-5,wake=2,inter.burst=1e6,inter.G0=5e-4",
                                      m)
                            .c_str(),
                        "");
    assert_true(m.intra.get && !m.inter.get);
    assert_int_equal(m.eager(m.inter), 8192);  // eager= sets both links, later than inter.eager
    assert_int_equal(m.host_cores, 2);
    assert_true(m.share_busy);
    near(m.copy_us_per_byte, 1e-4);
    near(m.mem_G, 6e-5);
    near(m.wake_us, 2);
    near(m.inter.burst, 1e6);
    near(m.inter.G0, 5e-4);
    assert_string_not_equal(parse_machine("intra.x=1", m).c_str(), "");
    assert_string_not_equal(parse_machine("intra.L=-1", m).c_str(), "");
}

// Binomial of 4 from rank 0 (children 2 then 1; 2 feeds 3), 1000 bytes:
// root sends to 2 (port 0.1-1.1, lands 1.6) and 1 (port 1.1-2.1, lands
// 2.6); rank 2 handles at 1.7, sends at 1.8 (port 1.8-2.8, lands 3.3).
// Calls return: 0 at 2.1 (last send), 1 at 2.7, 2 at 2.8, 3 at 3.4.
void test_lockstep_binomial_by_hand(void **) {
    Machine m = hand_machine();
    m.ranks_per_node = 4;
    m.cores_per_node = 4;
    LockstepConfig c;
    c.algorithm = Lockstep::binomial;
    c.bytes = 1000;
    LoopResult r = run_loop(4, m, LoopConfig{}, [&](Network &n, CallListener &l) { return make_lockstep(n, l, c); });
    assert_true(r.complete);
    near(r.root_done, 2.1);
    near(r.max_time, 3.4);
    near(r.mean_time, (2.1 + 2.7 + 2.8 + 3.4) / 4);
    assert_int_equal(r.messages, 3);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eager_message),
        cmocka_unit_test(test_rendezvous_message),
        cmocka_unit_test(test_port_serializes),
        cmocka_unit_test(test_gap_bounds_small_messages),
        cmocka_unit_test(test_busy_cpu_delays_completion),
        cmocka_unit_test(test_shared_core_slows_cpu),
        cmocka_unit_test(test_inter_node_link),
        cmocka_unit_test(test_single_copy_get),
        cmocka_unit_test(test_eager_limit_per_link),
        cmocka_unit_test(test_share_by_busy_ranks),
        cmocka_unit_test(test_host_cores),
        cmocka_unit_test(test_memory_bandwidth),
        cmocka_unit_test(test_wake_delay),
        cmocka_unit_test(test_token_bucket),
        cmocka_unit_test(test_barrier_loop),
        cmocka_unit_test(test_parse_machine),
        cmocka_unit_test(test_lockstep_binomial_by_hand),
    };
    return cmocka_run_group_tests_name("sim_loggp", tests, nullptr, nullptr);
}
