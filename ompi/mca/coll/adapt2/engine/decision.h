// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Picks the tree and segment size of a call from the user's settings, the
// message size and the communicator size. Everything it reads is equal on all
// ranks of a call, so every rank picks the same plan without talking.
#ifndef ADAPT2_ENGINE_DECISION_H
#define ADAPT2_ENGINE_DECISION_H

#include <cstddef>
#include <cstdint>
#include <string>

#include "../adapt2_bridge.h"
#include "topology.h"
#include "tree.h"
#include "tree_cache.h"

namespace adapt2 {

struct BcastPlan {
    TreeSpec tree;
    size_t segment_bytes;
    bool multi_level = false;  // the tree of `levels` (topology.h) instead of `tree`
    LevelSpecs levels{};
    // Multi-level: bytes per message on the edges of each level (TreeLevel);
    // segment_bytes is the smallest, the others whole multiples of it.
    size_t level_bytes[kLevels] = {0, 0, 0};
    const char *rule = "";  // which rule chose it (coll_adapt2_verbose 20)
};

// Two trees (TreeShape::two_tree) on a flat plan, or between the node
// leaders or inside the nodes of a multi-level one: the message's two halves
// go down (or up) the two trees, at each level that has them (half_tree);
// so that a rank inside a node forwards about one copy there too.
inline bool two_tree_split(const BcastPlan &plan) {
    if (!plan.multi_level) return plan.tree.shape == TreeShape::two_tree;
    return plan.levels.node.shape == TreeShape::two_tree || plan.levels.core.shape == TreeShape::two_tree;
}

// The plan in words, for coll_adapt2_verbose 20: "knomial:8, 262144-byte
// segments" or "multi-level (nodes pipeline, NUMA flat, cores knomial:8), ...".
std::string describe(const BcastPlan &plan);
// One verbose line of a call's plan: "(cid 3) bcast of 1048576 bytes, root 0:
// knomial:8, one message; detach (rule: ...)". root < 0: none.
std::string plan_line(uint32_t cid, const char *collective, size_t bytes, int root, const std::string &plan,
                      const char *rule);

// Segments per message on the edges of each level of the plan's tree, for a
// message cut into `segment_count` segments of plan.segment_bytes: 1 for
// single-level plans.
void level_groups(const BcastPlan &plan, int segment_count, int groups[kLevels]);

// Multi-level plans apply where settings.topology says the communicator
// spans nodes or NUMA domains (the C layer knows, from the engine's
// topology); `core` is the flat plan's tree, used inside each NUMA domain.
BcastPlan multi_level_plan(const adapt2_tree_settings_t &settings, TreeSpec core, size_t bytes, int nodes);

// The plan's tree, from the communicator's cache.
inline std::shared_ptr<const Tree> planned_tree(TreeCache &trees, const BcastPlan &plan, int root) {
    return plan.multi_level ? trees.get_levels(plan.levels, root) : trees.get(plan.tree, root);
}

// `nodes`: how many nodes the communicator spans (multi-level plans).
BcastPlan plan_bcast(const adapt2_bcast_settings_t &settings, size_t bytes, int comm_size, int nodes = 1);

// Reduce (and the tree allreduce): a non-commutative op always takes the
// in-order binomial tree (its subtrees are contiguous, so combining by rank
// gives the serial order), whatever shape was asked for. `spread_ranks`:
// MPI_Reduce passes the communicator's size (on more than 4 ranks auto
// spreads the combining over a binary tree); the tree allreduce passes 0
// (its flat reduce measured faster; docs/design.md).
BcastPlan plan_reduce(const adapt2_tree_settings_t &settings, size_t bytes, bool commutative, int nodes = 1,
                      int spread_ranks = 0);

// Allreduce: the ring needs a commutative op; the fused tree and recursive
// doubling take every op. Nothing a rank alone knows (its buffers' layout or
// memory) may enter: every rank must pick the same algorithm, and ranks may
// describe the same data with different datatypes (non-contiguous buffers
// are staged through the pool).
// `rule` (optional) receives which rule chose it. `nodes_in_blocks`: across
// nodes, each node's ranks are consecutive (CallShape).
adapt2_allreduce_algorithm_t choose_allreduce(const adapt2_allreduce_settings_t &settings, size_t bytes, int comm_size,
                                              bool commutative, const char **rule = nullptr,
                                              bool nodes_in_blocks = true);

// The tree a forced algorithm stands for (algorithm must not be AUTO).
TreeSpec tree_for_algorithm(int algorithm, const adapt2_bcast_settings_t &settings);

}  // namespace adapt2

#endif
