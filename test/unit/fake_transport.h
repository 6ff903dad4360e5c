// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// An in-process network of N ranks for unit tests of the engine. Sends and
// receives match per (source, destination, tag) in posting order, like MPI.
// Completions are held back and delivered in a chosen adversarial order; a
// poster's own operation may complete inside the post call, and small sends
// complete before they are matched (eager), as in a real PML.
#ifndef ADAPT2_TEST_FAKE_TRANSPORT_H
#define ADAPT2_TEST_FAKE_TRANSPORT_H

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <tuple>
#include <vector>

#include "transport.h"

namespace adapt2::test {

enum class Order {
    random,  // any pending completion may come next
    lifo,    // newest first
    fifo,    // oldest first
};

struct NetworkOptions {
    Order order = Order::random;
    uint64_t seed = 1;
    double inline_probability = 0.3;  // own op completes inside the post call
    size_t eager_limit = 64;          // sends up to this size complete unmatched
    // Like pml ucx: a send that has not completed yet may be overtaken by
    // later ones with the same (source, destination, tag), even by sends
    // that complete at once.
    bool overtake_pending = false;
};

class FakeNetwork {
public:
    FakeNetwork(int ranks, NetworkOptions options);
    ~FakeNetwork();

    // The transport rank `r` posts through; owned by the caller.
    std::unique_ptr<Transport> endpoint(int rank);

    // Delivers held-back completions until none is left; returns how many.
    long run();
    // Completes every receive still unmatched with `status` (as a job abort
    // would end them), then runs; returns how many there were.
    long fail_unmatched_receives(int status);

    // Bookkeeping the tests assert on.
    long posted() const { return posted_; }
    long completed() const { return completed_; }
    int max_recvs_in_flight(int rank) const { return max_recvs_[rank]; }
    int max_sends_in_flight(int src, int dst) const;
    long messages_received(int rank) const { return received_[rank]; }
    size_t unmatched() const;

private:
    friend class FakeEndpoint;
    struct Send {
        int src;
        const char *buf;
        std::vector<char> eager_copy;  // filled when the send completed early
        size_t len;
        Op *op;
        bool completed_early;
    };
    struct Recv {
        int dst;
        char *buf;
        size_t len;
        Op *op;
    };
    struct Completion {
        Op *op;
        int rank;  // whose operation it is
        bool is_recv;
        int peer;
    };
    using Key = std::tuple<int, int, int>;  // src, dst, tag

    int post_send(int src, const void *buf, size_t len, int dst, int tag, Op *op);
    int post_recv(int dst, void *buf, size_t len, int src, int tag, Op *op);
    void try_match(const Key &key, int poster, Op *posted_op);
    void finish(const Completion &c);
    bool inline_now();

    int ranks_;
    NetworkOptions options_;
    std::mt19937_64 rng_;
    std::map<Key, std::deque<Send>> sends_;
    std::map<Key, std::deque<Recv>> recvs_;
    std::vector<Completion> pending_;
    std::vector<int> recvs_in_flight_, max_recvs_;
    std::map<std::pair<int, int>, int> sends_in_flight_, max_sends_;
    std::vector<long> received_;
    long posted_ = 0, completed_ = 0;
};

}  // namespace adapt2::test

#endif
