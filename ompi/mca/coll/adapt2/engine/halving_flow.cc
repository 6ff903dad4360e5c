// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
#include "halving_flow.h"

#include <algorithm>
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
    work_ = pool_.borrow_one(bytes_ + scratch_bytes_);
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
    lay_out(pof2);
    vrank_ = rank_ - rem_;
    size_t end = 0;
    if (rank_ < 2 * rem_) {
        role_ = rank_ % 2 == 0 ? kGiver : kTaker;
        end = role_ == kGiver ? block_ : bytes_;  // the block back, or the giver's p blocks
        if (role_ == kGiver) {
            scratch_bytes_ = end;
            return;
        }
        vrank_ = rank_ / 2;
    }
    pair_folded_ = role_ != kTaker;
    for (int mask = 1; mask < pof2; mask <<= 1) steps_.push_back(exchange(vrank_, mask, &end));
    scratch_bytes_ = end;
}

// Virtual block w goes at position bitrev(w) of the working buffer.
void HalvingFlow::lay_out(int pof2) {
    int bits = 0;
    while ((1 << bits) < pof2) ++bits;
    std::vector<int> at_position(pof2);
    for (int w = 0; w < pof2; ++w) {
        int r = 0;
        for (int b = 0; b < bits; ++b) r |= ((w >> b) & 1) << (bits - 1 - b);
        at_position[r] = w;
    }
    at_.assign(pof2, 0);
    size_t offset = 0;
    for (int w : at_position) {
        at_[w] = offset;
        offset += vblock(w).bytes;
    }
}

// Where the virtual blocks w with w mod 2^low_bits == value lie in work_:
// one range (the layout makes it so; checked, as a bug would corrupt data).
HalvingFlow::Range HalvingFlow::span(int pof2, int low_bits, int value) const {
    size_t lo = bytes_, hi = 0, total = 0;
    for (int w = value; w < pof2; w += 1 << low_bits) {
        lo = std::min(lo, at_[w]);
        hi = std::max(hi, at_[w] + vblock(w).bytes);
        total += vblock(w).bytes;
    }
    return total == hi - lo ? Range{lo, total} : Range{bytes_ + 1, 0};
}

// Exchange with virtual rank vrank ^ mask; its receive goes at *scratch_end.
HalvingFlow::Step HalvingFlow::exchange(int vrank, int mask, size_t *scratch_end) {
    const int pof2 = size_ - rem_, partner = vrank ^ mask, low_bits = __builtin_ctz(mask) + 1;
    Step s{};
    s.peer = partner < rem_ ? 2 * partner + 1 : partner + rem_;
    s.lower = partner < vrank;
    s.keep = span(pof2, low_bits, vrank & (2 * mask - 1));
    s.give = span(pof2, low_bits, partner & (2 * mask - 1));
    if (s.keep.offset > bytes_ || s.give.offset > bytes_) {
        layout_error_ = "recursive halving: an exchange's blocks are not contiguous in the working buffer";
    }
    s.recv_at = *scratch_end;
    *scratch_end += s.keep.bytes;
    return s;
}

// The user's blocks into the working buffer, in its order.
void HalvingFlow::fill() {
    for (int w = 0; w < static_cast<int>(at_.size()); ++w) {
        const Range r = vblock(w);
        const UserRange c{input_.user, input_.from + r.offset, at_[w], r.bytes};
        const int rc = copy_into_work(c, work_);
        if (rc != 0) return schedule_.fail_conversion(rc, "packing the reduce-scatter's input", c.from, c.bytes);
    }
}

void HalvingFlow::start() {
    if (bytes_ == 0) {
        done_ = true;
        return;
    }
    if (layout_error_) return schedule_.fail_call(ADAPT2_STATUS_INTERNAL_ERROR, "internal error: %s", layout_error_);
    fill();
    if (schedule_.failed()) return;
    const int pair = pair_message();
    if (role_ == kGiver) {
        schedule_.post_recv(scratch_, rank_ + 1, tag_, schedule_.take_op(id_, Op::kRecv, pair, 0, block_));
        schedule_.post_send(work_, rank_ + 1, tag_, schedule_.take_op(id_, Op::kSend, pair, 0, bytes_));
        return;
    }
    if (role_ == kTaker) {
        schedule_.post_recv(scratch_, rank_ - 1, tag_, schedule_.take_op(id_, Op::kRecv, pair, 0, bytes_));
    }
    for (size_t k = 0; k < steps_.size(); ++k) {
        const Step &s = steps_[k];
        schedule_.post_recv(scratch_ + s.recv_at, s.peer, tag_,
                            schedule_.take_op(id_, Op::kRecv, static_cast<int>(k), 0, s.keep.bytes));
    }
    if (steps_.empty()) return finish_steps();  // a single rank
    if (pair_folded_) begin(0);
}

// Exchange k's send: the partner's virtual blocks, from where they lie (this
// rank never writes them again).
void HalvingFlow::begin(int k) {
    const Step &s = steps_[k];
    begun_ = k + 1;
    schedule_.post_send(work_ + s.give.offset, s.peer, tag_, schedule_.take_op(id_, Op::kSend, k, 0, s.give.bytes));
}

void HalvingFlow::on_complete(Op &op) {
    const bool received = op.kind == Op::kRecv;
    const int k = op.segment;
    schedule_.return_op(&op);
    if (!received || schedule_.failed()) return;
    if (k == pair_message()) {
        if (role_ == kGiver) return deliver(scratch_);
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
    combine_on_left(scratch_, work_, bytes_, pair_message());
    pair_folded_ = true;
}

void HalvingFlow::fold(int k) {
    const Step &s = steps_[k];
    char *acc = work_ + s.keep.offset, *theirs = scratch_ + s.recv_at;
    if (s.lower) {
        combine_on_left(theirs, acc, s.keep.bytes, k);
    } else {  // acc = acc op theirs, computed in their buffer
        combine_on_left(acc, theirs, s.keep.bytes, k);
        std::memcpy(acc, theirs, s.keep.bytes);
    }
    schedule_.trace_combined(id_, k, s.keep.bytes);
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
    const char *mine = work_ + at_[vrank_];  // a taker's virtual block: its giver's block, then its own
    if (role_ == kTaker) {
        schedule_.post_send(mine, rank_ - 1, tag_, schedule_.take_op(id_, Op::kSend, pair_message(), 0, block_));
        mine += block_;
    }
    deliver(mine);
}

void HalvingFlow::deliver(const char *block) {
    int rc = copy_to_user(output_, output_.from, block, block_);
    if (rc != 0) schedule_.fail_conversion(rc, "unpacking the reduce-scatter's result", output_.from, block_);
    done_ = true;
}

void HalvingFlow::finish() {
    if (work_) pool_.give_back_one(bytes_ + scratch_bytes_, work_);
}

}  // namespace adapt2
