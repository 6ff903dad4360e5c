// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
#include "bruck_flow.h"

#include <algorithm>
#include <cstring>

#include "allgather_plan.h"
#include "counters.h"
#include "schedule.h"

namespace adapt2 {

int BruckFlow::exchanges(int size) {
    int k = 0;
    while ((1 << k) < size) ++k;
    return k;
}

BruckFlow::BruckFlow(Schedule &schedule, int id, const BruckArgs &a, BufferPool &pool)
    : Flow(schedule, id),
      rank_(a.rank),
      size_(a.size),
      tag_(a.tag),
      block_(a.block_bytes),
      own_(a.own),
      result_(a.result),
      pool_(pool),
      linear_(a.linear),
      rotated_(!a.linear && allgather_rotates(a.size)),
      in_result_(!rotated_ && a.result.contig != nullptr && !a.result.on_device),
      in_place_(a.in_place),
      steps_(memory()) {
    auto push = [this](adapt2_direct_step_t x) { steps_.push_back(x); };
    if (linear_) {
        plan_allgather_linear(rank_, size_, push);
    } else {
        plan_allgather(rank_, size_, push);
    }
    exchanges_ = static_cast<int>(steps_.size());  // Bruck's: exchanges(size), the tags reserved
    const size_t bytes = block_ * static_cast<size_t>(size_);
    if (in_result_) {
        work_ = result_.contig;
    } else if (bytes > 0) {
        work_ = pool_.borrow_one(bytes);
    }
}

bool BruckFlow::has_pending_work() const { return landed_.prefix() < exchanges_ || sends_done_ < exchanges_; }

// Work blocks [first, first + blocks) are final: to the user's buffer, where
// work block i is rank (r + i) mod p's block (one or two runs), or rank i's.
void BruckFlow::deliver(int first, int blocks) {
    if (in_result_) return;  // they landed there
    while (blocks > 0 && !schedule_.failed()) {
        const int user_block = rotated_ ? (rank_ + first) % size_ : first;
        const int run = std::min(blocks, size_ - user_block);
        const size_t bytes = static_cast<size_t>(run) * block_, at = static_cast<size_t>(user_block) * block_;
        const char *src = work_ + static_cast<size_t>(first) * block_;
        int rc = UserData(result_).write(at, bytes, src);
        if (rc != 0) schedule_.fail_conversion(rc, "unpacking the allgather's result", at, bytes);
        first += run, blocks -= run;
    }
}

void BruckFlow::start() {
    // This rank's block: work block 0 (rotated) or its rank's (in place in
    // the result buffer: there already).
    const int own_slot = rotated_ ? 0 : rank_;
    if (!(in_result_ && in_place_) && work_) {
        int rc = copy_into_work({own_.user, own_.from, 0, block_}, slot(own_slot));
        if (rc != 0) schedule_.fail_conversion(rc, "packing this rank's block", own_.from, block_);
    }
    deliver(own_slot, 1);
    for (int k = 0; k < exchanges_ && !schedule_.failed(); ++k) {
        const adapt2_direct_step_t &x = steps_[k];
        schedule_.post_recv(work_ ? slot(x.recv_block) : nullptr, x.from, tag_of(k),
                            schedule_.take_op(id_, Op::kRecv, k, 0, bytes_of(k)));
    }
    post_sends();
}

// Exchange k's blocks are all here once exchanges 0..k-1 have landed (the
// linear exchange's, the own block, at once).
void BruckFlow::post_sends() {
    while (!schedule_.failed() && next_send_ < exchanges_ && (linear_ || next_send_ <= landed_.prefix())) {
        const int k = next_send_++;
        const adapt2_direct_step_t &x = steps_[k];
        schedule_.post_send(work_ ? slot(x.send_block) : nullptr, x.peer, tag_of(k),
                            schedule_.take_op(id_, Op::kSend, k, 0, bytes_of(k)));
    }
}

void BruckFlow::on_complete(Op &op) {
    const Op::Kind kind = op.kind;
    const int k = op.segment;
    schedule_.return_op(&op);
    if (kind == Op::kRecv) {
        deliver(steps_[k].recv_block, steps_[k].blocks);
        landed_.mark_done(k);
    } else {
        ++sends_done_;
    }
    post_sends();
}

void BruckFlow::finish() {
    if (work_ && !in_result_) pool_.give_back_one(block_ * static_cast<size_t>(size_), work_);
    work_ = nullptr;
    if (!schedule_.failed()) {
        count(Counter::segments_sent, static_cast<uint64_t>(exchanges_));
        count(Counter::bytes_sent, static_cast<uint64_t>(size_ - 1) * block_);
    }
}

}  // namespace adapt2
