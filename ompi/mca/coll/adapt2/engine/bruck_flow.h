// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Allgather by ceil(log2 p) exchanges instead of the ring's p - 1 steps, for
// small blocks: the exchanges of allgather_plan.h, the same the direct path
// runs for blocking calls.
//
// On a power of two ranks, recursive doubling in rank order: where the
// user's result buffer is contiguous it is the working buffer, so nothing is
// borrowed or copied but the own block. Otherwise Bruck's: the working
// buffer (from the pool) holds the p blocks rotated (its block i is rank
// (r + i) mod p's); in exchange k (distance d = 2^k) rank r sends its first
// min(d, p - d) blocks to rank r - d and receives as many from rank r + d
// into its blocks d.. . Every receive is posted at once (each has its own
// place and tag); exchange k's send leaves as soon as exchanges 0..k-1 have
// landed, the blocks it carries. Each block that lands in a borrowed buffer
// goes to the user's buffer at once, un-rotated. No barrier, no round: a
// slow partner delays only what depends on it.
//
// `linear`: the linear exchange of allgather_plan.h instead (p - 1 exchanges,
// each carrying only the own block, blocks in rank order): every send and
// receive is posted at once, so nothing waits for anything but its own
// partner. One tag: a pair exchanges one message each way.
#ifndef ADAPT2_ENGINE_BRUCK_FLOW_H
#define ADAPT2_ENGINE_BRUCK_FLOW_H

#include <vector>

#include "buffer_pool.h"
#include "completion_window.h"
#include "flow.h"
#include "user_data.h"

namespace adapt2 {

struct BruckArgs {
    int rank = 0;
    int size = 1;
    int tag = 0;  // first of tags_needed(size) tags, counting down
    size_t block_bytes = 0;
    UserRange own;             // this rank's block (its `from` in `user`); `to` unused
    bool in_place = false;     // own is this rank's block of `result`
    adapt2_buffer_t result{};  // the user's receive buffer: p blocks
    bool linear = false;       // the linear exchange
};

class BruckFlow final : public Flow {
public:
    static int exchanges(int size);  // ceil(log2 size)
    static int tags_needed(int size, bool linear) { return linear || exchanges(size) == 0 ? 1 : exchanges(size); }

    BruckFlow(Schedule &schedule, int id, const BruckArgs &args, BufferPool &pool);

    int max_ops() const override { return 2 * exchanges_; }
    void start() override;
    void on_complete(Op &op) override;
    bool has_pending_work() const override;
    void finish() override;

private:
    size_t bytes_of(int k) const { return static_cast<size_t>(steps_[k].blocks) * block_; }
    char *slot(int i) const { return work_ + static_cast<size_t>(i) * block_; }
    int tag_of(int k) const { return linear_ ? tag_ : tag_ - k; }
    void post_sends();
    void deliver(int first_slot, int blocks);

    int rank_, size_, tag_, exchanges_ = 0;
    size_t block_;
    UserRange own_;
    adapt2_buffer_t result_;
    BufferPool &pool_;
    bool linear_;     // the linear exchange: every send at once, one tag
    bool rotated_;    // Bruck's order (p not a power of two)
    bool in_result_;  // work_ is the user's result buffer
    bool in_place_;
    std::pmr::vector<adapt2_direct_step_t> steps_;
    char *work_ = nullptr;
    int next_send_ = 0;
    CompletionWindow landed_;  // exchanges whose receive has landed
    int sends_done_ = 0;
};

}  // namespace adapt2

#endif
