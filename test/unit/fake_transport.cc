// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
#include "fake_transport.h"

#include <cstring>
#include <stdexcept>

#include "schedule.h"

namespace adapt2::test {

class FakeEndpoint final : public Transport {
public:
    FakeEndpoint(FakeNetwork &net, int rank) : net_(net), rank_(rank) {}
    int send(const void *buf, size_t len, int peer, int tag, Op *op) override {
        return net_.post_send(rank_, buf, len, peer, tag, op);
    }
    int recv(void *buf, size_t len, int peer, int tag, Op *op) override {
        return net_.post_recv(rank_, buf, len, peer, tag, op);
    }

private:
    FakeNetwork &net_;
    int rank_;
};

FakeNetwork::FakeNetwork(int ranks, NetworkOptions options)
    : ranks_(ranks),
      options_(options),
      rng_(options.seed),
      recvs_in_flight_(ranks, 0),
      max_recvs_(ranks, 0),
      received_(ranks, 0) {}

FakeNetwork::~FakeNetwork() = default;

std::unique_ptr<Transport> FakeNetwork::endpoint(int rank) { return std::make_unique<FakeEndpoint>(*this, rank); }

bool FakeNetwork::inline_now() {
    return std::uniform_real_distribution<double>(0, 1)(rng_) < options_.inline_probability;
}

int FakeNetwork::post_send(int src, const void *buf, size_t len, int dst, int tag, Op *op) {
    if (dst < 0 || dst >= ranks_) return -1;
    ++posted_;
    int &inflight = sends_in_flight_[{src, dst}];
    ++inflight;
    int &peak = max_sends_[{src, dst}];
    peak = inflight > peak ? inflight : peak;

    Send s{src, static_cast<const char *>(buf), {}, len, op, false};
    Key key{src, dst, tag};
    if (len <= options_.eager_limit) {  // buffered: the sender may reuse its buffer at once
        s.eager_copy.assign(s.buf, s.buf + len);
        s.buf = s.eager_copy.data();
        s.completed_early = true;
    }
    bool early = s.completed_early;
    sends_[key].push_back(std::move(s));
    if (early) {
        Completion c{op, src, false, dst};
        if (inline_now()) {
            finish(c);
        } else {
            pending_.push_back(c);
        }
    }
    try_match(key, src, op);
    return 0;
}

int FakeNetwork::post_recv(int dst, void *buf, size_t len, int src, int tag, Op *op) {
    if (src < 0 || src >= ranks_) return -1;
    ++posted_;
    ++recvs_in_flight_[dst];
    if (recvs_in_flight_[dst] > max_recvs_[dst]) max_recvs_[dst] = recvs_in_flight_[dst];
    Key key{src, dst, tag};
    recvs_[key].push_back({dst, static_cast<char *>(buf), len, op});
    try_match(key, dst, op);
    return 0;
}

// Matches the oldest send with the oldest receive of one (src, dst, tag).
void FakeNetwork::try_match(const Key &key, int poster, Op *posted_op) {
    auto &sq = sends_[key];
    auto &rq = recvs_[key];
    while (!sq.empty() && !rq.empty()) {
        // A send still pending at the front may be overtaken by any later
        // send up to and including the first one that already completed
        // (completed sends are on the wire, in order).
        size_t pick = 0, pending = 0;
        while (pending < sq.size() && !sq[pending].completed_early) ++pending;
        size_t candidates = pending < sq.size() ? pending + 1 : pending;
        if (options_.overtake_pending && candidates > 1) {
            pick = std::uniform_int_distribution<size_t>(0, candidates - 1)(rng_);
        }
        Send s = std::move(sq[pick]);
        Recv r = rq.front();
        sq.erase(sq.begin() + static_cast<long>(pick));
        rq.pop_front();
        if (s.len != r.len) throw std::runtime_error("fake network: message size mismatch");
        if (s.len > 0) std::memcpy(r.buf, s.buf, s.len);  // hellos carry no buffer
        std::vector<Completion> now;
        if (!s.completed_early) now.push_back({s.op, s.src, false, r.dst});
        now.push_back({r.op, r.dst, true, s.src});
        for (const auto &c : now) {
            // Only the poster's own operation may complete inside its post call
            // (as with a PML); the other side's completion waits for "progress".
            if (c.op == posted_op && c.rank == poster && inline_now()) {
                finish(c);
            } else {
                pending_.push_back(c);
            }
        }
    }
}

void FakeNetwork::finish(const Completion &c) {
    ++completed_;
    if (c.is_recv) {
        --recvs_in_flight_[c.rank];
        ++received_[c.rank];
    } else {
        --sends_in_flight_[{c.rank, c.peer}];
    }
    c.op->owner->complete(c.op, 0);
}

long FakeNetwork::fail_unmatched_receives(int status) {
    long failed = 0;
    for (auto &entry : recvs_) {
        for (const Recv &r : entry.second) {
            --recvs_in_flight_[r.dst];
            ++failed;
            r.op->owner->complete(r.op, status);
        }
        entry.second.clear();
    }
    run();
    return failed;
}

long FakeNetwork::run() {
    long delivered = 0;
    while (!pending_.empty()) {
        size_t i = 0;
        switch (options_.order) {
        case Order::fifo: i = 0; break;
        case Order::lifo: i = pending_.size() - 1; break;
        case Order::random: i = std::uniform_int_distribution<size_t>(0, pending_.size() - 1)(rng_); break;
        }
        Completion c = pending_[i];
        pending_.erase(pending_.begin() + static_cast<long>(i));
        finish(c);
        ++delivered;
    }
    return delivered;
}

int FakeNetwork::max_sends_in_flight(int src, int dst) const {
    auto it = max_sends_.find({src, dst});
    return it == max_sends_.end() ? 0 : it->second;
}

size_t FakeNetwork::unmatched() const {
    size_t n = 0;
    for (const auto &q : sends_) n += q.second.size();
    for (const auto &q : recvs_) n += q.second.size();
    return n;
}

}  // namespace adapt2::test
