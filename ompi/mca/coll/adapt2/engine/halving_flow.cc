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
      bytes_(a.bytes),
      unit_(a.op.unit_bytes ? a.op.unit_bytes : 1),
      units_per_block_(a.bytes / unit_ / static_cast<size_t>(a.size)),
      longer_blocks_(a.bytes / unit_ % static_cast<size_t>(a.size)),
      allreduce_(a.allreduce),
      split_pair_(a.allreduce && a.op.commutative),
      half_(unit_ * (a.bytes / unit_ / 2)),
      op_(a.op),
      input_(a.input),
      output_(a.output),
      pool_(pool) {
    plan();
    arrived_.assign(2 * steps_.size(), 0);
    gathering_ = steps() - 1;
    if (bytes_ == 0) return;
    // In the user's order the result buffer itself can be the working buffer
    // (not a giver's: the result lands while its sends may still read it).
    in_user_ = allreduce_ && role_ != kGiver && output_.user.contig && !output_.user.on_device && output_.from == 0;
    if (in_user_) {
        work_ = output_.user.contig;
        scratch_ = scratch_bytes_ ? pool_.borrow_one(scratch_bytes_) : nullptr;
        return;
    }
    work_ = pool_.borrow_one(bytes_ + scratch_bytes_);
    scratch_ = work_ + bytes_;
}

size_t HalvingFlow::block_at(int i) const {
    const size_t n = static_cast<size_t>(i);
    return unit_ * (n * units_per_block_ + std::min(n, longer_blocks_));
}

// Virtual block w: the blocks of virtual rank w's real ranks.
HalvingFlow::Range HalvingFlow::vblock(int w) const {
    const int first = w < rem_ ? 2 * w : w + rem_, end = w < rem_ ? first + 2 : first + 1;
    return {block_at(first), block_at(end) - block_at(first)};
}

void HalvingFlow::plan() {
    int pof2 = 1;
    while (pof2 * 2 <= size_) pof2 *= 2;
    rem_ = size_ - pof2;
    if (!allreduce_) lay_out(pof2);
    vrank_ = rank_ - rem_;
    size_t end = 0;
    if (rank_ < 2 * rem_) {
        role_ = rank_ % 2 == 0 ? kGiver : kTaker;
        // a giver: its block back (allreduce: all of them); a taker: the giver's
        // p blocks (split: its upper half)
        if (role_ == kGiver) {
            scratch_bytes_ = allreduce_ ? bytes_ : block_bytes(rank_);
            return;
        }
        end = split_pair_ ? bytes_ - half_ : bytes_;
        vrank_ = rank_ / 2;
    }
    pair_folded_ = role_ != kTaker;
    int lo = 0, hi = pof2;  // allreduce: the virtual blocks this rank still reduces
    for (int mask = 1; mask < pof2; mask <<= 1) {
        steps_.push_back(allreduce_ ? halve(vrank_, mask, &lo, &hi, &end) : exchange(vrank_, mask, &end));
    }
    scratch_bytes_ = end;
}

// Where virtual block w starts in the user's order (w = p': the end).
size_t HalvingFlow::vblock_at(int w) const { return block_at(w < rem_ ? 2 * w : w + rem_); }

