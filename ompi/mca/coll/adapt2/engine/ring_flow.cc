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
      result_(a.result),
      op_(a.op),
      recv_window_(std::clamp(a.recv_window, 1, CompletionWindow::kMax)),
      send_window_(tags_needed(a.send_window)),
      pool_(pool) {
    const size_t elems = a.bytes / op_.unit_bytes;
    block_elems_ = elems / size_;
    extra_elems_ = elems % size_;
    const size_t max_block_bytes = (block_elems_ + (extra_elems_ ? 1 : 0)) * op_.unit_bytes;
    size_t seg_units = a.segment_bytes / op_.unit_bytes;
    if (a.segment_bytes == 0 || seg_units == 0 || seg_units * op_.unit_bytes >= max_block_bytes) {
        seg_units = max_block_bytes / op_.unit_bytes;  // one segment per block
    }
    segment_bytes_ = std::max<size_t>(seg_units, 1) * op_.unit_bytes;
    k_ = max_block_bytes == 0 ? 1 : static_cast<int>((max_block_bytes + segment_bytes_ - 1) / segment_bytes_);
    messages_ = 2 * (size_ - 1) * k_;
    if (a.own && a.own != result_) std::memcpy(result_, a.own, a.bytes);
    if (messages_ > 0) {
        int slots = std::min(recv_window_, (size_ - 1) * k_);
        staging_.assign(pool_.borrow(segment_bytes_, slots, 1));
    }
}

// Message m's part of the result: its block (depends on the direction and
// the phase, see the header) and its segment within the block.
RingFlow::Piece RingFlow::piece(int m, bool to_right) const {
    const int step = m / k_, seg = m % k_;
    int block;
    if (reduce_scatter(m)) {
        block = rank_ - step - (to_right ? 0 : 1);
    } else {
        const int t = step - (size_ - 1);
        block = rank_ + (to_right ? 1 : 0) - t;
    }
    block = ((block % size_) + size_) % size_;
    const size_t b = static_cast<size_t>(block);
    const size_t first = b * block_elems_ + std::min(b, extra_elems_);
    const size_t count = block_elems_ + (b < extra_elems_ ? 1 : 0);
    const size_t block_bytes = count * op_.unit_bytes;
    const size_t lo = std::min(static_cast<size_t>(seg) * segment_bytes_, block_bytes);
    const size_t hi = std::min(lo + segment_bytes_, block_bytes);
    return {first * op_.unit_bytes + lo, hi - lo};
}

void RingFlow::start() {
    post_receives();
    post_sends();
}

bool RingFlow::has_pending_work() const {
    return landed_.prefix() < messages_ || sent_.prefix() < messages_;
}

void RingFlow::post_receives() {
    while (!schedule_.failed() && next_recv_ < messages_ && next_recv_ < landed_.prefix() + recv_window_) {
        const int m = next_recv_;
        const Piece p = piece(m, false);
        char *dst = result_ + p.offset;  // the allgather lands in place
        if (reduce_scatter(m)) {
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
        schedule_.post_send(result_ + p.offset, right_, segment_tag(tag_, send_window_, m),
                            schedule_.take_op(id_, Op::kSend, m, 0, p.bytes));
    }
}

void RingFlow::on_received(int m) {
    if (reduce_scatter(m)) {
        const Piece p = piece(m, false);
        if (p.bytes > 0) {
            int rc = op_.combine(op_.ctx, staging_.slot(m), result_ + p.offset, p.bytes / op_.unit_bytes);
            if (rc != 0) schedule_.fail_combine(rc, m, p.bytes / op_.unit_bytes);
            schedule_.trace_combined(id_, m, p.bytes);
        }
        staging_.release(m);
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
    if (!schedule_.failed()) {
        count(Counter::segments_sent, static_cast<uint64_t>(messages_));
        count(Counter::bytes_sent, 2 * (static_cast<uint64_t>(size_) - 1) * block_elems_ * op_.unit_bytes);
    }
}

}  // namespace adapt2
