// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Allreduce by recursive doubling, for small messages: log2(p) exchanges of
// the whole accumulator instead of a reduce and a broadcast through a root.
//
// The exchanges are recdoubling_plan.h's: the two partners of each fold the
// lower ranks' data on the left, so both compute the same bits, whatever
// the arrival order. Step k+1 starts once step k's
// receive has arrived and its send has completed (the accumulator is the
// send buffer). Non-contiguous buffers are staged: the contribution is packed
// into a pool buffer at the start, and the result unpacked at the end.
#ifndef ADAPT2_ENGINE_RECDOUBLING_FLOW_H
#define ADAPT2_ENGINE_RECDOUBLING_FLOW_H

#include <vector>

#include "buffer_pool.h"
#include "flow.h"
#include "recdoubling_plan.h"
#include "user_data.h"

namespace adapt2 {

struct RecDoublingArgs {
    int rank = 0;
    int size = 1;
    int tag = 0;                // first of tags_needed() tags, counting down
    const char *own = nullptr;  // contiguous contribution (nullptr: in place in result)
    char *result = nullptr;     // contiguous, every rank; nullptr: staged (below)
    size_t bytes = 0;
    adapt2_reduction_t op{};
    // Staged (result is nullptr): the contribution packed from `stage_in`,
    // the result unpacked into `stage_out` once the last exchange is over.
    UserRange stage_in, stage_out;
};

class RecDoublingFlow final : public Flow {
public:
    static int tags_needed() { return 1; }  // one exchange per pair at a time, in order

    RecDoublingFlow(Schedule &schedule, int id, const RecDoublingArgs &args, BufferPool &pool);

    int max_ops() const override { return 2; }
    void start() override;
    void on_complete(Op &op) override;
    bool has_pending_work() const override { return current_ < exchanges_.size(); }
    void finish() override;

private:
    void plan();
    void begin(size_t index);
    void fold_with(int partner);
    void unstage();

    int rank_, size_, tag_;
    char *result_;
    size_t bytes_;
    bool staged_;
    UserRange stage_out_;
    adapt2_reduction_t op_;
    BufferPool &pool_;
    BufferPool::Buffers tmp_;                           // the partner's data
    std::pmr::vector<adapt2_direct_step_t> exchanges_;  // in order; the next starts when one has finished
    size_t current_ = 0;
    int waiting_ = 0;  // operations of the current exchange in flight
};

}  // namespace adapt2

#endif
