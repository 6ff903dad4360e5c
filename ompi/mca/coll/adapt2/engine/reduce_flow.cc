// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
#include "reduce_flow.h"

#include <algorithm>
#include <cstring>

#include "bcast_flow.h"
#include "counters.h"
#include "detach.h"
#include "schedule.h"

namespace adapt2 {

ReduceFlow::ReduceFlow(Schedule &schedule, int id, const ReduceArgs &args, std::shared_ptr<const Tree> tree,
                       BufferPool &pool)
    : TreeFlow(schedule, id, args, std::move(tree), pool, args.own.bytes, args.op.unit_bytes),
      user_own_(args.in_place ? args.result : args.own),
      own_(args.copy ? UserData(adapt2_buffer_t{args.copy, args.own.bytes, nullptr, nullptr, nullptr, 0, 0})
                     : user_own_),
      result_(args.result),
      in_place_(args.in_place),
      op_(args.op),
      fixed_order_(args.fixed_order),
      order_(memory()),
      slots_(memory()),
      borrowed_(memory()),
      gpu_(args.gpu_combine && args.device_pool),
      device_pool_(args.device_pool),
      device_bufs_(memory()) {
    if (await_) own_ = user_own_;
    // Operands in rank order; own data is operand children().
    order_.reserve(children() + 1);
    for (int c = 0; c < children(); ++c) order_.push_back(c);
    order_.push_back(own_index());
    auto rank_of = [&](int operand) { return operand == own_index() ? args.rank : children_[operand]; };
    std::sort(order_.begin(), order_.end(), [&](int a, int b) { return rank_of(a) < rank_of(b); });
    plan_slots(args.recv_window);
    plan_device_buffers();
}

// Slots: as many segments in progress as the receive window asks for and the
// pool allows, at least one.
void ReduceFlow::plan_slots(int window) {
    const int nseg = segments_.count();
    if (nseg == 0) return;
    // A private copy is adopted as the accumulator: no own buffer then.
    const bool needs_own_buffer = (children() > 0 && !own_is_copy()) || !own_.contiguous();
    buffers_per_slot_ = children() + (needs_own_buffer ? 1 : 0);
    // A detached leaf needs no buffers: all its segments go at once.
    if (copy_ && children() == 0) window = nseg;
    int want = std::clamp(window, 1, std::min(nseg, CompletionWindow::kMax));
    int nslots = want;
    if (buffers_per_slot_ > 0) {
        borrowed_ = pool_.borrow(segments_.max_bytes(), want * buffers_per_slot_, buffers_per_slot_, memory());
        nslots = static_cast<int>(borrowed_.size()) / buffers_per_slot_;
        const size_t kept = static_cast<size_t>(nslots) * buffers_per_slot_;
        pool_.give_back(segments_.max_bytes(), borrowed_.data() + kept, borrowed_.size() - kept);
        borrowed_.resize(kept);
    }
    slots_.reserve(nslots);
    for (int i = 0; i < nslots; ++i) {
        Slot &slot = slots_.emplace_back(memory());
        auto first = borrowed_.begin() + i * buffers_per_slot_;
        slot.bufs.assign(first, first + buffers_per_slot_);
        slot.ready.reserve(children() + 1);  // start_segment() assigns them: no growth then
        slot.folded.reserve(children() + 1);
    }
}

int ReduceFlow::max_ops() const {
    const int hellos = hello_ ? children() + (is_root() ? 0 : 1) : 0;
    // Device: a copy in of own data and (root) a copy out of the result per
    // slot; GPU combine: also a copy and a combine per child, and a copy out.
    const int per_slot = gpu_ ? 2 + 2 * children() : (own_.on_device() ? 1 : 0) + (result_on_device() ? 1 : 0);
    const int copies = static_cast<int>(slots_.size()) * per_slot;
    return static_cast<int>(slots_.size()) * children() + (is_root() ? 0 : send_window_) + hellos + copies;
}

void ReduceFlow::start() {
    count_hellos();
    post_hellos();
    if (copy_ && !await_) {
        copy_own_in();
    } else {
        start_segments();  // an awaiting leaf waits for its parent's hello or the expiry
    }
}

// Parents tell their children they have entered the call (every child
// receives it, whether or not it awaits: the messages must match).
void ReduceFlow::post_hellos() {
    if (!hello_) return;
    for (int c = 0; c < children() && !schedule_.failed(); ++c) {
        schedule_.post_send(nullptr, children_[c], hello_tag_, schedule_.take_hello(id_, Op::kSend, c));
    }
    if (!is_root()) {
        schedule_.post_recv(nullptr, parent_, hello_tag_, schedule_.take_hello(id_, Op::kRecv, 0));
    }
}

// The parent is in the call: an awaiting leaf sends from the user's buffer.
void ReduceFlow::on_hello() {
    heard_hello(1);
    if (!waiting_for_parent()) return;
    decided_ = true;
    schedule_.grace_not_needed();
    start_segments();
}

// The grace period is over: copy the own data not combined yet and go on
// from the copy.
void ReduceFlow::expire() {
    // watching: a parent that has not said hello when the period ends, with
    // data still to go to it, came late
    if (watch_ && sent_.prefix() < segments_.count() && !heard_all(1)) late_->saw_late();
    if (!await_ || copied_ == segments_.count() || (children() > 0 && own_folded_ == segments_.count())) return;
    if (children() == 0 && decided_) return;
    copy_rest_of_own();
    decided_ = true;
    start_segments();
}

void ReduceFlow::copy_rest_of_own() {
    copy_into_private(user_own_, 0, segments_.total(), copy_);  // contiguous: cannot fail
    count(Counter::detach_bytes, segments_.total());
    copied_ = segments_.count();
    own_ = UserData(adapt2_buffer_t{copy_, segments_.total(), nullptr, nullptr, nullptr, 0, 0});
    for (Slot &slot : slots_) {  // segments in progress read their own data from the copy now
        if (slot.segment < 0 || slot.folded.empty() || slot.folded[own_index()]) continue;
        slot.own = copy_ + segments_.offset(slot.segment);
        slot.own_private = true;
    }
}

bool ReduceFlow::locally_done() const {
    if (watch_) return sent_.prefix() == segments_.count();  // only the parent's hello may be left
    if (!copy_) return false;
    if (copied_ == segments_.count()) return true;
    // An interior rank whose own data is all combined holds the rest itself.
    return await_ && children() > 0 && own_folded_ == segments_.count();
}

// Detached: copy own data in segment by segment, starting each one as soon
// as it is in, so the copy overlaps the first transfers.
void ReduceFlow::copy_own_in() {
    for (int s = 0; s < segments_.count() && !schedule_.failed(); ++s) {
        int rc = copy_into_private(user_own_, segments_.offset(s), segments_.bytes(s), copy_);
        if (rc != 0)
            schedule_.fail_conversion(rc, "packing into the detach copy", segments_.offset(s), segments_.bytes(s));
        ++copied_;
        start_segments();
    }
    count(Counter::detach_bytes, segments_.total());
}

void ReduceFlow::start_segments() {
    if (waiting_for_parent()) return;
    const int startable = copy_ && !await_ ? copied_ : segments_.count();
    while (!schedule_.failed() && next_start_ < startable &&
           next_start_ < released_.prefix() + static_cast<int>(slots_.size())) {
        start_segment(next_start_++);
    }
}

// Where a segment's own data comes from (the flow's source; deliver() is
// its sink): in place in the user's buffer or the private copy, packed into
// the slot by the convertor, or copied into the slot from the device (an
// operand once that copy is done, on_copied).
void ReduceFlow::bring_own(Slot &slot) {
    const int s = slot.segment;
    const size_t off = segments_.offset(s), len = segments_.bytes(s);
    slot.ready[own_index()] = !own_.on_device();
    if (own_.contiguous()) {
        slot.own = own_.at(off);
        slot.own_private = own_is_copy();
        return;
    }
    slot.own = slot.bufs[own_index()];
    slot.own_private = true;
    if (own_.on_device()) {
        schedule_.post_copy(slot.bufs[own_index()], own_.at(off), schedule_.take_copy(id_, s, kOwnIn, len));
        return;
    }
    int rc = own_.read(off, len, slot.bufs[own_index()]);
    if (rc != 0) schedule_.fail_conversion(rc, "packing own data into a slot", off, len);
}

void ReduceFlow::start_segment(int s) {
    Slot &slot = slot_of(s);
    const size_t off = segments_.offset(s), len = segments_.bytes(s);
    slot.segment = s;
    slot.acc = nullptr;
    slot.ready.assign(children() + 1, 0);
    slot.folded.assign(children() + 1, 0);
    slot.folds = 0;
    slot.next_fixed = children();
    if (gpu_) {
        start_gpu_segment(slot);
        return;
    }
    bring_own(slot);
    // In place, a commutative root already holds its own data where the
    // result goes: start from there.
    if (is_root() && in_place_ && !fixed_order_ && result_.contiguous()) {
        slot.acc = result_.at(off);
        slot.folded[own_index()] = 1;
        slot.folds = 1;
    }
    for (int c = 0; c < children() && !schedule_.failed(); ++c) {
        schedule_.post_recv(slot.bufs[c], children_[c], segment_tag(tag_, tags_, s),
                            schedule_.take_op(id_, Op::kRecv, s, c, len));
    }
    fold_ready(slot);
}

void ReduceFlow::on_complete(Op &op) {
    const Op::Kind kind = op.kind;
    const bool hello = op.carries == Op::kHello;
    const int s = op.segment, child = op.peer_index, step = op.step;
    schedule_.return_op(&op);
    if (hello) {
        if (kind == Op::kRecv) on_hello();
        return;
    }
    if (kind == Op::kCopy) {
        on_copied(s, step);
    } else if (kind == Op::kRecv && gpu_) {
        gpu_combine_child(slot_of(s), child);
    } else if (kind == Op::kRecv) {
        Slot &slot = slot_of(s);
        slot.ready[child] = 1;
        fold_ready(slot);
    } else {
        sent_.mark_done(s);
        if (watch_ && sent_.prefix() == segments_.count()) schedule_.grace_not_needed();  // nobody was late
        release(s);
        post_sends();
    }
}

void ReduceFlow::on_copied(int segment, int step) {
    Slot &slot = slot_of(segment);
    switch (step) {
    case kResultOut:  // the user has the segment's result
        if (feed_) feed_->supply(segment);
        release(segment);
        return;
    case kOwnIn:
        if (gpu_) return gpu_operand_done(slot);  // own data is in the accumulator
        slot.ready[own_index()] = 1;
        return fold_ready(slot);
    case kCombined: return gpu_operand_done(slot);
    case kAccOut:  // the reduced segment is on the host, ready to go up
        slot.acc = slot.bufs[own_index()];
        slot.folds = children() + 1;
        return post_sends();
    default: return;  // kChildIn: its combine, later on the same stream, reports
    }
}

// Folds whatever the combine order allows now.
void ReduceFlow::fold_ready(Slot &slot) {
    if (schedule_.failed()) return;
    if (fixed_order_) {
        while (slot.next_fixed >= 0 && slot.ready[order_[slot.next_fixed]]) {
            fold(slot, order_[slot.next_fixed--]);
        }
    } else {
        if (!slot.acc && pairs_into_result() && !fold_first_pair(slot)) return;
        // Own data waits for the first child, whose buffer then becomes the
        // accumulator: no copy. A leaf has only its own data.
        for (int x = 0; x < children(); ++x) {
            if (slot.ready[x] && !slot.folded[x]) fold(slot, x);
        }
        bool own_may_start = children() == 0 || adoptable(slot, own_index()) || copies_to_result();
        if (slot.ready[own_index()] && !slot.folded[own_index()] && (slot.acc || own_may_start)) {
            fold(slot, own_index());
        }
    }
    if (slot.folds == children() + 1) segment_reduced(slot);
}

const char *ReduceFlow::operand_data(const Slot &slot, int operand) const {
    return operand == own_index() ? slot.own : slot.bufs[operand];
}

// Whether an operand's memory may become the accumulator: staging buffers
// may; so may the root's result buffer holding its own data in place; user
// send buffers may not.
bool ReduceFlow::adoptable(const Slot &slot, int operand) const {
    if (operand != own_index()) return true;
    if (slot.own_private) return true;  // private copy, or packed into the slot
    return is_root() && in_place_;      // the result buffer itself
}

// The root copies its first operand straight into a contiguous result
// buffer: it is the destination anyway.
bool ReduceFlow::copies_to_result() const { return is_root() && !in_place_ && result_.contiguous(); }

// A root that would copy its first operand into the result combines the
// first two straight into it instead (out = a op b): one pass over the data
// less, which is what a two-rank reduce spends besides the transfer. Only
// in arrival order (commutative ops), where operand order does not matter.
bool ReduceFlow::pairs_into_result() const {
    return copies_to_result() && op_.combine3 && !fixed_order_ && children() > 0;
}

// Folds the first two operands that are here into the result; false (and
// nothing folded) until two are here.
bool ReduceFlow::fold_first_pair(Slot &slot) {
    int pair[2], found = 0;
    for (int x = 0; x <= children() && found < 2; ++x) {
        if (slot.ready[x] && !slot.folded[x]) pair[found++] = x;
    }
    if (found < 2) return false;
    note_folded(slot, pair[0]);
    note_folded(slot, pair[1]);
    slot.acc = result_.at(segments_.offset(slot.segment));
    int rc =
        op_.combine3(op_.ctx, operand_data(slot, pair[0]), operand_data(slot, pair[1]), slot.acc, units(slot.segment));
    if (rc != 0) schedule_.fail_combine(rc, slot.segment, units(slot.segment));
    schedule_.trace_combined(id_, slot.segment, segments_.bytes(slot.segment));
    return true;
}

// Where the first operand is copied when it cannot be adopted.
char *ReduceFlow::copy_target(Slot &slot) {
    if (copies_to_result()) return result_.at(segments_.offset(slot.segment));
    return slot.bufs[own_index()];
}

void ReduceFlow::fold(Slot &slot, int operand) {
    const char *src = operand_data(slot, operand);
    const size_t len = segments_.bytes(slot.segment);
    note_folded(slot, operand);
    if (children() == 0) {  // a leaf sends its own data as it is
        slot.acc = const_cast<char *>(src);
        return;
    }
    if (!slot.acc) {
        if (!copies_to_result() && adoptable(slot, operand)) {
            slot.acc = const_cast<char *>(src);
        } else {
            slot.acc = copy_target(slot);
            // the simulator's ranks share one scratch buffer per size
            if (slot.acc != src) std::memcpy(slot.acc, src, len);
        }
        return;
    }
    int rc = op_.combine(op_.ctx, src, slot.acc, units(slot.segment));
    if (rc != 0) schedule_.fail_combine(rc, slot.segment, units(slot.segment));
    schedule_.trace_combined(id_, slot.segment, len);
}

void ReduceFlow::note_folded(Slot &slot, int operand) {
    slot.folded[operand] = 1;
    ++slot.folds;
    if (operand == own_index() && ++own_folded_ == segments_.count() && await_ && children() > 0) {
        schedule_.grace_not_needed();  // nothing of the user's is read any more
    }
}

void ReduceFlow::segment_reduced(Slot &slot) {
    if (result_on_device()) {  // delivered, and released, once copied
        schedule_.post_copy(result_.at(segments_.offset(slot.segment)), slot.acc,
                            schedule_.take_copy(id_, slot.segment, kResultOut, segments_.bytes(slot.segment)));
        return;
    }
    if (is_root()) {
        deliver(slot);
        release(slot.segment);
        return;
    }
    post_sends();
}

// Root: the segment's result goes to the user's buffer (and on to a
// broadcast, in an allreduce).
void ReduceFlow::deliver(Slot &slot) {
    const int s = slot.segment;
    const size_t off = segments_.offset(s), len = segments_.bytes(s);
    int rc = result_.write(off, len, slot.acc);
    if (rc != 0) schedule_.fail_conversion(rc, "unpacking the result", off, len);
    if (feed_) feed_->supply(s);
}

// Sends reduced segments to the parent, in order, within the send window.
void ReduceFlow::post_sends() {
    const int nseg = segments_.count();
    while (!schedule_.failed() && next_send_ < nseg && next_send_ < sent_.prefix() + send_window_) {
        const int s = next_send_;
        Slot &slot = slot_of(s);
        if (slot.segment != s || slot.folds != children() + 1) break;
        ++next_send_;
        schedule_.post_send(slot.acc, parent_, segment_tag(tag_, tags_, s),
                            schedule_.take_op(id_, Op::kSend, s, 0, segments_.bytes(s)));
    }
}

// Segment s is finished here: its slot can take the next segment.
void ReduceFlow::release(int s) {
    released_.mark_done(s);
    start_segments();
}

void ReduceFlow::finish() {
    uncount_hellos(1);
    if (!borrowed_.empty()) pool_.give_back(segments_.max_bytes(), borrowed_);
    if (!device_bufs_.empty()) device_pool_->give_back(segments_.max_bytes(), device_bufs_);
    if (copy_) copy_pool_->give_back_one(segments_.total(), copy_);
    if (!is_root() && !schedule_.failed()) {
        count(Counter::segments_sent, static_cast<uint64_t>(segments_.count()));
        count(Counter::bytes_sent, segments_.total());
    }
}

}  // namespace adapt2
