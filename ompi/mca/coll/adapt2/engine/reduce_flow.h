// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Segmented, event-driven reduction up a tree.
//
// A rank combines segment s the moment its own data and its children's
// contributions for s are there, and sends the result to its parent at once;
// the root's result lands in the user's buffer. Each segment in progress owns
// a slot: one receive buffer per child and one for its own packed data or the
// accumulator. Slots are reused in segment order and their number is bounded
// by the staging pool's cap (at least one slot, so a call always completes).
//
// Combine order: with a commutative op, whatever arrives is folded in at once
// (the first child's buffer becomes the accumulator, no copy). With a
// non-commutative op, or when reproducibility is asked for, operands are
// folded in a fixed order: by rank, right to left (acc = x_k op acc), which
// over an in-order tree gives the left-to-right serial result.
//
// Detached (non-root, a private copy was given, see detach.h): the rank's own
// data is copied in at the start, the call completes, and the copy serves as
// the rank's operand (and accumulator) for the rest; sends up are all posted
// as soon as their segments are reduced.
//
// Device data (on a GPU): a segment's own data is copied from the device into
// the slot's own buffer and is an operand like a child's once the copy is
// done; the root copies each reduced segment to the device and frees its slot
// when that copy is done. Combining runs on the host, on the staged data...
//
// ... or on the GPU (gpu_combine: an interior rank or root whose data is on
// the device, a commutative op with a kernel): each segment gets an
// accumulator and a scratch buffer in device memory. Its own data is copied
// into the accumulator, each child's contribution to the scratch buffer the
// moment it arrives and combined into the accumulator by a kernel, all on
// the segment's stream, whose order makes one scratch buffer enough. When
// every combine is done, the accumulator goes to the host to be sent up, or
// (root) into the result.
//
// Awaiting (a blocking call's non-root with a copy at hand): a leaf sends
// from the user's buffer if its parent says hello within the grace period,
// else from a copy; an interior rank reads its own data from the user's
// buffer and copies what it has not combined yet when the period ends (it
// detaches for free once its own data is all combined: what is left to send
// sits in its slots).
#ifndef ADAPT2_ENGINE_REDUCE_FLOW_H
#define ADAPT2_ENGINE_REDUCE_FLOW_H

#include <memory>
#include <vector>

#include "tree_flow.h"
#include "user_data.h"

namespace adapt2 {

class BcastFlow;

// Beyond TreeArgs (recv_window: segments in progress, i.e. slots; copy: a
// detached non-root's own data; hello: parents say hello to children;
// await: a non-root copies only if late past the grace):
struct ReduceArgs : TreeArgs {
    adapt2_buffer_t own{};     // this rank's contribution
    adapt2_buffer_t result{};  // root: where the result goes
    bool in_place = false;     // root: own data is in `result`
    adapt2_reduction_t op{};
    bool fixed_order = false;  // non-commutative op or reproducible mode
    bool gpu_combine = false;  // combine on the GPU (see above); device_pool gives its buffers
    BufferPool *device_pool = nullptr;
};

class ReduceFlow final : public TreeFlow {
public:
    ReduceFlow(Schedule &schedule, int id, const ReduceArgs &args, std::shared_ptr<const Tree> tree, BufferPool &pool);

    // Root: hand each finished segment to a broadcast (allreduce).
    void feed(BcastFlow *bcast) { feed_ = bcast; }

    int max_ops() const override;
    void start() override;
    void on_complete(Op &op) override;
    bool has_pending_work() const override { return released_.prefix() < segments_.count(); }
    bool locally_done() const override;
    void finish() override;
    void expire() override;

private:
    struct Slot {
        explicit Slot(std::pmr::memory_resource *memory) : ready(memory), folded(memory), bufs(memory) {}
        int segment = -1;
        char *acc = nullptr;               // the partial result so far; null before the first fold
        std::pmr::vector<uint8_t> ready;   // per operand: its data is here
        std::pmr::vector<uint8_t> folded;  // per operand: combined into acc
        int folds = 0;                     // children() + 1: the segment is fully combined
        int next_fixed = 0;                // fixed order: position in order_ of the next fold
        const char *own = nullptr;         // where this segment of own data is
        bool own_private = false;          // ... in adapt2's memory (a copy or packed)
        std::pmr::vector<char *> bufs;     // per child: receive buffer; [children]: own/acc buffer
        char *acc_dev = nullptr;           // GPU combine: the accumulator and the scratch buffer
        char *scratch_dev = nullptr;
    };

    // Op::step of a device operation: own data in, result out; GPU combine:
    // a child's data in, a combine done, the accumulator out.
    enum CopyStep { kOwnIn, kResultOut, kChildIn, kCombined, kAccOut };

    bool result_on_device() const { return is_root() && result_.on_device(); }
    void on_copied(int segment, int step);
    void plan_device_buffers();
    void start_gpu_segment(Slot &slot);
    void gpu_combine_child(Slot &slot, int child);
    void gpu_operand_done(Slot &slot);
    int own_index() const { return children(); }
    Slot &slot_of(int segment) { return slots_[segment % slots_.size()]; }
    size_t units(int segment) const { return segments_.bytes(segment) / op_.unit_bytes; }

    void plan_slots(int window);
    void copy_own_in();
    void start_segments();
    void post_hellos();
    void on_hello();
    void copy_rest_of_own();
    bool waiting_for_parent() const { return await_ && children() == 0 && !decided_; }
    // Whether own_ views the private copy: from the start, or (awaiting)
    // once the grace period ended with own data still needed.
    bool own_is_copy() const { return copy_ && (!await_ || copied_ == segments_.count()); }
    void start_segment(int segment);
    void bring_own(Slot &slot);
    void fold_ready(Slot &slot);
    void fold(Slot &slot, int operand);
    const char *operand_data(const Slot &slot, int operand) const;
    bool adoptable(const Slot &slot, int operand) const;
    bool copies_to_result() const;
    bool pairs_into_result() const;
    bool fold_first_pair(Slot &slot);
    void note_folded(Slot &slot, int operand);
    char *copy_target(Slot &slot);
    void segment_reduced(Slot &slot);
    void deliver(Slot &slot);
    void post_sends();
    void release(int segment);

    UserData user_own_;  // the caller's contribution
    UserData own_;       // where own data is read from: user_own_ or the private copy
    UserData result_;
    bool in_place_;
    adapt2_reduction_t op_;
    bool fixed_order_;
    BcastFlow *feed_ = nullptr;
    bool decided_ = false;         // awaiting leaf: user buffer or copy chosen
    int own_folded_ = 0;           // segments whose own data is combined
    std::pmr::vector<int> order_;  // operands sorted by rank (own = children())
    std::pmr::vector<Slot> slots_;
    BufferPool::Buffers borrowed_;  // every staging buffer, given back at the end
    int buffers_per_slot_ = 0;
    int next_start_ = 0;         // next segment to start
    int next_send_ = 0;          // non-root: next segment to send up
    CompletionWindow sent_;      // non-root: sends to the parent completed
    CompletionWindow released_;  // segments whose slot is free again
    bool gpu_;                   // combine on the GPU
    BufferPool *device_pool_;
    BufferPool::Buffers device_bufs_;  // GPU combine: every device buffer, given back at the end
};

}  // namespace adapt2

#endif
