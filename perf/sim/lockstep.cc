// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
#include "lockstep.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

namespace adapt2::sim {

bool lockstep_from_name(const std::string &name, Lockstep *out) {
    if (name == "binomial")
        *out = Lockstep::binomial;
    else if (name == "knomial")
        *out = Lockstep::knomial;
    else if (name == "chain")
        *out = Lockstep::chain;
    else if (name == "scatter-allgather")
        *out = Lockstep::scatter_allgather;
    else if (name == "tuned")
        *out = Lockstep::tuned;
    else
        return false;
    return true;
}

// ompi_coll_tuned_bcast_intra_dec_fixed (Open MPI 4.1) for p >= 64 and
// messages from 64 KiB (the range the simulator is used for): radix-4
// k-nomial below p 1024 (and below 512 KiB up to p 2048, 256 KiB beyond),
// scatter-allgather above. Smaller cases fall back to binomial.
Lockstep tuned_bcast_choice(size_t bytes, int p) {
    if (p < 64) return Lockstep::binomial;
    if (p < 1024) return Lockstep::knomial;
    const size_t scatter_from = p < 2048 ? 524288 : 262144;
    if (bytes >= scatter_from && (p & (p - 1)) == 0) return Lockstep::scatter_allgather;
    return Lockstep::knomial;
}

namespace {

// Cookies of posted operations: which segment (or step), and whether a send.
void *cookie(int index, bool is_send) { return reinterpret_cast<void *>(uintptr_t(index) << 1 | uintptr_t(is_send)); }
int index_of(void *c) { return int(reinterpret_cast<uintptr_t>(c) >> 1); }

// Shared by the baselines: posting, counting, reporting.
class LockstepBase : public Collective, public Completer {
public:
    LockstepBase(Network &net, CallListener &listener, const LockstepConfig &config)
        : net_(net), listener_(listener), config_(config), id_(net.add_completer(this)), pending_(net.ranks(), 0) {}

    void completed(int rank, void *c, bool is_recv) override {
        --pending_[rank];
        on_complete(rank, index_of(c), is_recv);
    }

protected:
    // One of the rank's operations completed (pending_ already counts it off).
    virtual void on_complete(int rank, int index, bool is_recv) = 0;
    void send(int rank, int to, int tag, size_t bytes, int index = 0) {
        ++pending_[rank];
        net_.send(rank, to, tag, nullptr, bytes, id_, cookie(index, true));
    }
    void recv(int rank, int from, int tag, size_t bytes, int index = 0) {
        ++pending_[rank];
        net_.recv(rank, from, tag, nullptr, bytes, id_, cookie(index, false));
    }
    void done(int rank) {
        listener_.call_done(rank);
        listener_.call_finished(rank);
    }
    void combine(int rank, size_t bytes) {
        const Machine &m = net_.machine();
        net_.memory_work(rank, double(bytes) * m.combine_us_per_byte, bytes);
    }

    Network &net_;
    CallListener &listener_;
    LockstepConfig config_;
    int id_;
    std::vector<int> pending_;  // operations in flight per rank
};

// Segmented broadcast down a tree, tuned's generic tree bcast: receive
// segment s (s+1 is prefetched), send it to every child, wait for those
// sends, then segment s+1. The call returns when the last sends are done.
class TreeBcast final : public LockstepBase {
public:
    TreeBcast(Network &net, CallListener &l, const LockstepConfig &c, TreeSpec spec, size_t segment)
        : LockstepBase(net, l, c),
          tree_(build_tree(spec, net.ranks(), c.root)),
          segment_(segment && segment < c.bytes ? segment : c.bytes),
          nseg_(segment_ ? int((c.bytes + segment_ - 1) / segment_) : 1),
          state_(net.ranks()) {}

    void start(int rank) override {
        state_[rank] = State{};
        for (int k = 0; k < 2 && k < nseg_ && !root(rank); ++k) post_recv(rank, k);
        advance(rank);
    }

private:
    struct State {
        int cur = 0;           // segment being forwarded or waited for
        unsigned arrived = 0;  // bit i: segment cur+i has arrived
        int sends = 0;         // sends of segment cur in flight
        bool forwarding = false;
    };
    bool root(int rank) const { return tree_.parent(rank) < 0; }
    size_t seg_bytes(int s) const { return s < nseg_ - 1 ? segment_ : config_.bytes - size_t(nseg_ - 1) * segment_; }
    void post_recv(int rank, int s) { recv(rank, tree_.parent(rank), s, seg_bytes(s), s); }
    void on_complete(int rank, int index, bool is_recv) override {
        State &s = state_[rank];
        if (is_recv)
            s.arrived |= 1u << (index - s.cur);
        else
            --s.sends;
        advance(rank);
    }
    void advance(int rank);

