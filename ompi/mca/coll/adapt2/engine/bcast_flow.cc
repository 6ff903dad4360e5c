// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
#include "bcast_flow.h"

#include <algorithm>
#include <cstring>

#include "counters.h"
#include "detach.h"
#include "schedule.h"

namespace adapt2 {

BcastFlow::BcastFlow(Schedule &schedule, int id, const BcastArgs &args, std::shared_ptr<const Tree> tree,
                     BufferPool &pool)
    : TreeFlow(schedule, id, args, std::move(tree), pool, args.data.bytes, args.unit),
      data_(args.data),
      path_(path_of(args)),
      recv_window_(std::clamp(args.recv_window, 1, kMaxWindow)),
      staging_(memory()),
      source_(memory()),
      arrived_(is_root() && !args.supplied && (!args.copy || await_) && !device() ? segments_.count() : 0),
      in_group_(group_of(args.rank, args)),
      group_(memory()),
      next_send_(children_.size(), 0, memory()),
      sent_(children_.size(), memory()),
      supplied_(args.supplied ? 0 : segments_.count()) {
    const int nseg = segments_.count();
    // Arrivals may run a receive window of messages past the prefix.
    recv_window_ = std::max(1, std::min(recv_window_, kMaxWindow / in_group_));
    group_.reserve(children_.size());
    for (int c : children_) group_.push_back(group_of(c, args));
    for (int g : group_) sends_total_ += messages(g);
    if (is_root()) next_recv_ = messages(in_group_);  // the root receives nothing
    if (is_root()) source_.assign(children_.size(), await_ ? undecided : copy_ ? copied : user);
    if (staged() && nseg > 0) borrow_staging();
}

BcastFlow::Path BcastFlow::path_of(const BcastArgs &args) {
    const UserData data(args.data);
    if (args.copy) return Path::copy;
    if (data.on_device()) return Path::device;
    return data.contiguous() ? Path::user : Path::packed;
}

// Segments per message on the edge to `rank` (level_groups() bounds them).
// Both ends of an edge must agree, so only the plan decides: never this
// rank's own layout, which may differ from its peer's.
int BcastFlow::group_of(int rank, const BcastArgs &args) const { return args.groups[tree_->edge_level(rank)]; }

// Staging slots in blocks that each hold the largest message of any edge here
// (level_groups() makes every group divide the largest), enough to keep both
// windows busy; the pool may grant fewer blocks, never fewer than one.
void BcastFlow::borrow_staging() {
    int block = in_group_;
    for (int g : group_) block = std::max(block, g);
    const int receiving = is_root() && !device() ? 1 : recv_window_ * in_group_;
    const int want = std::min(segments_.count(), receiving + send_window_ * block);
    const size_t slot = segments_.max_bytes();
    staging_.assign(pool_.borrow(slot * static_cast<size_t>(block), (want + block - 1) / block, 1, memory()), block,
                    slot);
}

int BcastFlow::max_ops() const {
    int hellos = hello_ ? (is_root() ? children() : child_of_root() ? 1 : 0) : 0;
    const int copies = device() ? staging_.size() : 0;
    return (is_root() ? 0 : recv_window_) + children() * send_window_ + hellos + copies;
}

void BcastFlow::start() {
    count_hellos();
    post_hellos();
    if (await_) return;  // children are fed as they say hello, or at expiry
    if (copy_ && is_root()) {
        copy_in_all();
        return;
    }
    copy_from_device();
    post_receives();
    feed_all();
}

// The root learns which children have entered the call; every child of the
// root tells it (whether or not the root awaits: its receives must match).
void BcastFlow::post_hellos() {
    if (!hello_) return;
    if (child_of_root()) {
        schedule_.post_send(nullptr, parent_, hello_tag_, schedule_.take_hello(id_, Op::kSend, 0));
        return;
    }
    for (int c = 0; is_root() && c < children() && !schedule_.failed(); ++c) {
        schedule_.post_recv(nullptr, children_[c], hello_tag_, schedule_.take_hello(id_, Op::kRecv, c));
    }
}

void BcastFlow::on_hello(int child) {
    const bool all = heard_hello(children());
    if (source_[child] == undecided) {
        source_[child] = user;
        feed(child);
    }
    if (all && !watch_) schedule_.grace_not_needed();  // watching, the sends end it
}

// The grace period is over: the children that have not said hello are late;
// copy the data once and serve them from the copy.
void BcastFlow::expire() {
    // watching: a child that has not said hello when the period ends, and
    // whose data is still to go, came late
    if (watch_ && sends_done_ < sends_total_ && !heard_all(children())) late_->saw_late();
    if (!await_ || std::find(source_.begin(), source_.end(), undecided) == source_.end()) return;
    copy_into_private(data_, 0, segments_.total(), copy_);  // contiguous: cannot fail
    count(Counter::detach_bytes, segments_.total());
    copied_ = segments_.count();
    for (int c = 0; c < children(); ++c) {
        if (source_[c] != undecided) continue;
        source_[c] = copied;
        feed(c);
    }
}

// Whether the user's buffer is free while sends go on from the copy (or,
// watching, once they are over: only the children's hellos may be left).
bool BcastFlow::locally_done() const {
    if (watch_) return sends_done_ == sends_total_;
    if (!copy_ || copied_ < segments_.count()) return false;
    if (!is_root()) return true;
    bool any_copied = false;
    for (int c = 0; c < children(); ++c) {
        if (source_[c] == undecided) return false;
        if (source_[c] == user && sent_[c].prefix() < messages(group_[c])) return false;
        any_copied |= source_[c] == copied;
    }
    return any_copied;
}

// Detached root: copy segment by segment, sending each one as soon as it is
// in, so the copy overlaps the first transfers.
void BcastFlow::copy_in_all() {
    for (int s = 0; s < segments_.count() && !schedule_.failed(); ++s) {
        int rc = copy_into_private(data_, segments_.offset(s), segments_.bytes(s), copy_);
        if (rc != 0)
            schedule_.fail_conversion(rc, "packing into the detach copy", segments_.offset(s), segments_.bytes(s));
        ++copied_;
        arrived_.mark_done(s);
        feed_all();
    }
    count(Counter::detach_bytes, segments_.total());
}

// Detached non-root: the segment is in the copy (and on its way to the
// children); the user gets it too.
void BcastFlow::copy_out(int s) {
    const size_t off = segments_.offset(s), len = segments_.bytes(s);
    int rc = data_.write(off, len, copy_ + off);
    if (rc != 0) schedule_.fail_conversion(rc, "unpacking from the detach copy", off, len);
    if (++copied_ == segments_.count()) count(Counter::detach_bytes, segments_.total());
}

void BcastFlow::supply(int segment) {
    if (device()) {
        supplied_.mark_done(segment);
        copy_from_device();
        return;
    }
    arrived_.mark_done(segment);
    feed_all();
}

// Device root: copy the supplied segments out, in order, into free slots.
void BcastFlow::copy_from_device() {
    if (!is_root() || !device()) return;
    while (!schedule_.failed() && next_copy_ < supplied_.prefix() && staging_.can_claim()) {
        const int s = next_copy_++;
        char *slot = staging_.claim(std::max(children(), 1));  // one send per child
        schedule_.post_copy(slot, data_.at(segments_.offset(s)), schedule_.take_copy(id_, s, 0, segments_.bytes(s)));
    }
}

// A device copy is done: at the root the segment can go to the children; at
// the others the user has it and the slot may be reused once sent.
void BcastFlow::on_copied(int segment) {
    ++copies_done_;
    if (is_root()) {
        arrived_.mark_done(segment);
        if (children() == 0) staging_.release(segment);  // nobody to send to
        copy_from_device();
    } else {
        staging_.release(segment);  // the copy's hold
        post_receives();
    }
    feed_all();
}

bool BcastFlow::has_pending_work() const {
    if (device() && !is_root() && copies_done_ < segments_.count()) return true;
    return arrived_.prefix() < segments_.count() || sends_done_ < sends_total_;
}

void BcastFlow::on_complete(Op &op) {
    const Op::Kind kind = op.kind;
    const bool hello = op.carries == Op::kHello;
    const int segment = op.segment, child = op.peer_index;
    schedule_.return_op(&op);
    if (hello) {
        if (kind == Op::kRecv) on_hello(child);
        return;
    }
    if (kind == Op::kCopy) {
        on_copied(segment);
    } else if (kind == Op::kRecv) {
        on_received(segment);
    } else {
        on_sent(child, segment);
    }
}

// A message from the parent is here: children first, so that handing it to
// the user (landed) overlaps their transfers; then whatever that freed.
void BcastFlow::on_received(int message) {
    const int first = message * in_group_, end = end_of(message, in_group_);
    for (int s = first; s < end; ++s) arrived_.mark_done(s);  // any order; children are fed in order
    post_receives();
    feed_all();
    landed(first, end);
    post_receives();
}

// Where message [first, first + count) from the parent lands; nullptr while
// no staging slot is free.
char *BcastFlow::landing(int first, int count) {
    switch (path_) {
    case Path::user: return data_.at(segments_.offset(first));
    case Path::copy: return copy_ + segments_.offset(first);
    case Path::packed:
    case Path::device: break;
    }
    if (!staging_.can_claim(count)) return nullptr;
    if (staging_.next() != first) {
        schedule_.fail_call(ADAPT2_STATUS_INTERNAL_ERROR,
                            "broadcast staging out of step: "
                            "receiving segment %d, next free slot for %d",
                            first, staging_.next());
        return nullptr;
    }
    return staging_.claim(1 + children(), count);  // landed()'s hold + one send per child
}

// The user's buffer gets segments [first, end), which have landed.
void BcastFlow::landed(int first, int end) {
    switch (path_) {
    case Path::user: return;
    case Path::copy:
        for (int s = first; s < end; ++s) copy_out(s);
        return;
    case Path::packed: {
        const size_t off = segments_.offset(first), len = segments_.span_bytes(first, end);
        int rc = data_.write(off, len, staging_.slot(first));
        if (rc != 0) schedule_.fail_conversion(rc, "unpacking from a staging buffer", off, len);
        for (int s = first; s < end; ++s) staging_.release(s);
        return;
    }
    case Path::device:  // each slot is released when its copy is done (on_copied)
        for (int s = first; s < end; ++s) {
            schedule_.post_copy(data_.at(segments_.offset(s)), staging_.slot(s),
                                schedule_.take_copy(id_, s, 0, segments_.bytes(s)));
        }
        return;
    }
}

void BcastFlow::on_sent(int child, int message) {
    sent_[child].mark_done(message);
    ++sends_done_;
    if (watch_ && sends_done_ == sends_total_) schedule_.grace_not_needed();  // nobody was late
    const int g = group_[child];
    if (!staged()) {
        feed(child);
        return;
    }
    release_sent(message * g, end_of(message, g));  // a freed slot may unblock anyone
    copy_from_device();
    post_receives();
    feed_all();
}

// A send of segments [first, end) is done: their slots lose that hold.
void BcastFlow::release_sent(int first, int end) {
    for (int s = first; s < end; ++s) staging_.release(s);
}

void BcastFlow::post_receives() {
    const int nmsg = messages(in_group_);
    while (!schedule_.failed() && next_recv_ < nmsg && next_recv_ < arrived_.prefix() / in_group_ + recv_window_) {
        const int m = next_recv_, s = m * in_group_;
        char *dst = landing(s, end_of(m, in_group_) - s);
        if (!dst) break;
        ++next_recv_;
        const size_t bytes = message_bytes(m, in_group_);
        schedule_.post_recv(dst, parent_, segment_tag(tag_, tags_, m), schedule_.take_op(id_, Op::kRecv, m, 0, bytes));
    }
}

void BcastFlow::feed_all() {
    for (int c = 0; c < children(); ++c) feed(c);
}

void BcastFlow::feed(int child) {
    if (is_root() && source_[child] == undecided) return;
    const int g = group_[child];
    while (!schedule_.failed() && next_send_[child] < messages(g) &&
           end_of(next_send_[child], g) <= arrived_.prefix() &&
           next_send_[child] < sent_[child].prefix() + send_window_) {
        const int m = next_send_[child];
        const char *src = send_source(child, m, g);
        if (!src) break;
        ++next_send_[child];
        schedule_.post_send(src, children_[child], segment_tag(tag_, tags_, m),
                            schedule_.take_op(id_, Op::kSend, m, child, message_bytes(m, g)));
    }
}

// Where message m of `group` segments can be sent from, or null if it cannot
// be sent yet.
const char *BcastFlow::send_source(int child, int m, int group) {
    const int s = m * group;
    if (await_ && source_[child] == user) return data_.at(segments_.offset(s));  // awaiting root
    switch (path_) {
    case Path::user: return data_.at(segments_.offset(s));
    case Path::copy: return copy_ + segments_.offset(s);
    case Path::device: return staging_.slot(s);  // the root's device copies filled it (arrived_)
    case Path::packed: break;
    }
    while (staging_.next() < end_of(m, group)) {  // root: pack on first demand, in order
        const int n = staging_.next();
        if (!staging_.can_claim()) return nullptr;
        char *dst = staging_.claim(children());
        int rc = data_.read(segments_.offset(n), segments_.bytes(n), dst);
        if (rc != 0) {
            schedule_.fail_conversion(rc, "packing into a staging buffer", segments_.offset(n), segments_.bytes(n));
            return nullptr;
        }
    }
    return staging_.slot(s);
}

void BcastFlow::finish() {
    uncount_hellos(children());
    if (staged()) pool_.give_back(staging_.block_bytes(), staging_.buffers());
    if (copy_) copy_pool_->give_back_one(segments_.total(), copy_);
    count(Counter::segments_sent, static_cast<uint64_t>(sends_done_));
    if (!schedule_.failed()) count(Counter::bytes_sent, static_cast<uint64_t>(children()) * segments_.total());
}

}  // namespace adapt2
