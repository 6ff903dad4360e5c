// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Allgather across nodes: each slow link carries every other node's data
// once, in one message per node, and no rank waits for a phase to end.
//
// Every rank sends its block to its node's leader (the node's lowest rank).
// Once a leader has its node's blocks (its node's "bundle"), it sends the
// bundle to every other leader, starting with the next one, so leaders do
// not all send to the same one first. Each bundle a leader has (its own
// once complete, each other as it lands) goes at once to the other ranks of
// its node. Three steps whatever the number of nodes (up, across, down), and
// each node's link carries its bundle nodes - 1 times out and the other
// bundles once in, as much as a ring of leaders and no forwarding delay.
// A rank waits only for the blocks it lacks: a slow node delays only its
// own bundle. Small results go down in one message once complete instead
// (`whole_down`): there, each message's cost outweighs what arrives early.
//
// The working buffer holds the p blocks in node order (topology.h: one
// node's blocks are one run). Where that order is the identity and the
// receive buffer is contiguous host memory, the working buffer is the
// receive buffer; else it comes from the pool and each bundle goes to the
// user's buffer as soon as it is here.
#ifndef ADAPT2_ENGINE_NODE_ALLGATHER_FLOW_H
#define ADAPT2_ENGINE_NODE_ALLGATHER_FLOW_H

#include "buffer_pool.h"
#include "flow.h"
#include "topology.h"
#include "user_data.h"

namespace adapt2 {

struct NodeAllgatherArgs {
    int rank = 0;
    int tag = 0;  // first of tags_needed(nodes) tags, counting down
    size_t block_bytes = 0;
    const NodeOrder *order = nullptr;  // the communicator's (outlives the call)
    UserRange own;                     // this rank's block: `from` in `user`; `to` unused
    adapt2_buffer_t result{};          // the user's receive buffer: p blocks, block r from rank r
    bool whole_down = false;           // leaders send their ranks the whole result at once
};

class NodeAllgatherFlow final : public Flow {
public:
    // One tag for the blocks sent to leaders, then one per bundle (between
    // leaders, and from a leader to its ranks).
    static int tags_needed(int nodes) { return 1 + nodes; }

    NodeAllgatherFlow(Schedule &schedule, int id, const NodeAllgatherArgs &args, BufferPool &pool);

    int max_ops() const override;
    void start() override;
    void on_complete(Op &op) override;
    bool has_pending_work() const override { return bundles_here_ < order_.nodes(); }
    void finish() override;

private:
    // What an operation carries (its peer_index); its segment is the
    // bundle (kAcross, kDown) or the block's position (kBlockUp).
    enum Message : int { kBlockUp, kAcross, kDown };

    bool leader() const { return order_.leader(node_) == rank_; }
    int locals() const { return order_.ranks_on(node_) - 1; }  // the node's other ranks
    char *block_at(int position) const;                        // in the working buffer (node order)
    char *bundle_at(int node) const { return block_at(order_.first[node]); }
    size_t bundle_bytes(int node) const;
    void start_leader();
    void start_member();
    void bundle_here(int node);
    void send_across();
    void send_down(int node);
    void send_whole_down();
    void deliver(int node);

    int rank_, tag_, node_;
    size_t block_;
    const NodeOrder &order_;
    UserRange own_;
    adapt2_buffer_t result_;
    BufferPool &pool_;
    char *work_ = nullptr;
    bool borrowed_ = false;  // work_ is from the pool (else the receive buffer)
    bool whole_down_;
    int blocks_up_ = 0;  // leader: blocks landed from its node's ranks
    int bundles_here_ = 0;
    int messages_sent_ = 0;
    uint64_t bytes_sent_ = 0;
};

}  // namespace adapt2

#endif
