// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Decoupled ("detached") completion: which calls may complete before their
// sends are over, and the tag blocks that makes them need.
//
// A detaching rank copies whatever it still has to send into a private buffer
// from the communicator's detach pool and completes; the copy goes out in the
// background. So that the background needs no progress on the detached rank
// to get its data out, its sends are all posted at once (up to the window
// maximum), not a send window at a time: a flow of a call that may detach
// uses one tag per segment. Every rank computes the same from the message
// size and the settings, which are equal on all ranks.
#ifndef ADAPT2_ENGINE_DETACH_H
#define ADAPT2_ENGINE_DETACH_H

#include <algorithm>
#include <cstring>
#include <vector>

#include "../adapt2_bridge.h"
#include "buffer_pool.h"
#include "comm.h"
#include "completion_window.h"
#include "counters.h"
#include "segments.h"
#include "tree_flow.h"
#include "user_data.h"

namespace adapt2 {

// Not below detach_min_message (the latency path): eager sends complete at
// once anyway, so detaching would gain nothing, and the hellos would cost a
// message per edge.
inline bool may_detach(const adapt2_tree_settings_t &s, size_t bytes) {
    return bytes > 0 && bytes > s.detach_min_message && bytes <= s.detach_max_message;
}

// Hello messages: in a call that may detach, a rank tells the peer that may
// detach from it that it has entered the call (a broadcast's children their
// parent, a reduction's parents their children), with one extra tag after
// the flow's segment tags. A blocking call's rank copies only for peers that
// have not said hello within the grace period (coll_adapt2_detach_grace_us):
// without noise nobody is late and nothing is copied. Hello ops are taken
// with Schedule::take_hello (Op::kHello); traces show them as this segment.
constexpr int kHelloTraceSegment = -1;

// Tags of one flow: one per segment a sender may have in flight to a peer.
inline int flow_tags(const adapt2_tree_settings_t &s, const Segments &segments, size_t bytes) {
    int window = std::clamp(s.send_window, 1, CompletionWindow::kMax);
    if (may_detach(s, bytes)) window = std::max(window, std::min(segments.count(), CompletionWindow::kMax));
    return window;
}

// Tags of a call of one such flow: its segment tags, then the hello tag.
inline int call_tags(const adapt2_tree_settings_t &s, const Segments &segments, size_t bytes) {
    return flow_tags(s, segments, bytes) + (may_detach(s, bytes) ? 1 : 0);
}

// A private copy of `bytes` for a detaching rank, or null when the pool's
// cap is reached (the call then runs coupled, as if detaching were off). A
// blocking call first waits for room: for the oldest detached calls to
// finish, which keeps it a bounded number of calls ahead of its slowest peer
// instead of falling back into lock-step.
inline char *borrow_detach_copy(Comm &comm, const adapt2_tree_settings_t &s, size_t bytes) {
    BufferPool &pool = comm.detach_pool();
    if (s.blocking) comm.wait_for_detach_room(bytes);
    char *copy = pool.borrow_within_cap(bytes);
    if (!copy) count(Counter::detach_refused, 1);
    return copy;  // the flows count the bytes they really copy
}

// A blocking rank that would copy at once (below await_min_bytes: a
// broadcast root, a reduce leaf of the root) watches from watch_min_bytes
// (late_peers.h): sets `args`'s record of late peers, and whether it
// watches this call (then it borrows no copy).
inline bool watches(Comm &comm, const adapt2_tree_settings_t &s, size_t bytes, TreeArgs *args) {
    if (bytes < s.watch_min_bytes || bytes >= s.await_min_bytes) return false;
    args->late = &comm.late_peers();
    args->watch = !comm.copies_for_late_peers();
    return args->watch;
}

// Copies bytes [off, off + len) of the caller's packed stream into a
// detaching rank's private copy (at the same offset). The caller counts the
// bytes once the whole copy is made (counters move once per call).
inline int copy_into_private(const UserData &user, size_t off, size_t len, char *copy) {
    return user.read(off, len, copy + off);
}

}  // namespace adapt2

#endif
