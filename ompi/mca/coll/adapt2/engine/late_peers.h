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
    // A peer came late to a watched call (any thread: the grace's handler).
    void saw_late() { late_.store(true, std::memory_order_relaxed); }
    // A call that counts its peers' hellos started, and later heard them
    // all (or ended without: a failed call).
    void call_started() { unheard_.fetch_add(1, std::memory_order_relaxed); }
    void all_heard() { unheard_.fetch_sub(1, std::memory_order_relaxed); }

    // At a call's start (calls on a communicator start one at a time):
    // whether it copies at once. The call after a late peer does, and so
    // does every call while some peer's hello of an earlier call is missing
    // (after `progress` handled any that are in), until kCalmCalls calls in
    // a row found none missing.
    template <typename Progress>
    bool copy_now(Progress progress) {
        if (late_.exchange(false, std::memory_order_relaxed)) {
            copying_ = true;
            return true;
        }
        if (!copying_) return false;
        if (behind()) progress();
        calm_ = behind() ? 0 : calm_ + 1;
        if (calm_ < kCalmCalls) return true;
        copying_ = false;
        calm_ = 0;
        return false;
    }

private:
    static constexpr int kCalmCalls = 8;
    bool behind() const { return unheard_.load(std::memory_order_relaxed) > 0; }

    std::atomic<bool> late_{false};
    std::atomic<int> unheard_{0};  // this rank's calls still missing a hello
    bool copying_ = false;         // these two: only the thread starting calls
    int calm_ = 0;
};

}  // namespace adapt2

#endif
