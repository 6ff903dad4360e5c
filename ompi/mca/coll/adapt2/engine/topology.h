// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Where the ranks of a communicator are (node, then NUMA domain), and the
// multi-level trees built from it.
//
// A multi-level tree crosses each slow link as few times as possible: one
// tree between node leaders, one between the NUMA-domain leaders of each
// node, one inside each domain. The root leads its node and its domain; the
// other leaders are the lowest ranks of theirs. The levels form one tree
// (one event graph): a leader serves its children of every level from the
// same segments, slowest level first, with no per-level synchronization.
#ifndef ADAPT2_ENGINE_TOPOLOGY_H
#define ADAPT2_ENGINE_TOPOLOGY_H

#include <vector>

#include "tree.h"

namespace adapt2 {

struct Topology {
    std::vector<int> node;  // per rank: node number (any ids; equal = same node)
    std::vector<int> numa;  // per rank: NUMA domain within its node (empty: one per node)

    int size() const { return static_cast<int>(node.size()); }
    bool empty() const { return node.empty(); }
    int nodes() const;
    // More than one node, or a node with more than one NUMA domain: a
    // multi-level tree differs from a flat one.
    bool multi_level() const;
    bool same_node(int a, int b) const { return node.empty() || node[a] == node[b]; }
    // Each node's ranks are consecutive (block placement; also: unknown).
    bool nodes_in_blocks() const;
};

// The levels of a multi-level tree, slowest first; Tree::edge_level() of a
// multi-level tree's edges.
enum TreeLevel : uint8_t { kNodeLevel = 0, kNumaLevel = 1, kCoreLevel = 2, kLevels = 3 };

// The shape of each level of a multi-level tree.
struct LevelSpecs {
    TreeSpec node;  // between node leaders
    TreeSpec numa;  // between the NUMA-domain leaders of one node
    TreeSpec core;  // between the ranks of one NUMA domain
    // Two trees inside nodes (core two_tree), the second half's tree: 1 takes
    // the second leader's lane (build_level_tree), 0 the nodes' own leaders.
    int lane = 0;

    bool operator==(const LevelSpecs &o) const {
        return node == o.node && numa == o.numa && core == o.core && lane == o.lane;
    }
};

// Builds the multi-level tree of `topo` rooted at `root`. A rank's children
// are listed node level first, then NUMA, then core: the largest subtrees
// behind the slowest links are served first.
//
// Lanes (levels.lane = 1, core two_tree, one NUMA domain per node): the
// tree of a message's second half enters every node but the root's at the
// rank before its leader (its second leader), which roots the node's tree 2
// (tree_shapes.cc), and the second leaders are linked between nodes by the
// node tree. The root's node keeps tree 1, whose leaf before the root (a
// leaf in both of its trees) takes the half on to the other nodes. So a
// node leader sends one half into its node and on to other nodes, its
// second leader the other, where one leader would send both: without
// single copy, the leader's sends were the broadcast's bottleneck.
Tree build_level_tree(const Topology &topo, const LevelSpecs &levels, int root);

// The ranks in node order: nodes in order of their lowest rank, each node's
// ranks ascending. A node's ranks sit at consecutive positions, so whatever
// one node holds is one run of positions (the multi-level allgather's node
// bundles). With block placement (nodes' ranks consecutive) the order is
// the identity.
struct NodeOrder {
    std::vector<int> rank_at;   // per position: the rank there
    std::vector<int> position;  // per rank: its position
    std::vector<int> node_of;   // per rank: its node's index in the order
    std::vector<int> first;     // per node index: its first position; first[nodes()] = size

    int nodes() const { return static_cast<int>(first.size()) - 1; }
    int ranks_on(int node) const { return first[node + 1] - first[node]; }
    int leader(int node) const { return rank_at[first[node]]; }  // the node's lowest rank
    bool identity = true;  // rank_at[i] == i (block placement: Topology::nodes_in_blocks)
};

// From `topo`, or (empty topology) one node of `size` ranks.
NodeOrder node_order(const Topology &topo, int size);

}  // namespace adapt2

#endif
