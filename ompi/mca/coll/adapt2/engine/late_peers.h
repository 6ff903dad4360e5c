// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Whether a blocking broadcast root, or a reduce leaf of the root, copies
// its message at once or sends it from the user's buffer (docs/design.md,
// "Copy while peers are late").
//
// Below await_min_bytes such a rank used to copy at once in every call, so
// that it could return before late peers took the data. When nobody is late
// that copy, and the later start of its sends, cost 1.3-1.9x the time of
// sending from the user's buffer (np 4 and 8, 64-512 KiB). So the rank
// *watches*: it sends from the user's buffer and waits, as without
// detaching, and only a send still out at the end of the grace period to a
// peer that has not said hello (it came late) makes it copy at once from the
// next call on. It keeps copying while its peers lag behind it: until it
// has started kCalmCalls calls in a row with every peer's hello of its
// earlier calls in. Then it watches again. (A broadcast root's peers are its
// children, a reduce leaf's its parent, the root; one record per
// communicator serves both.)
//
// Rank-local: the peers send their hellos either way, so no other rank
// needs to know which way this one went.
#ifndef ADAPT2_ENGINE_LATE_PEERS_H
#define ADAPT2_ENGINE_LATE_PEERS_H

#include <atomic>

namespace adapt2 {

class LatePeers {
public:
    // A child came late to a watched call (any thread: the grace's handler).
    void saw_late() { late_.store(true, std::memory_order_relaxed); }
    // A call that counts its children's hellos started, and later heard
    // them all (or ended without: a failed call).
    void call_started() { unheard_.fetch_add(1, std::memory_order_relaxed); }
    void all_heard() { unheard_.fetch_sub(1, std::memory_order_relaxed); }

    // Whether a child came late since the last look: then copy from now on.
    bool take_late() {
        if (!late_.exchange(false, std::memory_order_relaxed)) return false;
        copying_ = true;
        return true;
    }
    bool copying() const { return copying_; }
    bool children_behind() const { return unheard_.load(std::memory_order_relaxed) > 0; }
    // At the start of a copying call: whether the children are all in step
    // (`in_step`) for the kCalmCalls-th call running; then watch again.
    bool caught_up(bool in_step) {
        calm_ = in_step ? calm_ + 1 : 0;
        if (calm_ < kCalmCalls) return false;
        copying_ = false;
        calm_ = 0;
        return true;
    }

private:
    std::atomic<bool> late_{false};
    static constexpr int kCalmCalls = 8;
    bool copying_ = false;  // these two: only the caller's thread (calls start one at a time)
    int calm_ = 0;
    std::atomic<int> unheard_{0};  // this root's calls still missing a hello
};

}  // namespace adapt2

#endif
