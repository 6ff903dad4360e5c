// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
#include "loop.h"

#include <algorithm>
#include <vector>

namespace adapt2::sim {

namespace {

enum Step : int { kWork = 0, kCall = 1 };

// Drives every rank through the loop; per rank a few numbers only.
class LoopDriver final : public EventSink, public CallListener {
public:
    LoopDriver(Network &net, const LoopConfig &config)
        : net_(net), config_(config), ranks_(net.ranks()), slowest_(config.barrier ? config.iterations : 0) {
        for (int r = 0; r < net.ranks(); ++r) ranks_[r].noise = config.noise.setup(r, net.ranks());
    }
    void set_collective(Collective *c) { collective_ = c; }

    void begin() {
        for (int r = 0; r < net_.ranks(); ++r) net_.at(r, 0.0, this, nullptr, kWork);
    }

    void on_event(const Event &e) override {
        RankLoop &me = ranks_[e.rank];
        if (e.arg == kWork) {  // compute, then this iteration's noise, on this CPU
            const double compute_end = net_.now(e.rank) + config_.compute_us;
            const double noise = config_.noise.next(me.noise, e.rank, me.iter, compute_end);
            net_.charge(e.rank, config_.compute_us + noise);
            net_.at(e.rank, net_.now(e.rank), this, nullptr, kCall);
            return;
        }
        me.call_start = net_.now(e.rank);
        collective_->start(e.rank);
    }

    void call_done(int rank) override {
        RankLoop &me = ranks_[rank];
        const double t = net_.now(rank);
        me.call_sum += t - me.call_start;
        me.last_done = t;
        if (config_.barrier) {  // wait for every rank, then all start the next call together
            slowest_[me.iter] = std::max(slowest_[me.iter], t - me.call_start);
            release_ = std::max(release_, t);
            ++me.iter;
            if (++arrived_ < int(ranks_.size())) return;
            arrived_ = 0;
            if (me.iter < config_.iterations) {
                for (int r = 0; r < int(ranks_.size()); ++r)
                    net_.at(r, release_ + config_.barrier_us, this, nullptr, kWork);
            }
            return;
        }
        if (++me.iter < config_.iterations) net_.at(rank, t, this, nullptr, kWork);
    }
    void call_finished(int rank) override {
        RankLoop &me = ranks_[rank];
        ++me.finished_calls;
        me.finished_at = std::max(me.finished_at, net_.now(rank));
    }

    LoopResult result() const {
        LoopResult out;
        const double n = ranks_.size();
        for (size_t r = 0; r < ranks_.size(); ++r) {
            const RankLoop &me = ranks_[r];
            out.mean_time += me.last_done / n;
            out.max_time = std::max(out.max_time, me.last_done);
            out.mean_call += me.call_sum / n / config_.iterations;
            out.finished = std::max(out.finished, me.finished_at);
            out.mean_noise += me.noise.total / n;
            out.complete &= me.iter == config_.iterations && me.finished_calls == config_.iterations;
        }
        out.root_done = ranks_.empty() ? 0 : ranks_[0].last_done;
        if (!slowest_.empty()) {
            std::vector<double> s = slowest_;
            std::sort(s.begin(), s.end());
            const size_t n = s.size();
            out.median_last = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
        }
        return out;
    }

private:
    struct RankLoop {
        double call_start = 0, call_sum = 0, last_done = 0, finished_at = 0;
        NoiseModel::RankNoise noise;
        int iter = 0, finished_calls = 0;
    };
    Network &net_;
    const LoopConfig &config_;
    std::vector<RankLoop> ranks_;
    std::vector<double> slowest_;  // barrier: per call, the slowest rank's time in it
    double release_ = 0;           // barrier: when the last rank returned
    int arrived_ = 0;              // barrier: ranks done with the current call
    Collective *collective_ = nullptr;
};

}  // namespace

LoopResult run_loop(int ranks, const Machine &machine, const LoopConfig &config, const CollectiveFactory &make) {
    Network net(ranks, machine);
    LoopDriver driver(net, config);
    std::unique_ptr<Collective> collective = make(net, driver);
    driver.set_collective(collective.get());
    driver.begin();
    net.run();
    LoopResult out = driver.result();
    out.messages = net.messages();
    out.bytes = net.bytes_moved();
    out.inter_bytes = net.inter_node_bytes();
    out.events = net.events();
    out.complete &= net.unmatched() == 0;
    return out;
}

}  // namespace adapt2::sim
