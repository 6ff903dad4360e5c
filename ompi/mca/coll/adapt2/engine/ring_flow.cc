// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
#include "ring_flow.h"

#include <algorithm>
#include <cstring>

#include "bcast_flow.h"
#include "counters.h"
#include "schedule.h"

namespace adapt2 {

int RingFlow::tags_needed(int send_window) { return BcastFlow::tags_needed(send_window); }

RingFlow::RingFlow(Schedule &schedule, int id, const RingArgs &a, BufferPool &pool)
    : Flow(schedule, id),
      rank_(a.rank),
      size_(a.size),
      left_((a.rank + a.size - 1) % a.size),
      right_((a.rank + 1) % a.size),
      tag_(a.tag),
      work_(a.work),
      work_bytes_(a.bytes),
      op_(a.op),
      unit_(std::max<size_t>(a.unit, 1)),
      recv_window_(std::clamp(a.recv_window, 1, CompletionWindow::kMax)),
      send_window_(tags_needed(a.send_window)),
      rs_steps_(a.reduce_scatter ? a.size - 1 : 0),
      ag_steps_(a.allgather ? a.size - 1 : 0),
      owner_shift_(a.reduce_scatter && a.allgather ? 1 : 0),
      fill_(a.fill),
      deliver_(a.deliver),
      work_borrowed_(a.work_borrowed),
      fill_from_(a.fill_from),
      deliver_to_(a.deliver_to),
      pool_(pool) {
    const size_t units = a.block_bytes ? a.block_bytes / unit_ : a.bytes / unit_ / size_;
    block_units_ = units;
    extra_units_ = a.block_bytes ? 0 : a.bytes / unit_ % size_;
    const size_t max_block_bytes = (block_units_ + (extra_units_ ? 1 : 0)) * unit_;
    size_t seg_units = a.segment_bytes / unit_;
    if (a.segment_bytes == 0 || seg_units == 0 || seg_units * unit_ >= max_block_bytes) {
        seg_units = max_block_bytes / unit_;  // one segment per block
    }
    segment_bytes_ = std::max<size_t>(seg_units, 1) * unit_;
    k_ = max_block_bytes == 0 ? 1 : static_cast<int>((max_block_bytes + segment_bytes_ - 1) / segment_bytes_);
    messages_ = (rs_steps_ + ag_steps_) * k_;
    if (rs_steps_ > 0) {
        int slots = std::min(recv_window_, rs_steps_ * k_);
        staging_.assign(pool_.borrow(segment_bytes_, slots, 1));
    }
}

RingFlow::Piece RingFlow::block(int b) const {
    const size_t i = static_cast<size_t>(((b % size_) + size_) % size_);
    const size_t first = i * block_units_ + std::min(i, extra_units_);
    const size_t count = block_units_ + (i < extra_units_ ? 1 : 0);
    return {first * unit_, count * unit_};
}

// Message m's part of the working buffer: its block (depends on the
// direction and the phase, see the header) and its segment within the block.
RingFlow::Piece RingFlow::piece(int m, bool to_right) const {
    const int step = m / k_, seg = m % k_;
    const int behind = to_right ? 0 : 1;  // what arrives from the left is one block behind
    const int b = in_reduce_scatter(m) ? rank_ - step - 1 + owner_shift_ - behind
                                       : rank_ + owner_shift_ - (step - rs_steps_) - behind;
    const Piece whole = block(b);
    const size_t lo = std::min(static_cast<size_t>(seg) * segment_bytes_, whole.bytes);
    const size_t hi = std::min(lo + segment_bytes_, whole.bytes);
    return {whole.offset + lo, hi - lo};
}

bool RingFlow::final_combine(int m) const { return m / k_ == rs_steps_ - 1; }

void RingFlow::fill() {
    const UserRange &c = fill_from_;
    int rc = copy_into_work(c, work_);
    if (rc != 0) schedule_.fail_conversion(rc, "packing into the ring's working buffer", c.from, c.bytes);
}

// Bytes of the working buffer that are final go to the user's buffer.
void RingFlow::deliver(const Piece &p) {
    const UserRange &c = deliver_to_;
    if (p.bytes == 0) return;
    if (p.offset < c.to || p.offset + p.bytes > c.to + c.bytes) {
        schedule_.fail_call(ADAPT2_STATUS_INTERNAL_ERROR,
                            "ring: final bytes [%zu, %zu) lie outside the result [%zu, %zu)", p.offset,
                            p.offset + p.bytes, c.to, c.to + c.bytes);
        return;
    }
    const size_t user_offset = c.from + (p.offset - c.to);
    int rc = copy_to_user(c, user_offset, work_ + p.offset, p.bytes);
    if (rc != 0) schedule_.fail_conversion(rc, "unpacking the ring's result", user_offset, p.bytes);
}

void RingFlow::start() {
    if (fill_) fill();
    // Data that is final before any message moves: an allgather's own block,
    // a reduce-scatter's on a single rank.
    if (deliver_ && (rs_steps_ == 0 || messages_ == 0)) deliver(block(rank_ + owner_shift_));
    post_receives();
    post_sends();
}

bool RingFlow::has_pending_work() const { return landed_.prefix() < messages_ || sent_.prefix() < messages_; }

void RingFlow::post_receives() {
    while (!schedule_.failed() && next_recv_ < messages_ && next_recv_ < landed_.prefix() + recv_window_) {
        const int m = next_recv_;
        const Piece p = piece(m, false);
        char *dst = work_ + p.offset;  // the allgather lands in place
        if (in_reduce_scatter(m)) {
            if (!staging_.can_claim()) break;
            dst = staging_.claim(1);
        }
        ++next_recv_;
        schedule_.post_recv(dst, left_, segment_tag(tag_, send_window_, m),
                            schedule_.take_op(id_, Op::kRecv, m, 0, p.bytes));
    }
}

// In order, within the send window, once the same segment of the block one
// step earlier has landed.
void RingFlow::post_sends() {
    while (!schedule_.failed() && next_send_ < messages_ && next_send_ < sent_.prefix() + send_window_ &&
           next_send_ < landed_.prefix() + k_) {
        const int m = next_send_++;
        const Piece p = piece(m, true);
        bytes_sent_ += p.bytes;
        schedule_.post_send(work_ + p.offset, right_, segment_tag(tag_, send_window_, m),
                            schedule_.take_op(id_, Op::kSend, m, 0, p.bytes));
    }
}

void RingFlow::on_received(int m) {
    const Piece p = piece(m, false);
    if (in_reduce_scatter(m)) {
        if (p.bytes > 0) {
            int rc = op_.combine(op_.ctx, staging_.slot(m), work_ + p.offset, p.bytes / op_.unit_bytes);
            if (rc != 0) schedule_.fail_combine(rc, m, p.bytes / op_.unit_bytes);
            schedule_.trace_combined(id_, m, p.bytes);
        }
        staging_.release(m);
        if (deliver_ && final_combine(m)) deliver(p);
    } else if (deliver_) {
        deliver(p);
    }
    landed_.mark_done(m);
}

void RingFlow::on_complete(Op &op) {
    const Op::Kind kind = op.kind;
    const int m = op.segment;
    schedule_.return_op(&op);
    if (kind == Op::kRecv) {
        on_received(m);
    } else {
        sent_.mark_done(m);
    }
    post_receives();
    post_sends();
}

void RingFlow::finish() {
    if (staging_.size() > 0) pool_.give_back(segment_bytes_, staging_.buffers());
    if (work_borrowed_) pool_.give_back_one(work_bytes_, work_);
    if (!schedule_.failed()) {
        count(Counter::segments_sent, static_cast<uint64_t>(messages_));
        count(Counter::bytes_sent, bytes_sent_);
    }
}

}  // namespace adapt2
