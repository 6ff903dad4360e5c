// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// ReduceFlow's GPU combine (reduce_flow.h): device buffers per slot, own
// data and children's contributions combined into the accumulator by the
// kernels, on the segment's stream.
#include "reduce_flow.h"
#include "schedule.h"

namespace adapt2 {

// GPU combine: an accumulator and a scratch buffer per slot, in device memory.
void ReduceFlow::plan_device_buffers() {
    if (!gpu_ || slots_.empty()) return;
    const int want = 2 * static_cast<int>(slots_.size());
    device_bufs_ = device_pool_->borrow(segments_.max_bytes(), want, want, memory());
    for (size_t i = 0; i < slots_.size(); ++i) {
        slots_[i].acc_dev = device_bufs_[2 * i];
        slots_[i].scratch_dev = device_bufs_[2 * i + 1];
    }
}

// GPU combine: own data into the accumulator; children are combined as they
// arrive (the stream runs this copy first).
void ReduceFlow::start_gpu_segment(Slot &slot) {
    const int s = slot.segment;
    schedule_.post_copy(slot.acc_dev, own_.at(segments_.offset(s)),
                        schedule_.take_copy(id_, s, kOwnIn, segments_.bytes(s)));
    for (int c = 0; c < children() && !schedule_.failed(); ++c) {
        schedule_.post_recv(slot.bufs[c], children_[c], segment_tag(tag_, tags_, s),
                            schedule_.take_op(id_, Op::kRecv, s, c, segments_.bytes(s)));
    }
}

void ReduceFlow::gpu_combine_child(Slot &slot, int child) {
    const int s = slot.segment;
    const size_t len = segments_.bytes(s);
    if (schedule_.failed()) return;
    schedule_.post_copy(slot.scratch_dev, slot.bufs[child], schedule_.take_copy(id_, s, kChildIn, len));
    schedule_.post_device_reduce(static_cast<DeviceOp>(op_.device_op - 1), static_cast<DeviceType>(op_.device_type - 1),
                                 slot.scratch_dev, slot.acc_dev, units(s), schedule_.take_copy(id_, s, kCombined, len));
    schedule_.trace_combined(id_, s, len);
}

// One operand is in the accumulator; after the last, the result leaves the
// device: to the user's result (root) or to the host, to be sent up.
void ReduceFlow::gpu_operand_done(Slot &slot) {
    if (++slot.folds < children() + 1 || schedule_.failed()) return;
    const int s = slot.segment;
    const size_t len = segments_.bytes(s);
    if (is_root()) {
        schedule_.post_copy(result_.at(segments_.offset(s)), slot.acc_dev,
                            schedule_.take_copy(id_, s, kResultOut, len));
    } else {
        slot.folds = 0;  // not sendable until the copy is done (kAccOut)
        schedule_.post_copy(slot.bufs[own_index()], slot.acc_dev, schedule_.take_copy(id_, s, kAccOut, len));
    }
}

}  // namespace adapt2
