// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Reduce_scatter_block by recursive halving, for small messages and for
// non-commutative ops: ceil(log2 p) exchanges instead of the ring's p - 1.
//
// Data is folded in rank order, so non-commutative ops work and the result
// does not depend on arrival order. With p not a power of two, the first
// 2*rem ranks (rem = p - 2^floor(log2 p)) pair up: each even one (a giver)
// hands its whole input to the odd one after it (a taker), which folds it on
// the left, and gets its own block back at the end. The taker and the other
// ranks are the virtual ranks 0..p'-1 in rank order (p' = p - rem); virtual
// block w is the blocks of virtual rank w's real ranks (two for a taker).
//
// Exchange k (distance m = 2^k) pairs virtual ranks v and v ^ m: v sends the
// virtual blocks w = v ^ m (mod 2m), which its partner keeps, and folds what
// arrives into those with w = v (mod 2m). After it, a kept block holds the
// reduction over v's aligned group of 2m virtual ranks, which are
// consecutive ranks: folding the lower group's data on the left keeps rank
// order. Every receive is posted at once; exchange k's send leaves as soon as
// exchange k-1 is folded, so only the data a rank really needs makes it wait.
// Whole blocks, no segments: the ring takes large messages.
//
// The working buffer holds the virtual blocks in bit-reversed order (block w
// at position bitrev(w)), the same on every rank: then the blocks of each
// exchange, kept or sent, are one contiguous range, sent from where they lie
// and folded by one combine. The flow borrows the p blocks plus what its
// exchanges receive (less than the p blocks again).
#ifndef ADAPT2_ENGINE_HALVING_FLOW_H
#define ADAPT2_ENGINE_HALVING_FLOW_H

#include <vector>

#include "buffer_pool.h"
#include "flow.h"
#include "user_data.h"

namespace adapt2 {

struct HalvingArgs {
    int rank = 0;
    int size = 1;
    int tag = 0;             // tags_needed() tags
    size_t block_bytes = 0;  // each of the p blocks (a multiple of op.unit_bytes)
    adapt2_reduction_t op{};
    UserRange input;   // the user's p blocks into the working buffer (to = 0)
    UserRange output;  // the result's block: `from` is its offset in the user's stream
};

class HalvingFlow final : public Flow {
public:
    // Between two ranks at most one message each way: one tag.
    static int tags_needed() { return 1; }

    HalvingFlow(Schedule &schedule, int id, const HalvingArgs &args, BufferPool &pool);

    int max_ops() const override { return 2 * (static_cast<int>(steps_.size()) + 1); }
    void start() override;
    void on_complete(Op &op) override;
    bool has_pending_work() const override { return !done_; }
    void finish() override;

private:
    struct Range {
        size_t offset, bytes;
    };
    struct Step {          // one exchange
        int peer;          // its real rank
        bool lower;        // its ranks come before ours: fold its data on the left
        Range keep, give;  // in work_: the virtual blocks folded here, and sent
        size_t recv_at;    // in scratch_: the partner's data for `keep`
    };
    enum Role { kPlain, kGiver, kTaker };

    Range vblock(int w) const;  // in the user's (natural) order
    void plan();
    void lay_out(int pof2);
    Range span(int pof2, int low_bits, int value) const;
    Step exchange(int vrank, int mask, size_t *scratch_end);
    void fill();
    void begin(int k);
    void try_fold();
    void fold_pair();
    void fold(int k);
    void combine_on_left(const char *left, char *acc, size_t bytes, int k);
    int vrank_ = 0;
    void finish_steps();
    void deliver(const char *block);
    int pair_message() const { return static_cast<int>(steps_.size()); }  // Op::segment of the pair's

    int rank_, size_, tag_;
    int rem_ = 0;  // ranks that pair up: 2 * rem_
    Role role_ = kPlain;
    size_t block_, bytes_;
    adapt2_reduction_t op_;
    UserRange input_, output_;
    BufferPool &pool_;
    char *work_ = nullptr;     // p blocks
    char *scratch_ = nullptr;  // receives; the pair's message first (a taker: the giver's
                               // input; a giver: its block back)
    size_t scratch_bytes_ = 0;
    std::vector<size_t> at_;              // in work_: virtual block w's offset (bit-reversed order)
    const char *layout_error_ = nullptr;  // an exchange's blocks are not contiguous (a bug)
    std::vector<Step> steps_;
    std::vector<uint8_t> arrived_;
    bool pair_folded_ = false;  // taker: the giver's input is folded in (or no pair)
    int begun_ = 0;             // exchanges whose send is posted
    int folded_ = 0;            // exchanges folded
    bool done_ = false;         // the result's block is delivered
};

}  // namespace adapt2

#endif
