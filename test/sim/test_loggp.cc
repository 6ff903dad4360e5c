// The simulated network against LogGP times computed by hand: one eager
// message, one rendezvous message, a sender's port serializing two
// messages, a busy CPU delaying a completion, intra- vs inter-node links,
// and a whole lock-step binomial broadcast of 4 ranks.
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
    explicit Recorder(Network &n) : net(n), id(n.add_completer(this)), send_done(n.ranks(), -1), recv_done(n.ranks(), -1) {}
    void completed(int rank, void *, bool is_recv) override {
        (is_recv ? recv_done : send_done)[rank] = net.now(rank);
    }
};

void near(double got, double want) {
    if (std::fabs(got - want) > 1e-9) fail_msg("got %.9f, want %.9f", got, want);
}

void test_eager_message(void **) {
    Network net(2, hand_machine());
    Recorder rec(net);
    net.recv(1, 0, 7, nullptr, 1000, rec.id, nullptr);
    net.send(0, 1, 7, nullptr, 1000, rec.id, nullptr);
    net.run();
    // sender: o = 0.1, wire 1.0 -> injected at 1.1; lands at 1.1 + L = 1.6;
    // the receiver's handler runs after its o: 1.7.
    near(rec.send_done[0], 1.1);
    near(rec.recv_done[1], 1.7);
}

void test_rendezvous_message(void **) {
    Network net(2, hand_machine());
    Recorder rec(net);
    net.recv(1, 0, 7, nullptr, 5000, rec.id, nullptr);
    net.send(0, 1, 7, nullptr, 5000, rec.id, nullptr);
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
    Network net(3, [] { Machine m = hand_machine(); m.ranks_per_node = m.cores_per_node = 3; return m; }());
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
    net.recv(1, 0, 7, nullptr, 1000, rec.id, nullptr);
    net.send(0, 1, 7, nullptr, 1000, rec.id, nullptr);
    net.run();
    near(rec.recv_done[1], 10.1);
}

// Two ranks on one core: every CPU cost doubles (o 0.2 each side).
void test_shared_core_slows_cpu(void **) {
    Machine m = hand_machine();
    m.cores_per_node = 1;
    Network net(2, m);
    Recorder rec(net);
    net.recv(1, 0, 7, nullptr, 1000, rec.id, nullptr);
    net.send(0, 1, 7, nullptr, 1000, rec.id, nullptr);
    net.run();
    near(rec.recv_done[1], 0.2 + 1.0 + 0.5 + 0.2);
}

void test_inter_node_link(void **) {
    Network net(3, hand_machine());  // nodes {0,1}, {2}
    Recorder rec(net);
    net.recv(2, 0, 7, nullptr, 1000, rec.id, nullptr);
    net.send(0, 2, 7, nullptr, 1000, rec.id, nullptr);
    net.run();
    // inter: o 1, wire 10 -> injected at 11, lands at 16, receiver o: 17.
    near(rec.send_done[0], 11.0);
    near(rec.recv_done[2], 17.0);
    assert_int_equal(net.inter_node_bytes(), 1000);
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
        cmocka_unit_test(test_lockstep_binomial_by_hand),
    };
    return cmocka_run_group_tests_name("sim_loggp", tests, nullptr, nullptr);
}