// Allreduce: the blocks [lo, hi) this rank reduces so far are contiguous in
// the user's order; it keeps the half that bit `mask` of its virtual rank
// picks, and its partner the other.
HalvingFlow::Step HalvingFlow::halve(int vrank, int mask, int *lo, int *hi, size_t *scratch_end) {
    const int partner = vrank ^ mask, mid = *lo + (*hi - *lo) / 2;
    const bool upper = (vrank & mask) != 0;
    auto range = [&](int from, int to) { return Range{vblock_at(from), vblock_at(to) - vblock_at(from)}; };
    Step s{};
    s.peer = partner < rem_ ? 2 * partner + 1 : partner + rem_;
    s.lower = partner < vrank;
    s.keep = upper ? range(mid, *hi) : range(*lo, mid);
    s.give = upper ? range(*lo, mid) : range(mid, *hi);
    (upper ? *lo : *hi) = mid;
    s.recv_at = *scratch_end;
    *scratch_end += s.keep.bytes;
    return s;
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
    if (allreduce_) {
        if (input_.user.contig == work_ && input_.from == 0) return;  // in place, in the result
        const UserRange all{input_.user, input_.from, 0, bytes_};
        const int rc = copy_into_work(all, work_);
        if (rc != 0) schedule_.fail_conversion(rc, "packing the allreduce's input", all.from, all.bytes);
        return;
    }
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
    if (role_ != kPlain) start_pair();
    if (role_ == kGiver) return;
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
    if (schedule_.failed()) return;
    if (k == pair_message() || k == pair_result_message()) return on_pair_message(received, k);
    if (!received) {
        if (allreduce_ && k < steps()) post_gather_recv(k);
        return;
    }
    arrived_[k < pair_message() ? k : k - 1] = 1;  // exchange k's halving, or k - steps() - 1's doubling
    if (k < pair_message()) return try_fold();
    gather();
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

// The pair's first messages. Rank order: the giver's whole input to the
// taker. A commutative allreduce splits the work as MPICH does: each folds
// one half (the giver the lower), the giver sends its folded half on, and
// the taker goes on with the whole folded input.
void HalvingFlow::start_pair() {
    const int pair = pair_message(), peer = role_ == kGiver ? rank_ + 1 : rank_ - 1;
    const bool giver = role_ == kGiver;
    if (!split_pair_ && giver) {  // its block (allreduce: the result) back, for its input
        schedule_.post_recv(scratch_, peer, tag_, schedule_.take_op(id_, Op::kRecv, pair, 0, scratch_bytes_));
        schedule_.post_send(work_, peer, tag_, schedule_.take_op(id_, Op::kSend, pair, 0, bytes_));
        return;
    }
    if (!split_pair_) {
        schedule_.post_recv(scratch_, peer, tag_, schedule_.take_op(id_, Op::kRecv, pair, 0, bytes_));
        return;
    }
    const size_t mine = giver ? half_ : bytes_ - half_, theirs = bytes_ - mine;
    schedule_.post_recv(scratch_, peer, tag_, schedule_.take_op(id_, Op::kRecv, pair, 0, mine));
    schedule_.post_send(work_ + (giver ? half_ : 0), peer, tag_, schedule_.take_op(id_, Op::kSend, pair, 0, theirs));
}

// The pair's messages: its half or whole input arrived, or the giver's folded
// half (split), or the result back at the giver; a split taker's own half has
// left, so the giver's folded half may land there.
void HalvingFlow::on_pair_message(bool received, int k) {
    const bool taker = role_ == kTaker;
    if (!received) {
        if (taker && split_pair_ && k == pair_message()) {
            schedule_.post_recv(work_, rank_ - 1, tag_ - 2,
                                schedule_.take_op(id_, Op::kRecv, pair_result_message(), 0, half_));
        }
        return;
    }
    if (!taker && (k == pair_result_message() || !split_pair_)) {
        return allreduce_ ? deliver_all(scratch_) : deliver(scratch_);
    }
    if (!taker) {  // split: fold the lower half, send it on, await the result
        combine_on_left(scratch_, work_, half_, k);
        if (schedule_.failed()) return;
        schedule_.post_recv(scratch_, rank_ + 1, tag_ - 2,
                            schedule_.take_op(id_, Op::kRecv, pair_result_message(), 0, bytes_));
        schedule_.post_send(work_, rank_ + 1, tag_ - 2,
                            schedule_.take_op(id_, Op::kSend, pair_result_message(), 0, half_));
        return;
    }
    if (k == pair_result_message()) {
        pair_halves_ |= 2;
    } else if (split_pair_) {
        combine_on_left(scratch_, work_ + half_, bytes_ - half_, k);
        pair_halves_ |= 1;
    } else {
        combine_on_left(scratch_, work_, bytes_, k);  // the giver's input (lower rank) on the left
        pair_halves_ = 3;
    }
    if (pair_halves_ != 3 || schedule_.failed()) return;
    pair_folded_ = true;
    begin(0);
    try_fold();
}

void HalvingFlow::fold(int k) {
    const Step &s = steps_[k];
    if (s.keep.bytes == 0) return;  // fewer units than ranks: an empty block (and maybe no scratch)
    char *acc = work_ + s.keep.offset, *theirs = scratch_ + s.recv_at;
    if (s.lower || op_.commutative) {
        combine_on_left(theirs, acc, s.keep.bytes, k);
    } else {  // acc = acc op theirs, computed in their buffer
        combine_on_left(acc, theirs, s.keep.bytes, k);
        std::memcpy(acc, theirs, s.keep.bytes);
    }
    schedule_.trace_combined(id_, k, s.keep.bytes);
}

// acc = left op acc.
void HalvingFlow::combine_on_left(const char *left, char *acc, size_t bytes, int k) {
    if (bytes == 0) return;
    const size_t units = bytes / op_.unit_bytes;
    const int rc = op_.combine(op_.ctx, left, acc, units);
    if (rc != 0) schedule_.fail_combine(rc, k, units);
}

// Every exchange is folded: a taker sends its giver's block back; each rank
// delivers its own. An allreduce gathers the blocks back instead.
void HalvingFlow::finish_steps() {
    halved_ = true;
    if (allreduce_) return gather();
    const char *mine = work_ + at_[vrank_];  // a taker's virtual block: its giver's block, then its own
    if (role_ == kTaker) {
        const size_t givers = block_bytes(rank_ - 1);
        schedule_.post_send(mine, rank_ - 1, tag_, schedule_.take_op(id_, Op::kSend, pair_message(), 0, givers));
        mine += givers;
    }
    deliver(mine);
}

void HalvingFlow::deliver(const char *block) {
    const size_t bytes = block_bytes(rank_);
    int rc = copy_to_user(output_, output_.from, block, bytes);
    if (rc != 0) schedule_.fail_conversion(rc, "unpacking the reduce-scatter's result", output_.from, bytes);
    done_ = true;
}

// The doubling of exchange k brings back the blocks this rank gave there,
// into the same place: its halving send has read them.
void HalvingFlow::post_gather_recv(int k) {
    const Step &s = steps_[k];
    schedule_.post_recv(work_ + s.give.offset, s.peer, tag_ - 1,
                        schedule_.take_op(id_, Op::kRecv, gather_message(k), 0, s.give.bytes));
}

// Doubling exchange k sends the blocks kept at halving exchange k, final once
// the halving is done and the doublings above k have arrived.
void HalvingFlow::gather() {
    while (halved_ && !done_) {
        const int k = gathering_;
        if (k < 0) {
            if (role_ == kTaker) {
                const int tag = split_pair_ ? tag_ - 2 : tag_,
                          id = split_pair_ ? pair_result_message() : pair_message();
                schedule_.post_send(work_, rank_ - 1, tag, schedule_.take_op(id_, Op::kSend, id, 0, bytes_));
            }
            return deliver_all(work_);
        }
        const Step &s = steps_[k];
        if (!gather_sent_) {
            gather_sent_ = true;
            schedule_.post_send(work_ + s.keep.offset, s.peer, tag_ - 1,
                                schedule_.take_op(id_, Op::kSend, gather_message(k), 0, s.keep.bytes));
        }
        if (!arrived_[steps() + k]) return;
        --gathering_;
        gather_sent_ = false;
    }
}

// The whole result (in the user's order) to the user's buffer.
void HalvingFlow::deliver_all(const char *blocks) {
    done_ = true;
    if (blocks == output_.user.contig) return;  // the result is where it belongs
    const int rc = copy_to_user(output_, output_.from, blocks, bytes_);
    if (rc != 0) schedule_.fail_conversion(rc, "unpacking the allreduce's result", output_.from, bytes_);
}

void HalvingFlow::finish() {
    if (in_user_) {
        if (scratch_) pool_.give_back_one(scratch_bytes_, scratch_);
    } else if (work_) {
        pool_.give_back_one(bytes_ + scratch_bytes_, work_);
    }
}

}  // namespace adapt2
