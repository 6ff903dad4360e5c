// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
#include "recdoubling_flow.h"

#include <cstring>

#include "schedule.h"

namespace adapt2 {

RecDoublingFlow::RecDoublingFlow(Schedule &schedule, int id, const RecDoublingArgs &a, BufferPool &pool)
    : Flow(schedule, id),
      rank_(a.rank),
      size_(a.size),
      tag_(a.tag),
      result_(a.result),
      bytes_(a.bytes),
      staged_(a.result == nullptr && a.bytes > 0),
      stage_out_(a.stage_out),
      op_(a.op),
      pool_(pool),
      tmp_(memory()),
      exchanges_(memory()) {
    plan();
    // tmp_[0]: the partner's data; tmp_[1]: the accumulator when staged
    if (bytes_ > 0 && (staged_ || !exchanges_.empty()))
        tmp_ = pool_.borrow(bytes_, staged_ ? 2 : 1, staged_ ? 2 : 1, memory());
    if (staged_) {
        result_ = tmp_[1];
        int rc = copy_into_work(a.stage_in, result_);
        if (rc != 0) schedule_.fail_conversion(rc, "packing into recursive doubling's buffer", 0, bytes_);
    } else if (a.own && a.own != result_) {
        std::memcpy(result_, a.own, bytes_);
    }
}

void RecDoublingFlow::plan() {
    if (bytes_ == 0) return;
    plan_recdoubling(rank_, size_, [this](adapt2_direct_step_t x) { exchanges_.push_back(x); });
}

void RecDoublingFlow::start() { begin(0); }

// The result, final: out of the staging buffer into the user's.
void RecDoublingFlow::unstage() {
    if (!staged_ || schedule_.failed()) return;
    int rc = copy_to_user(stage_out_, 0, result_, bytes_);
    if (rc != 0) schedule_.fail_conversion(rc, "unpacking recursive doubling's result", 0, bytes_);
}

// One tag: between two ranks the messages of each direction follow one
// another, never two in flight at once.
void RecDoublingFlow::begin(size_t index) {
    current_ = index;
    if (current_ >= exchanges_.size()) unstage();
    if (current_ >= exchanges_.size() || schedule_.failed()) return;
    const adapt2_direct_step_t &x = exchanges_[current_];
    waiting_ = (x.send ? 1 : 0) + (x.recv ? 1 : 0);
    const int m = static_cast<int>(current_);
    if (x.recv) {
        schedule_.post_recv(x.into_result ? result_ : tmp_[0], x.peer, tag_,
                            schedule_.take_op(id_, Op::kRecv, m, 0, bytes_));
    }
    if (x.send) schedule_.post_send(result_, x.peer, tag_, schedule_.take_op(id_, Op::kSend, m, 0, bytes_));
}

void RecDoublingFlow::on_complete(Op &op) {
    schedule_.return_op(&op);
    if (--waiting_ > 0) return;
    const adapt2_direct_step_t &x = exchanges_[current_];
    if (x.fold) fold_with(x.peer);
    begin(current_ + 1);
}

// acc = lower-ranked data op higher-ranked data, on both partners alike.
void RecDoublingFlow::fold_with(int partner) {
    const size_t units = bytes_ / op_.unit_bytes;
    int rc;
    if (partner < rank_) {
        rc = op_.combine(op_.ctx, tmp_[0], result_, units);  // result = partner op result
    } else {
        rc = op_.combine(op_.ctx, result_, tmp_[0], units);  // tmp = result op partner
        std::memcpy(result_, tmp_[0], bytes_);
    }
    if (rc != 0) schedule_.fail_combine(rc, static_cast<int>(current_), units);
    schedule_.trace_combined(id_, static_cast<int>(current_), bytes_);
}

void RecDoublingFlow::finish() {
    if (!tmp_.empty()) pool_.give_back(bytes_, tmp_);
    tmp_.clear();
}

}  // namespace adapt2
