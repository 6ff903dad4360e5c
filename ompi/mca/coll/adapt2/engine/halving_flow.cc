#include "halving_flow.h"

#include <cstring>

#include "schedule.h"

namespace adapt2 {

HalvingFlow::HalvingFlow(Schedule &schedule, int id, const HalvingArgs &a, BufferPool &pool)
    : Flow(schedule, id),
      rank_(a.rank),
      size_(a.size),
      tag_(a.tag),
      block_(a.block_bytes),
      bytes_(a.block_bytes * static_cast<size_t>(a.size)),
      op_(a.op),
      input_(a.input),
      output_(a.output),
      pool_(pool) {
    plan();
    arrived_.assign(steps_.size(), 0);
    if (bytes_ == 0) return;
    const std::vector<char *> bufs = pool_.borrow(bytes_ + scratch_bytes_, 1, 1);
    work_ = bufs.front();
    scratch_ = work_ + bytes_;
}

// Virtual block w: the blocks of virtual rank w's real ranks.
HalvingFlow::Range HalvingFlow::vblock(int w) const {
    if (w < rem_) return {2 * static_cast<size_t>(w) * block_, 2 * block_};
    return {static_cast<size_t>(w + rem_) * block_, block_};
}

void HalvingFlow::plan() {
    int pof2 = 1;
    while (pof2 * 2 <= size_) pof2 *= 2;
    rem_ = size_ - pof2;
    int vrank = rank_ - rem_;
    size_t end = 0;
    if (rank_ < 2 * rem_) {
        role_ = rank_ % 2 == 0 ? kGiver : kTaker;
        pair_at_ = 0;
        end = role_ == kGiver ? block_ : bytes_;
        if (role_ == kGiver) {
            scratch_bytes_ = end;
            return;
        }
        vrank = rank_ / 2;
    }
    pair_folded_ = role_ != kTaker;
    for (int mask = 1; mask < pof2; mask <<= 1) steps_.push_back(exchange(vrank, mask, &end));
    scratch_bytes_ = end;
}

// Exchange with virtual rank vrank ^ mask; its buffers go at *scratch_end.
HalvingFlow::Step HalvingFlow::exchange(int vrank, int mask, size_t *scratch_end) const {
    const int pof2 = size_ - rem_, partner = vrank ^ mask;
    Step s{};
    s.peer = partner < rem_ ? 2 * partner + 1 : partner + rem_;
    s.lower = partner < vrank;
    for (int w = 0; w < pof2; ++w) {
        if ((w & (mask - 1)) != (vrank & (mask - 1))) continue;  // folded away in an earlier exchange
        const bool mine = (w & mask) == (vrank & mask);
        (mine ? s.keep : s.give).push_back(w);
        (mine ? s.recv_bytes : s.send_bytes) += vblock(w).bytes;
    }
    s.recv_at = *scratch_end;
    s.send_at = s.recv_at + s.recv_bytes;
    *scratch_end = s.send_at + s.send_bytes;
    return s;
}

void HalvingFlow::start() {
    if (bytes_ == 0) {
        done_ = true;
        return;
    }
    int rc = copy_into_work(input_, work_);
    if (rc != 0) return schedule_.fail_conversion(rc, "packing the reduce-scatter's input", input_.from, bytes_);
    const int pair = pair_message();
    if (role_ == kGiver) {
        schedule_.post_recv(scratch_ + pair_at_, rank_ + 1, tag_, schedule_.take_op(id_, Op::kRecv, pair, 0, block_));
        schedule_.post_send(work_, rank_ + 1, tag_, schedule_.take_op(id_, Op::kSend, pair, 0, bytes_));
        return;
    }
    if (role_ == kTaker) {
        schedule_.post_recv(scratch_ + pair_at_, rank_ - 1, tag_, schedule_.take_op(id_, Op::kRecv, pair, 0, bytes_));
    }
    for (size_t k = 0; k < steps_.size(); ++k) {
        const Step &s = steps_[k];
        schedule_.post_recv(scratch_ + s.recv_at, s.peer, tag_,
                            schedule_.take_op(id_, Op::kRecv, static_cast<int>(k), 0, s.recv_bytes));
    }
    if (steps_.empty()) return finish_steps();  // a single rank
    if (pair_folded_) begin(0);
}

// Exchange k's send: the partner's virtual blocks, packed.
void HalvingFlow::begin(int k) {
    const Step &s = steps_[k];
    size_t at = s.send_at;
    for (int w : s.give) {
        const Range r = vblock(w);
        std::memcpy(scratch_ + at, work_ + r.offset, r.bytes);
        at += r.bytes;
    }
    begun_ = k + 1;
    schedule_.post_send(scratch_ + s.send_at, s.peer, tag_, schedule_.take_op(id_, Op::kSend, k, 0, s.send_bytes));
}

void HalvingFlow::on_complete(Op &op) {
    const bool received = op.kind == Op::kRecv;
    const int k = op.segment;
    schedule_.return_op(&op);
    if (!received || schedule_.failed()) return;
    if (k == pair_message()) {
        if (role_ == kGiver) return deliver(scratch_ + pair_at_);
        fold_pair();
        begin(0);
        return try_fold();
    }
    arrived_[k] = 1;
    try_fold();
}

// Folds every exchange whose data is here and whose predecessor is folded.
void HalvingFlow::try_fold() {
    while (folded_ < begun_ && arrived_[folded_]) {
        fold(folded_++);
        if (schedule_.failed()) return;
        if (folded_ < static_cast<int>(steps_.size())) {
            begin(folded_);
        } else {
            finish_steps();
        }
    }
}

// The taker: the giver's input (lower rank) on the left of its own.
void HalvingFlow::fold_pair() {
    combine_on_left(scratch_ + pair_at_, work_, bytes_, pair_message());
    pair_folded_ = true;
}

void HalvingFlow::fold(int k) {
    const Step &s = steps_[k];
    size_t at = s.recv_at;
    for (int w : s.keep) {
        const Range r = vblock(w);
        char *acc = work_ + r.offset, *theirs = scratch_ + at;
        if (s.lower) {
            combine_on_left(theirs, acc, r.bytes, k);
        } else {  // acc = acc op theirs, computed in their buffer
            combine_on_left(acc, theirs, r.bytes, k);
            std::memcpy(acc, theirs, r.bytes);
        }
        at += r.bytes;
    }
    schedule_.trace_combined(id_, k, s.recv_bytes);
}

// acc = left op acc.
void HalvingFlow::combine_on_left(const char *left, char *acc, size_t bytes, int k) {
    const size_t units = bytes / op_.unit_bytes;
    const int rc = op_.combine(op_.ctx, left, acc, units);
    if (rc != 0) schedule_.fail_combine(rc, k, units);
}

// Every exchange is folded: a taker sends its giver's block back; each rank
// delivers its own.
void HalvingFlow::finish_steps() {
    if (role_ == kTaker) {
        const int giver = rank_ - 1;
        schedule_.post_send(work_ + static_cast<size_t>(giver) * block_, giver, tag_,
                            schedule_.take_op(id_, Op::kSend, pair_message(), 0, block_));
    }
    deliver(work_ + static_cast<size_t>(rank_) * block_);
}

void HalvingFlow::deliver(const char *block) {
    int rc = copy_to_user(output_, output_.from, block, block_);
    if (rc != 0) schedule_.fail_conversion(rc, "unpacking the reduce-scatter's result", output_.from, block_);
    done_ = true;
}

void HalvingFlow::finish() {
    if (work_) pool_.give_back(bytes_ + scratch_bytes_, {work_});
}

}  // namespace adapt2
