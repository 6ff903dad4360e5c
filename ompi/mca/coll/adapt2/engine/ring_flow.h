// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Reduce-scatter and allgather around a ring, pipelined by segments, driven
// only by data. An allreduce runs the two phases back to back in one flow
// (reduce-scatter, then allgather of the reduced blocks); Reduce_scatter_block
// runs the first phase alone, Allgather the second.
//
// The working buffer holds p blocks, each cut into k segments. Messages to
// the right neighbour are numbered m = step * k + segment over the steps of
// the phases (p-1 each), and the left neighbour's messages likewise. Message
// m can go as soon as message m - k from the left has been combined
// (reduce-scatter) or has landed (allgather), since both concern the same
// block one step later; the first k go at once. So a slow neighbour delays
// only the segments that need it, and there is no barrier between the phases.
// Each block is combined in ring order, which is fixed: the result does not
// depend on arrival order. Commutative ops only.
//
// Where the user's buffer is not the working buffer (a non-contiguous
// datatype, or a reduce-scatter, whose input and output differ), the flow
// fills the working buffer from the user's data when it starts and delivers
// each byte of the result to the user's buffer as soon as it is final.
#ifndef ADAPT2_ENGINE_RING_FLOW_H
#define ADAPT2_ENGINE_RING_FLOW_H

#include <vector>

#include "buffer_pool.h"
#include "completion_window.h"
#include "flow.h"
#include "staging_ring.h"
#include "user_data.h"

namespace adapt2 {

struct RingArgs {
    int rank = 0;
    int size = 1;
    int tag = 0;                 // first of tags_needed(send_window) tags, counting down
    char *work = nullptr;        // the working buffer: p blocks, contiguous host memory
    size_t bytes = 0;            // of the working buffer
    size_t block_bytes = 0;      // each block's size; 0: p blocks of nearly equal element counts
    size_t unit = 1;             // blocks and segments are cut at multiples of this
    bool reduce_scatter = true;  // the phases this flow runs
    bool allgather = true;
    adapt2_reduction_t op{};  // reduce-scatter only
    bool fill = false;        // copy `fill_from` into the working buffer at start
    UserRange fill_from;
    bool deliver = false;        // copy final bytes [to, to + bytes) of work into the user's buffer
    UserRange deliver_to;        // (`to` is the working-buffer side, `from` the user's offset of `to`)
    bool work_borrowed = false;  // the working buffer came from the pool: give it back at the end
    size_t segment_bytes = 0;
    int recv_window = 4;
    int send_window = 2;
};

class RingFlow final : public Flow {
public:
    static int tags_needed(int send_window);

    RingFlow(Schedule &schedule, int id, const RingArgs &args, BufferPool &pool);

    int max_ops() const override { return recv_window_ + send_window_; }
    void start() override;
    void on_complete(Op &op) override;
    bool has_pending_work() const override;
    void finish() override;

private:
    struct Piece {  // the part of the working buffer one message carries
        size_t offset;
        size_t bytes;
    };
    Piece block(int b) const;
    Piece piece(int message, bool to_right) const;
    bool in_reduce_scatter(int message) const { return message < rs_steps_ * k_; }
    // The last reduce-scatter step: its combines make this rank's own block final.
    bool final_combine(int message) const;
    void fill();
    void deliver(const Piece &p);
    void post_receives();
    void post_sends();
    void on_received(int message);

    int rank_, size_;
    int left_, right_;
    int tag_;
    char *work_;
    size_t work_bytes_;
    adapt2_reduction_t op_;
    size_t unit_;
    int recv_window_, send_window_;
    int rs_steps_, ag_steps_;           // p - 1 for each phase this flow runs, else 0
    int owner_shift_;                   // after reduce-scatter, rank r holds block r + shift
    size_t block_units_, extra_units_;  // blocks of block_units_ (+1 for the first extra_units_)
    size_t segment_bytes_;
    int k_ = 1;         // segments per block
    int messages_ = 0;  // each way
    bool fill_, deliver_, work_borrowed_;
    UserRange fill_from_, deliver_to_;
    BufferPool &pool_;
    StagingRing staging_;  // reduce-scatter receives land here first
    int next_recv_ = 0, next_send_ = 0;
    CompletionWindow landed_;  // messages from the left combined or in place
    CompletionWindow sent_;    // messages to the right completed
    uint64_t bytes_sent_ = 0;
};

}  // namespace adapt2

#endif