    Tree tree_;
    size_t segment_;
    int nseg_;
    std::vector<State> state_;
};

void TreeBcast::advance(int rank) {
    State &s = state_[rank];
    for (;;) {
        if (s.sends > 0) return;
        if (s.forwarding) {  // segment cur is out: on to the next one
            s.forwarding = false;
            ++s.cur;
            s.arrived >>= 1;
            if (!root(rank) && s.cur + 1 < nseg_) post_recv(rank, s.cur + 1);
        }
        if (s.cur == nseg_) {
            done(rank);
            return;
        }
        if (!root(rank) && !(s.arrived & 1u)) return;
        s.forwarding = true;
        for (int c : tree_.children(rank)) {
            ++s.sends;
            send(rank, c, s.cur, seg_bytes(s.cur), s.cur);
        }
    }
}

// Binomial scatter of p chunks, then a recursive-doubling allgather (p a
// power of two), in relative ranks v = rank - root. Steps: 0 the scatter's
// receive, 1 its sends, 2 + k allgather round k.
class ScatterAllgather final : public LockstepBase {
public:
    ScatterAllgather(Network &net, CallListener &l, const LockstepConfig &c)
        : LockstepBase(net, l, c), p_(net.ranks()), chunk_((c.bytes + p_ - 1) / p_), step_(net.ranks(), 0) {
        if (p_ & (p_ - 1)) throw std::invalid_argument("scatter-allgather needs a power-of-two number of ranks");
        while ((1 << rounds_) < p_) ++rounds_;
    }
    void start(int rank) override {
        step_[rank] = 0;
        run(rank);
    }

private:
    int rel(int rank) const { return (rank - config_.root + p_) % p_; }
    int abs(int v) const { return (v + config_.root) % p_; }
    static int lowbit(int v) { return v & -v; }
    // Bytes of chunks [first, first + count).
    size_t bytes_of(long first, long count) const {
        const size_t lo = std::min(config_.bytes, size_t(first) * chunk_);
        const size_t hi = std::min(config_.bytes, size_t(first + count) * chunk_);
        return hi - lo;
    }
    int subtree(int v) const { return std::min(v ? lowbit(v) : p_, p_ - v); }
    void on_complete(int rank, int, bool) override {
        if (pending_[rank] == 0) run(rank);
    }
    void run(int rank);

    int p_;
    size_t chunk_;
    int rounds_ = 0;
    std::vector<int> step_;
};

void ScatterAllgather::run(int rank) {
    const int v = rel(rank);
    while (pending_[rank] == 0) {
        const int s = step_[rank]++;
        if (s == 0) {
            if (v) recv(rank, abs(v - lowbit(v)), 0, bytes_of(v, subtree(v)));
        } else if (s == 1) {
            for (int k = subtree(v) / 2; k >= 1; k /= 2) {
                if (v + k < p_) send(rank, abs(v + k), 0, bytes_of(v + k, std::min(k, p_ - v - k)));
            }
        } else if (s - 2 < rounds_) {
            const int k = s - 2, size = 1 << k, partner = v ^ size;
            recv(rank, abs(partner), 1 + k, bytes_of(partner & ~(size - 1), size));
            send(rank, abs(partner), 1 + k, bytes_of(v & ~(size - 1), size));
        } else {
            done(rank);
            return;
        }
    }
}

// Whole-message reduce up a tree (tuned's binomial reduce with no
// segments): receive every child's contribution, combine each as it lands,
// then send to the parent and wait.
class TreeReduce final : public LockstepBase {
public:
    TreeReduce(Network &net, CallListener &l, const LockstepConfig &c, TreeSpec spec)
        : LockstepBase(net, l, c), tree_(build_tree(spec, net.ranks(), c.root)), sent_(net.ranks(), 0) {}
    void start(int rank) override {
        sent_[rank] = 0;
        for (int c : tree_.children(rank)) recv(rank, c, 0, config_.bytes);
        if (pending_[rank] == 0) up(rank);
    }

private:
    void on_complete(int rank, int, bool is_recv) override {
        if (is_recv) combine(rank, config_.bytes);
        if (pending_[rank] == 0) up(rank);
    }
    void up(int rank) {
        if (sent_[rank] || tree_.parent(rank) < 0) {
            done(rank);
            return;
        }
        sent_[rank] = 1;
        send(rank, tree_.parent(rank), 0, config_.bytes);
    }
    Tree tree_;
    std::vector<char> sent_;
};

}  // namespace

std::unique_ptr<Collective> make_lockstep(Network &net, CallListener &listener, const LockstepConfig &config) {
    Lockstep alg = config.algorithm;
    if (alg == Lockstep::tuned) alg = tuned_bcast_choice(config.bytes, net.ranks());
    if (config.kind == CollKind::reduce) {
        if (alg == Lockstep::chain)
            return std::make_unique<TreeReduce>(net, listener, config, TreeSpec{TreeShape::pipeline, 0});
        return std::make_unique<TreeReduce>(net, listener, config, TreeSpec{TreeShape::binomial, 0});
    }
    if (config.kind != CollKind::bcast) throw std::invalid_argument("lock-step baselines: bcast and reduce only");
    switch (alg) {
    case Lockstep::knomial:
        return std::make_unique<TreeBcast>(net, listener, config, TreeSpec{TreeShape::knomial, 4}, 0);
    case Lockstep::chain:
        return std::make_unique<TreeBcast>(net, listener, config, TreeSpec{TreeShape::pipeline, 0}, config.segment);
    case Lockstep::scatter_allgather: return std::make_unique<ScatterAllgather>(net, listener, config);
    default: return std::make_unique<TreeBcast>(net, listener, config, TreeSpec{TreeShape::binomial, 0}, 0);
    }
}

}  // namespace adapt2::sim
