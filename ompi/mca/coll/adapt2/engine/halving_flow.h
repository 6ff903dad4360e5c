// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Reduce_scatter_block by recursive halving, for small messages and for
// non-commutative ops: ceil(log2 p) exchanges instead of the ring's p - 1.
// With `allreduce`, Rabenseifner's allreduce: the same halving, then the
// blocks gathered back by recursive doubling (the exchanges in reverse).
//
// Data is folded in rank order, so non-commutative ops work and the result
// does not depend on arrival order. With p not a power of two, the first
// 2*rem ranks (rem = p - 2^floor(log2 p)) pair up: each even one (a giver)
// hands its whole input to the odd one after it (a taker), which folds it on
// the left, and gets its own block back at the end. The taker and the other
// ranks are the virtual ranks 0..p'-1 in rank order (p' = p - rem); virtual
// block w is the blocks of virtual rank w's real ranks (two for a taker). A
// commutative allreduce's pair splits that work instead (as MPICH's does):
// each folds half of the two inputs, the giver sends its folded half on, and
// the taker goes on with the whole (a whole message less on the critical path).
//
// Exchange k (distance m = 2^k) pairs virtual ranks v and v ^ m: v sends the
// virtual blocks w = v ^ m (mod 2m), which its partner keeps, and folds what
// arrives into those with w = v (mod 2m). After it, a kept block holds the
// reduction over v's aligned group of 2m virtual ranks, which are
// consecutive ranks: folding the lower group's data on the left keeps rank
// order. Every receive is posted at once; exchange k's send leaves as soon as
// exchange k-1 is folded, so only the data a rank really needs makes it wait.
// Whole blocks, no segments: the ring takes large messages. The p blocks
// are whole units, the first ones a unit longer where p does not divide the
// message (an allreduce's; a reduce-scatter's blocks are equal).
//
// The doubling (allreduce) runs exchange k again, last first: a rank sends
// the blocks it kept there, now final, and receives the ones it gave, straight
// into the working buffer where they were (so that receive is posted once
// exchange k's halving send has completed: it read them). It holds every
// block after exchange 0; a taker sends them all to its giver.
//
// A reduce-scatter's working buffer holds the virtual blocks in bit-reversed
// order (block w at position bitrev(w)), the same on every rank: then the
// blocks of each exchange, kept or sent, are one contiguous range, sent from
// where they lie and folded by one combine, and v ends with block v. The flow
// borrows the p blocks plus what its exchanges receive (less than the p
// blocks again).
//
// An allreduce does not care which rank ends with which block, so it keeps
// the user's order: the blocks a rank still reduces are one range, and
// exchange k halves it, bit k of v picking the half (v ends with block
// bitrev(v)); the groups folded are the same consecutive ranks. It works in
// the user's result buffer where that is contiguous host memory, borrows
// only its receives (the bit-reversed buffer's extra fill and delivery had
// made it 1.2-1.35x slower than tuned's Rabenseifner at 1-4 MiB, np 8), and
// keeps no per-block table (p entries per rank had made the simulator's
// memory grow as p^2). Nearest partners first also keeps the large early
// halves inside nodes where ranks are placed in blocks: at 8 ranks, 2 per
// node, a rank sends 3/8 of the message across, not 7/8.
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
    int tag = 0;             // tags_needed() tags, counting down
    size_t bytes = 0;        // the p blocks together (a multiple of op.unit_bytes)
    bool allreduce = false;  // gather every block back (Rabenseifner's allreduce)
    adapt2_reduction_t op{};
    UserRange input;   // the user's p blocks into the working buffer (to = 0)
    UserRange output;  // the result's block (`from`: its offset in the user's stream); allreduce: all of it
};

class HalvingFlow final : public Flow {
public:
    // Between two ranks at most one message each way per phase: one tag, and
    // for an allreduce one more for the doubling and one for the pair's second
    // messages (pml ucx lets a later send overtake a pending one of the same tag).
    static int tags_needed(bool allreduce = false) { return allreduce ? 3 : 1; }

    HalvingFlow(Schedule &schedule, int id, const HalvingArgs &args, BufferPool &pool);

    // each exchange and the pair: a receive and a send, and an allreduce's doubling as many again
    int max_ops() const override { return (allreduce_ ? 4 : 2) * (static_cast<int>(steps_.size()) + 1); }
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

    size_t block_at(int i) const;  // real block i's offset in the user's order (i = p: the end)
    size_t block_bytes(int i) const { return block_at(i + 1) - block_at(i); }
    Range vblock(int w) const;  // in the user's (natural) order
    void plan();
    void lay_out(int pof2);
    Range span(int pof2, int low_bits, int value) const;
    Step exchange(int vrank, int mask, size_t *scratch_end);
    size_t vblock_at(int w) const;
    Step halve(int vrank, int mask, int *lo, int *hi, size_t *scratch_end);
    void fill();
    void begin(int k);
    void try_fold();
    void start_pair();
    void on_pair_message(bool received, int k);
    void fold(int k);
    void combine_on_left(const char *left, char *acc, size_t bytes, int k);
    int vrank_ = 0;
    void finish_steps();
    void deliver(const char *block);
    void post_gather_recv(int k);
    void gather();
    void deliver_all(const char *blocks);
    int steps() const { return static_cast<int>(steps_.size()); }
    int pair_message() const { return steps(); }                 // Op::segment of the pair's
    int gather_message(int k) const { return steps() + 1 + k; }  // ... of exchange k's doubling
    int pair_result_message() const { return 2 * steps() + 1; }  // ... of the pair's second messages

    int rank_, size_, tag_;
    int rem_ = 0;  // ranks that pair up: 2 * rem_
    Role role_ = kPlain;
    size_t bytes_;
    size_t unit_, units_per_block_, longer_blocks_;  // the first longer_blocks_ blocks: one unit more
    bool allreduce_;
    bool split_pair_;       // a commutative allreduce: giver and taker each fold half of the pair's input
    size_t half_;           // ... the lower half's bytes (whole units)
    bool in_user_ = false;  // allreduce: work_ is the user's result buffer
    adapt2_reduction_t op_;
    UserRange input_, output_;
    BufferPool &pool_;
    char *work_ = nullptr;     // p blocks
    char *scratch_ = nullptr;  // receives; the pair's message first (a taker: the giver's
                               // input; a giver: its block back)
    size_t scratch_bytes_ = 0;
    std::vector<size_t> at_;              // reduce-scatter: in work_, virtual block w's offset (bit-reversed order)
    const char *layout_error_ = nullptr;  // an exchange's blocks are not contiguous (a bug)
    std::vector<Step> steps_;
    std::vector<uint8_t> arrived_;  // exchange k's halving data; allreduce: then its doubling data
    bool pair_folded_ = false;      // taker: the giver's input is folded in (or no pair)
    int pair_halves_ = 0;           // taker: 1 its upper half folded, 2 the giver's lower half here
    int begun_ = 0;                 // exchanges whose send is posted
    int folded_ = 0;                // exchanges folded
    bool halved_ = false;           // every exchange is folded
    int gathering_ = -1;            // allreduce: the doubling exchange under way (then lower ones)
    bool gather_sent_ = false;      // ... its send is posted
    bool done_ = false;             // the result's block is delivered
};

}  // namespace adapt2

#endif
