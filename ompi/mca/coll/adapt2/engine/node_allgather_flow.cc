// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
#include "node_allgather_flow.h"

#include "counters.h"
#include "schedule.h"

namespace adapt2 {

NodeAllgatherFlow::NodeAllgatherFlow(Schedule &schedule, int id, const NodeAllgatherArgs &a, BufferPool &pool)
    : Flow(schedule, id),
      rank_(a.rank),
      tag_(a.tag),
      node_(a.order->node_of[a.rank]),
      block_(a.block_bytes),
      order_(*a.order),
      own_(a.own),
      result_(a.result),
      pool_(pool),
      whole_down_(a.whole_down) {
    const size_t bytes = block_ * order_.rank_at.size();
    if (order_.identity && UserData(result_).contiguous()) {
        work_ = result_.contig;
    } else if (bytes > 0) {
        work_ = pool_.borrow_one(bytes);
        borrowed_ = true;
    }
}

// Leader: its node's blocks, the other bundles, its bundle to each other
// leader, every bundle to each of its node's ranks; others: their block up,
// every bundle down.
int NodeAllgatherFlow::max_ops() const {
    const int nodes = order_.nodes(), downs = whole_down_ ? 1 : nodes;
    if (!leader()) return 1 + downs;
    return locals() + 2 * (nodes - 1) + downs * locals();
}

char *NodeAllgatherFlow::block_at(int position) const {
    return work_ ? work_ + block_ * static_cast<size_t>(position) : nullptr;
}

size_t NodeAllgatherFlow::bundle_bytes(int node) const { return block_ * static_cast<size_t>(order_.ranks_on(node)); }

void NodeAllgatherFlow::start() {
    // This rank's block at its position in node order.
    const int rc = copy_into_work({own_.user, own_.from, 0, block_}, block_at(order_.position[rank_]));
    if (rc != 0) schedule_.fail_conversion(rc, "packing this rank's block", own_.from, block_);
    if (leader()) {
        start_leader();
    } else {
        start_member();
    }
}

// Every receive at once (each has its own place and tag); then the own
// bundle, if this node has no other rank.
void NodeAllgatherFlow::start_leader() {
    for (int i = 1; i <= locals() && !schedule_.failed(); ++i) {
        const int at = order_.first[node_] + i;
        schedule_.post_recv(block_at(at), order_.rank_at[at], tag_,
                            schedule_.take_op(id_, Op::kRecv, at, kBlockUp, block_));
    }
    for (int node = 0; node < order_.nodes() && !schedule_.failed(); ++node) {
        if (node == node_) continue;
        schedule_.post_recv(bundle_at(node), order_.leader(node), tag_ - 1 - node,
                            schedule_.take_op(id_, Op::kRecv, node, kAcross, bundle_bytes(node)));
    }
    if (locals() == 0 && !schedule_.failed()) bundle_here(node_);
}

// A node's bundle goes down with the bundle's own tag (it may overwrite
// this rank's block with the same bytes: the leader sends it only after
// this rank's block has reached it).
void NodeAllgatherFlow::start_member() {
    const int leader_rank = order_.leader(node_);
    if (whole_down_) {
        schedule_.post_recv(work_, leader_rank, tag_ - 1,
                            schedule_.take_op(id_, Op::kRecv, -1, kDown, block_ * order_.rank_at.size()));
    }
    for (int node = 0; node < order_.nodes() && !whole_down_ && !schedule_.failed(); ++node) {
        schedule_.post_recv(bundle_at(node), leader_rank, tag_ - 1 - node,
                            schedule_.take_op(id_, Op::kRecv, node, kDown, bundle_bytes(node)));
    }
    if (schedule_.failed()) return;
    schedule_.post_send(block_at(order_.position[rank_]), leader_rank, tag_,
                        schedule_.take_op(id_, Op::kSend, 0, kBlockUp, block_));
    ++messages_sent_, bytes_sent_ += block_;
}

// A leader has `node`'s whole bundle: its own goes to the other leaders
// first (the slow links), then each goes to the user and down to the node.
void NodeAllgatherFlow::bundle_here(int node) {
    ++bundles_here_;
    if (node == node_) send_across();
    if (!whole_down_) {
        send_down(node);
    } else if (bundles_here_ == order_.nodes()) {
        send_whole_down();
    }
    deliver(node);
}

void NodeAllgatherFlow::send_across() {
    const int nodes = order_.nodes();
    for (int i = 1; i < nodes && !schedule_.failed(); ++i) {
        const int to = order_.leader((node_ + i) % nodes);
        schedule_.post_send(bundle_at(node_), to, tag_ - 1 - node_,
                            schedule_.take_op(id_, Op::kSend, node_, kAcross, bundle_bytes(node_)));
        ++messages_sent_, bytes_sent_ += bundle_bytes(node_);
    }
}

void NodeAllgatherFlow::send_down(int node) {
    for (int i = 1; i <= locals() && !schedule_.failed(); ++i) {
        const int to = order_.rank_at[order_.first[node_] + i];
        schedule_.post_send(bundle_at(node), to, tag_ - 1 - node,
                            schedule_.take_op(id_, Op::kSend, node, kDown, bundle_bytes(node)));
        ++messages_sent_, bytes_sent_ += bundle_bytes(node);
    }
}

void NodeAllgatherFlow::send_whole_down() {
    const size_t bytes = block_ * order_.rank_at.size();
    for (int i = 1; i <= locals() && !schedule_.failed(); ++i) {
        const int to = order_.rank_at[order_.first[node_] + i];
        schedule_.post_send(work_, to, tag_ - 1, schedule_.take_op(id_, Op::kSend, -1, kDown, bytes));
        ++messages_sent_, bytes_sent_ += bytes;
    }
}

// The bundle's blocks to their ranks' places in the user's buffer, in runs
// of consecutive ranks (one run with block placement).
void NodeAllgatherFlow::deliver(int node) {
    if (!borrowed_) return;
    int at = order_.first[node];
    const int end = order_.first[node + 1];
    while (at < end && !schedule_.failed()) {
        int run = 1;
        while (at + run < end && order_.rank_at[at + run] == order_.rank_at[at] + run) ++run;
        const size_t to = block_ * static_cast<size_t>(order_.rank_at[at]), bytes = block_ * static_cast<size_t>(run);
        const int rc = UserData(result_).write(to, bytes, block_at(at));
        if (rc != 0) schedule_.fail_conversion(rc, "unpacking the allgather's result", to, bytes);
        at += run;
    }
}

void NodeAllgatherFlow::on_complete(Op &op) {
    const Op::Kind kind = op.kind;
    const int what = op.peer_index, index = op.segment;
    schedule_.return_op(&op);
    if (kind != Op::kRecv || schedule_.failed()) return;
    if (what == kDown && index < 0) {  // the whole result
        for (int node = 0; node < order_.nodes(); ++node) ++bundles_here_, deliver(node);
    } else if (what == kDown) {
        ++bundles_here_;
        deliver(index);
    } else if (what == kAcross) {
        bundle_here(index);
    } else if (++blocks_up_ == locals()) {
        bundle_here(node_);
    }
}

void NodeAllgatherFlow::finish() {
    if (borrowed_) pool_.give_back_one(block_ * order_.rank_at.size(), work_);
    if (!schedule_.failed()) {
        count(Counter::segments_sent, static_cast<uint64_t>(messages_sent_));
        count(Counter::bytes_sent, bytes_sent_);
    }
}

}  // namespace adapt2
