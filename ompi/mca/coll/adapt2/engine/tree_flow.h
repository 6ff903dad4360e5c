// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// What every tree flow shares (a broadcast down a tree, BcastFlow; a
// reduction up one, ReduceFlow): its place in the tree, its segments, its
// tag block and send window, and the detach protocol's state (a private
// copy, hello messages, awaiting a grace period; see detach.h). Each flow
// keeps only what its direction needs.
#ifndef ADAPT2_ENGINE_TREE_FLOW_H
#define ADAPT2_ENGINE_TREE_FLOW_H

#include <algorithm>
#include <memory>

#include "buffer_pool.h"
#include "completion_window.h"
#include "flow.h"
#include "late_peers.h"
#include "segments.h"
#include "tree.h"

namespace adapt2 {

// The arguments every tree flow takes; BcastArgs and ReduceArgs add theirs.
struct TreeArgs {
    int rank = 0;
    int tag = 0;  // first of tags_needed(send_window) tags, counting down
    size_t segment_bytes = 0;
    int recv_window = 4;   // 1..kMaxWindow: receives ahead (bcast), segments in progress (reduce)
    int send_window = 2;   // 1..kMaxWindow
    int tag_block = 0;     // tags of the flow if more than the send window (detach.h)
    char *copy = nullptr;  // detached: a private copy of the packed data, from copy_pool
    BufferPool *copy_pool = nullptr;
    bool hello = false;  // the call may detach: peers say hello (detach.h)
    int hello_tag = 0;
    bool await = false;  // with a copy at hand: copy only for peers late past the grace
    // A blocking call that copies only while its peers are late (a broadcast
    // root, a reduce leaf of the root; late_peers.h): `late` learns when the
    // peers' hellos are all in, and, watching (no copy: sending from the
    // user's buffer and waiting), whether one came late.
    LatePeers *late = nullptr;
    bool watch = false;
};

class TreeFlow : public Flow {
public:
    static constexpr int kMaxWindow = CompletionWindow::kMax;

    // Tags one flow uses (see Schedule): one per segment in a send window.
    static int tags_needed(int send_window) { return std::clamp(send_window, 1, kMaxWindow); }

protected:
    // `bytes` of data cut into segments of whole `unit`s.
    TreeFlow(Schedule &schedule, int id, const TreeArgs &args, std::shared_ptr<const Tree> tree, BufferPool &pool,
             size_t bytes, size_t unit)
        : Flow(schedule, id),
          tag_(args.tag),
          tags_(std::max(tags_needed(args.send_window), std::min(args.tag_block, kMaxWindow))),
          // A detached flow posts all its sends at once: its whole tag block.
          send_window_(args.copy ? tags_ : tags_needed(args.send_window)),
          tree_(std::move(tree)),
          children_(tree_->children(args.rank)),
          parent_(tree_->parent(args.rank)),
          segments_(bytes, args.segment_bytes, unit),
          pool_(pool),
          copy_(args.copy),
          copy_pool_(args.copy_pool),
          hello_(args.hello),
          hello_tag_(args.hello_tag),
          await_(args.await),
          late_(args.late),
          watch_(args.watch) {}

    // Watching, once this rank's sends are over only hellos may be left.
    bool only_hellos_left() const override { return watch_; }

    bool is_root() const { return parent_ < 0; }
    int children() const { return children_.size(); }
    bool child_of_root() const { return !is_root() && tree_->parent(parent_) < 0; }

    const int tag_;
    const int tags_;  // size of the tag block (>= send window)
    const int send_window_;
    const std::shared_ptr<const Tree> tree_;  // keeps children_ alive
    const RankSpan children_;
    const int parent_;
    const Segments segments_;
    BufferPool &pool_;
    char *const copy_;  // detached: the private copy
    BufferPool *const copy_pool_;
    int copied_ = 0;  // detached: segments copied in (or out)
    const bool hello_;
    const int hello_tag_;
    const bool await_;

    // Hellos this rank expects from `peers` peers, counted for late_ (if
    // set) from start() until all are in, or until finish() if some never
    // came (a failed call). heard_hello() says when the last one came.
    void count_hellos() {
        if (!late_) return;
        late_->call_started();
        counted_ = true;
    }
    bool heard_hello(int peers) {
        if (++hellos_heard_ != peers) return false;
        if (counted_) late_->all_heard();
        return true;
    }
    bool heard_all(int peers) const { return hellos_heard_ >= peers; }
    void uncount_hellos(int peers) {
        if (counted_ && hellos_heard_ < peers) late_->all_heard();
    }
    LatePeers *const late_;
    const bool watch_;  // no copy: serving from the user's buffer while peers are in step

private:
    int hellos_heard_ = 0;
    bool counted_ = false;
};

}  // namespace adapt2

#endif
