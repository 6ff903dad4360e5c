// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Allgather by Bruck's algorithm, for small blocks: ceil(log2 p) exchanges
// instead of the ring's p - 1 steps.
//
// The working buffer holds the p blocks rotated: its block i is rank
// (r + i) mod p's. In exchange k (distance d = 2^k) rank r sends its first
// min(d, p - d) blocks to rank r - d and receives as many from rank r + d
// into its blocks d.. . Every receive is posted at once (each has its own
// place and tag); exchange k's send leaves as soon as exchanges 0..k-1 have
// landed, the blocks it carries. Each block that lands goes to the user's
// buffer at once, un-rotated. No barrier, no round: a slow partner delays only
// what depends on it.
#ifndef ADAPT2_ENGINE_BRUCK_FLOW_H
#define ADAPT2_ENGINE_BRUCK_FLOW_H

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
    adapt2_buffer_t result{};  // the user's receive buffer: p blocks
};

class BruckFlow final : public Flow {
public:
    static int exchanges(int size);  // ceil(log2 size)
    static int tags_needed(int size) { return exchanges(size) > 0 ? exchanges(size) : 1; }

    BruckFlow(Schedule &schedule, int id, const BruckArgs &args, BufferPool &pool);

    int max_ops() const override { return 2 * exchanges_; }
    void start() override;
    void on_complete(Op &op) override;
    bool has_pending_work() const override;
    void finish() override;

private:
    int blocks_of(int k) const;  // blocks exchange k carries
    void post_sends();
    void deliver(int first_block, int blocks);

    int rank_, size_, tag_, exchanges_;
    size_t block_;
    UserRange own_;
    adapt2_buffer_t result_;
    BufferPool &pool_;
    char *work_ = nullptr;
    int next_send_ = 0;
    CompletionWindow landed_;  // exchanges whose receive has landed
    int sends_done_ = 0;
};

}  // namespace adapt2

#endif
