// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
#include "decision.h"

#include "plan_call.h"

#include <algorithm>
#include <cmath>

#include "allgather_plan.h"
#include "completion_window.h"
#include "segments.h"

namespace adapt2 {

namespace {
std::string tree_name(TreeSpec t) {
    std::string name(tree_shape_name(t.shape));
    if (t.param > 0) name += ":" + std::to_string(t.param);
    return name;
}
}  // namespace

std::string describe(const BcastPlan &plan) {
    std::string tree = plan.multi_level ? "multi-level (nodes " + tree_name(plan.levels.node) + ", NUMA " +
                                              tree_name(plan.levels.numa) + ", cores " + tree_name(plan.levels.core) +
                                              (plan.levels.lane ? ", a lane per half" : "") + ")"
                                        : tree_name(plan.tree);
    return tree + (plan.segment_bytes ? ", " + std::to_string(plan.segment_bytes) + "-byte segments" : ", one message");
}

std::string plan_line(uint32_t cid, const char *collective, size_t bytes, int root, const std::string &plan,
                      const char *rule) {
    std::string line = "(cid " + std::to_string(cid) + ") " + collective + " of " + std::to_string(bytes) + " bytes";
    if (root >= 0) line += ", root " + std::to_string(root);
    return line + ": " + plan + " (rule: " + rule + ")";
}

TreeSpec tree_for_algorithm(int algorithm, const adapt2_bcast_settings_t &s) {
    switch (algorithm) {
    case ADAPT2_ALG_IN_ORDER_BINOMIAL: return {TreeShape::in_order_binomial, 0};
    case ADAPT2_ALG_BINARY: return {TreeShape::binary, 0};
    case ADAPT2_ALG_KARY: return {TreeShape::kary, s.fanout};
    case ADAPT2_ALG_KNOMIAL: return {TreeShape::knomial, s.radix};
    case ADAPT2_ALG_CHAIN: return {TreeShape::chain, s.chains};
    case ADAPT2_ALG_PIPELINE: return {TreeShape::pipeline, 0};
    case ADAPT2_ALG_FLAT: return {TreeShape::flat, 0};
    case ADAPT2_ALG_TWO_TREE: return {TreeShape::two_tree, 0};
    case ADAPT2_ALG_BINOMIAL:
    default: return {TreeShape::binomial, 0};
    }
}

namespace {

// Per-level message sizes: topology_segment_size unless a level has its own;
// the message is cut at the smallest, the others rounded to multiples of it.
// Without segments (topology_segment_size 0) every level sends whole messages.
void plan_level_bytes(const adapt2_tree_settings_t &s, BcastPlan *plan) {
    const size_t base = s.topology_segment_size;
    size_t *level = plan->level_bytes;
    level[kNodeLevel] = base && s.node_segment_size ? s.node_segment_size : base;
    level[kNumaLevel] = base && s.numa_segment_size ? s.numa_segment_size : base;
    level[kCoreLevel] = base;
    plan->segment_bytes = *std::min_element(level, level + kLevels);
}

// The tree a parameter forces, or `auto_tree` for auto.
TreeSpec forced_or(int algorithm, const adapt2_tree_settings_t &s, TreeSpec auto_tree) {
    return algorithm != ADAPT2_ALG_AUTO ? tree_for_algorithm(algorithm, s) : auto_tree;
}

}  // namespace

namespace {

// Hops from the root node to the farthest one in `tree` over `nodes` nodes:
// a pipeline passes through every node, a chain through its share; the
// other trees are about log2-deep (the two trees: the root's edge, then an
// in-order binary tree).
int node_tree_depth(TreeSpec tree, int nodes) {
    if (tree.shape == TreeShape::pipeline) return nodes;
    if (tree.shape == TreeShape::chain && tree.param > 0) return (nodes + tree.param - 1) / tree.param;
    int depth = 0;
    for (int n = nodes; n > 0; n >>= 1) ++depth;
    return depth;
}

// A pipeline's segments. Each segment pays `cost` bytes' worth of latency
// and overhead per hop, and the last one leaves the root after all the
// others and then crosses the tree's depth: about (n / s + depth) x (s +
// cost) in all, least at s = sqrt(n x cost / depth) (the classic pipeline
// optimum). Rounded down to a power of two; at least 8 KiB (below, shared
// memory's eager copies cost more than the pipeline gains: the simulator,
// perf/sim/README.md); at most `most`.
size_t pipeline_segment(size_t bytes, size_t cost, int depth, size_t most) {
    constexpr size_t kLeast = size_t{8} << 10;
    if (cost == 0 || most == 0) return most;
    const double best = std::sqrt(static_cast<double>(bytes) * static_cast<double>(cost) / depth);
    size_t segment = kLeast;
    while (static_cast<double>(segment * 2) <= best) segment *= 2;
    return std::min(segment, most);
}

// Segments between node leaders: one message there costs node_message_cost.
size_t node_tree_segment(const adapt2_tree_settings_t &s, size_t bytes, TreeSpec tree, int nodes) {
    return pipeline_segment(bytes, s.node_message_cost, node_tree_depth(tree, nodes), s.topology_segment_size);
}

// Shared memory without single copy (adapt2_tree_settings_t.single_copy 0):
// a sender copies every message it sends itself, so the wide k-nomial root
// copies the whole message once per child in turn (in the simulator's
// default machine, 32 ranks a node: 10-12x the lower bound at 64 KiB-8 MiB,
// 6-7x at 8 ranks). From 64 KiB the two trees instead, in which every rank
// sends about one copy, in segments sized for their depth by
// core_message_cost: 1.1-1.4x the bound at 256 KiB-8 MiB on 4-32 ranks
// (perf/sim/README.md, "Shared memory without single copy").
constexpr size_t kCopyingTreesFrom = size_t{64} << 10;

bool copies_each_message(const adapt2_tree_settings_t &s, size_t bytes) {
    return !s.single_copy && bytes >= kCopyingTreesFrom;
}

size_t copying_tree_segment(const adapt2_tree_settings_t &s, size_t bytes, int ranks, size_t most) {
    return pipeline_segment(bytes, s.core_message_cost, node_tree_depth({TreeShape::two_tree, 0}, ranks), most);
}

// A multi-level plan whose core level `auto` made two trees without single
// copy: inside the nodes, the two trees' own segments (their depth there:
// the ranks of a node, about comm_size / nodes), where smaller.
void size_copying_core(const adapt2_tree_settings_t &s, size_t bytes, int comm_size, int nodes, BcastPlan *plan) {
    if (s.algorithm != ADAPT2_ALG_AUTO || plan->segment_bytes == 0) return;
    size_t &core = plan->level_bytes[kCoreLevel];
    core = copying_tree_segment(s, bytes, (comm_size + nodes - 1) / nodes, core);
    plan->segment_bytes = std::min(plan->segment_bytes, core);
}

}  // namespace

// Default rule, measured with perf/compare.py on one host (docs/design.md, "Choosing
// the defaults"): a wide k-nomial tree (radix coll_adapt2_bcast_radix, 8 by
// default, i.e. flat up to 8 ranks). In shared memory every child then pulls
// its data from the parent's buffer in parallel (single-copy CMA) instead of
// waiting for a store-and-forward level, for small and large messages alike.
// Segments of coll_adapt2_bcast_segment_size pipeline deeper trees; a flat
// tree (comm_size <= radix) has no pipeline to fill, so segments would only
// add handshakes, and its messages go whole. Without single copy, from 64
// KiB, the two trees instead (copies_each_message, above), flat or inside
// the nodes of a multi-level plan.
BcastPlan plan_bcast(const adapt2_bcast_settings_t &s, size_t bytes, int comm_size, int nodes) {
    const bool copying = copies_each_message(s, bytes);
    const TreeSpec auto_tree{copying ? TreeShape::two_tree : TreeShape::knomial, copying ? 0 : s.radix};
    if (s.topology) {
        BcastPlan plan = multi_level_plan(s, forced_or(s.algorithm, s, auto_tree), bytes, nodes);
        if (copying) size_copying_core(s, bytes, comm_size, nodes, &plan);
        return plan;
    }
    BcastPlan plan{tree_for_algorithm(s.algorithm, s), s.segment_size};
    plan.rule = "bcast_algorithm forces the tree";
    if (s.algorithm != ADAPT2_ALG_AUTO) return plan;
    if (copying && comm_size > 2) {
        plan.tree = auto_tree;
        plan.segment_bytes = copying_tree_segment(s, bytes, comm_size, s.segment_size);
        plan.rule = "auto, shared memory without single copy, from 64 KiB: two trees of segments";
        return plan;
    }
    plan.tree = {TreeShape::knomial, s.radix};
    const bool flat = comm_size <= s.radix;
    plan.segment_bytes = flat ? 0 : s.segment_size;
    plan.rule = flat ? "auto: k-nomial, flat (ranks <= radix): one message" : "auto: k-nomial of segments";
    return plan;
}

// Between nodes, from 64 KiB: a pipeline, which sends each byte over each
// node's link once (measured on the emulated cluster, 4 nodes at 1 Gbit/s,
// docs/design.md: a binomial root's node sends it twice, 1.9-2.5x slower at
// 256 KiB-4 MiB), while its fill, one segment time per node, stays short
// against the message (nodes <= 2 x segments + 8, counted in
// topology_segment_size: the simulator's crossover, perf/sim/README.md);
// beyond, two trees (docs/design.md, "Two trees"), log-deep, in which every
// node leader still forwards about one copy (a binary tree: two). Segments,
// at every level, sized for the node tree's depth (node_tree_segment) unless
// node_segment_size is set: in the simulator, calibrated on this machine and
// on the emulated cluster, 1 MiB at 1.4-2.2x the lower bound at 64-65,536
// ranks, where a binary tree of 256 KiB segments took 4.3-8.3x. Below 64
// KiB a binomial tree, fewer slow hops deep. The NUMA leaders of a node all
// from their node leader, a wide k-nomial inside each domain, so that a
// node leader forwards the first segment inside its node and to the next
// node while later ones are still on their way.
BcastPlan multi_level_plan(const adapt2_tree_settings_t &s, TreeSpec core, size_t bytes, int nodes) {
    constexpr size_t kPipelineFrom = size_t{64} << 10;
    // Two trees inside nodes: each half crosses the nodes in a lane of its
    // own (topology.h, build_lane_tree) from 512 KiB, where the nodes' own
    // leaders' second copy costs more than the lanes' deeper start in the
    // root's node (simulator, no single copy, 64 and 1,024 ranks: lanes took
    // 1.07-1.33x the one-leader tree's time at 64-128 KiB, 0.98-1.08x at
    // 256 KiB, 0.97-1.01x at 512 KiB, 0.84-0.85x at 1 MiB and 0.70-0.77x
    // at 8 MiB; docs/measurements.md, "Lanes").
    constexpr size_t kLanesFrom = size_t{512} << 10;
    BcastPlan plan{core, s.topology_segment_size};
    plan.multi_level = true;
    plan.levels.lane = core.shape == TreeShape::two_tree && bytes >= kLanesFrom && nodes > 1 ? 1 : 0;
    plan_level_bytes(s, &plan);
    const int segments = Segments(bytes, plan.segment_bytes).count();
    const TreeSpec auto_node = bytes < kPipelineFrom       ? TreeSpec{TreeShape::binomial, 0}
                               : nodes <= 2 * segments + 8 ? TreeSpec{TreeShape::pipeline, 0}
                                                           : TreeSpec{TreeShape::two_tree, 0};
    plan.levels.node = forced_or(s.node_algorithm, s, auto_node);
    plan.levels.numa = forced_or(s.numa_algorithm, s, TreeSpec{TreeShape::flat, 0});
    plan.levels.core = core;
    plan.rule = s.node_algorithm != ADAPT2_ALG_AUTO ? "multi-level: node_algorithm forces the node tree"
                : bytes < kPipelineFrom             ? "multi-level, below 64 KiB: binomial between nodes"
                : auto_node.shape == TreeShape::pipeline
                    ? "multi-level, nodes <= 2 x segments + 8: pipeline between nodes"
                    : "multi-level, many nodes: two trees between nodes";
    if (nodes > 1 && bytes >= kPipelineFrom && s.node_segment_size == 0) {
        plan.segment_bytes = node_tree_segment(s, bytes, plan.levels.node, nodes);
        std::fill(plan.level_bytes, plan.level_bytes + kLevels, plan.segment_bytes);
    }
    return plan;
}

// Auto, measured with perf/ (docs/design.md, "Choosing the defaults"): below 1 MiB
// the wide k-nomial tree in one segment (flat up to `radix` ranks: every
// child's data goes straight to the root); from 1 MiB a binomial tree of
// segments, which spreads the combining over the ranks and pipelines it.
// An MPI_Reduce on more than 4 ranks takes a binary tree of segments from
// 512 B: a flat root that combines 7 whole messages alone took 1.2-2x the
// binary tree's time at np 8, 512 B-1 MiB (at np 4 they were even); below
// 512 B the flat tree's one message is 4x faster (docs/measurements.md).
BcastPlan plan_reduce(const adapt2_tree_settings_t &s, size_t bytes, bool commutative, int nodes, int spread_ranks) {
    constexpr size_t kSpreadFrom = 512;
    constexpr int kSpreadAbove = 4;
    BcastPlan plan{{TreeShape::in_order_binomial, 0}, s.segment_size};
    plan.rule = "non-commutative op: in-order binomial (combines in rank order)";
    if (!commutative) return plan;
    // Without single copy, an MPI_Reduce from 64 KiB on more than 2 ranks
    // takes the two trees as a broadcast does (plan_bcast): every rank
    // receives about one copy where a wide tree's root receives every
    // child's whole message in turn (simulator, machines without single
    // copy, 1 MiB at 64-16,384 ranks: 1.1-2.0x the bound against 1.8-11.2x;
    // docs/measurements.md, "Reduce without single copy").
    const bool copying = spread_ranks > 2 && copies_each_message(s, bytes);
    const TreeSpec auto_core = copying ? TreeSpec{TreeShape::two_tree, 0} : TreeSpec{TreeShape::knomial, s.radix};
    if (s.topology) {
        plan = multi_level_plan(s, forced_or(s.algorithm, s, auto_core), bytes, nodes);
        if (copying) size_copying_core(s, bytes, spread_ranks, nodes, &plan);
        return plan;
    }
    plan.tree = tree_for_algorithm(s.algorithm, s);
    plan.rule = "reduce_algorithm forces the tree";
    if (s.algorithm != ADAPT2_ALG_AUTO) return plan;
    if (copying) {
        plan.tree = auto_core;
        plan.segment_bytes = copying_tree_segment(s, bytes, spread_ranks, s.segment_size);
        plan.rule = "auto, reduce, shared memory without single copy, from 64 KiB: two trees of segments";
        return plan;
    }
    constexpr size_t kLarge = size_t{1} << 20;
    const bool large = bytes >= kLarge;
    if (!large && spread_ranks > kSpreadAbove && bytes >= kSpreadFrom) {
        plan.tree = {TreeShape::binary, 0};
        plan.rule = "auto, reduce on more than 4 ranks, 512 B to 1 MiB: binary tree of segments";
        return plan;
    }
    plan.tree = large ? TreeSpec{TreeShape::binomial, 0} : TreeSpec{TreeShape::knomial, s.radix};
    plan.segment_bytes = large ? s.segment_size : 0;
    plan.rule = large ? "auto, from 1 MiB: binomial of segments" : "auto, below 1 MiB: k-nomial, one message";
    return plan;
}

// Auto, measured (docs/design.md): the ring for the middle sizes, where its 2(p-1)
// steps of 1/p of the message beat the tree's full-size hops, the fused tree
// elsewhere; recursive doubling for small messages on 2, 4 or 8 ranks (its
// log2(p) exchanges against the tree's two hops; on 3 ranks the tree was
// faster), and on 2 ranks up to the ring.
adapt2_allreduce_algorithm_t choose_allreduce(const adapt2_allreduce_settings_t &s, size_t bytes, int comm_size,
                                              bool commutative, const char **rule, bool nodes_in_blocks) {
    const char *unused;
    const char *&why = rule ? *rule : unused;
    const bool can_ring = commutative && comm_size > 1;
    switch (s.algorithm) {
    case ADAPT2_ALLREDUCE_RING:
        why = can_ring ? "allreduce_algorithm forces the ring" : "ring forced, but it needs a commutative op: tree";
        return can_ring ? ADAPT2_ALLREDUCE_RING : ADAPT2_ALLREDUCE_TREE;
    case ADAPT2_ALLREDUCE_RECDOUBLING:
        why = "allreduce_algorithm forces recursive doubling";
        return ADAPT2_ALLREDUCE_RECDOUBLING;
    case ADAPT2_ALLREDUCE_RABENSEIFNER:
        why = "allreduce_algorithm forces Rabenseifner's";
        return ADAPT2_ALLREDUCE_RABENSEIFNER;
    case ADAPT2_ALLREDUCE_TREE: why = "allreduce_algorithm forces the tree"; return ADAPT2_ALLREDUCE_TREE;
    default: break;
    }
    // Across nodes placed in blocks, Rabenseifner's with the nearest partners
    // first keeps the large early halves inside nodes: about n(1 - 1/s)
    // bytes (s ranks per node) cross each node's link per direction and
    // phase, less than the ring's, in 2 log2(p) steps instead of 2(p-1).
    // Emulated cluster, 4 x 2 ranks, 1 Gbit/s (docs/measurements.md): 0.73-
    // 0.86x the ring's or tree's time at 256 KiB-2 MiB, even at 4 MiB, the
    // ring faster at 8 MiB; about tuned's own choice's time.
    why =
        "auto, across nodes placed in blocks, in [allreduce_rabenseifner_min_bytes, "
        "allreduce_rabenseifner_max_bytes): Rabenseifner's (nearest partners first)";
    const bool rabenseifner_sizes = bytes >= s.rabenseifner_min_bytes && bytes < s.rabenseifner_max_bytes;
    if (s.tree.topology && nodes_in_blocks && rabenseifner_sizes) return ADAPT2_ALLREDUCE_RABENSEIFNER;
    // Across nodes placed in blocks (each node's ranks consecutive) the ring
    // crosses each node's link once per direction and step: 2n(p-1)/p bytes
    // per link, the optimum, where the multi-level tree's node leaders carry
    // the whole message up and down. From blocks of one segment its 2(p-1)
    // steps are bandwidth-bound. Emulated cluster, 4 x 2 ranks, 1 Gbit/s:
    // 0.86-0.93x the tree's time at 512 KiB-16 MiB (docs/measurements.md).
    why = "auto, across nodes placed in blocks, blocks of at least one segment: the ring (segmented)";
    const size_t segment = s.tree.segment_size;
    if (s.tree.topology && can_ring && nodes_in_blocks && segment > 0 &&
        bytes / static_cast<size_t>(comm_size) >= segment) {
        return ADAPT2_ALLREDUCE_RING;
    }
    // Otherwise (round-robin placement: every ring step crosses a slow
    // link) the multi-level tree crosses each slow link once per segment.
    why = "auto, across nodes: the multi-level tree crosses each slow link once per segment";
    if (s.tree.topology) return ADAPT2_ALLREDUCE_TREE;
    why =
        "auto, below allreduce_recdoubling_max_bytes on a power of two ranks up to "
        "allreduce_recdoubling_max_ranks: recursive doubling";
    const bool power_of_two = comm_size > 1 && (comm_size & (comm_size - 1)) == 0;
    if (bytes < s.recdoubling_max_bytes && power_of_two && comm_size <= s.recdoubling_max_ranks) {
        return ADAPT2_ALLREDUCE_RECDOUBLING;
    }
    // Four ranks, blocking (the direct path): two exchanges of the whole
    // message, where the fused tree's root receives three and sends three in
    // turn, so the last rank has the result sooner. Measured on one host (np
    // 4, 512 B-4 KiB, docs/measurements.md, "Allreduce on 4 ranks"): the last
    // rank's time 0.55-0.91x the tree's in three runs, the mean over ranks
    // 0.75-1.16x; the tree faster at 8 KiB. Non-blocking calls (the
    // engine's flow) were no faster; on 8 ranks of the same 2-core machine
    // the tree stayed faster from 512 B. Not in reproducible mode, whose
    // blocking and non-blocking calls must agree bit for bit.
    why = "auto, blocking on 4 ranks below allreduce_recdoubling_few_ranks_max_bytes: recursive doubling";
    const bool few_ranks_size = bytes < s.recdoubling_few_ranks_max_bytes && s.recdoubling_max_bytes > 0;
    if (comm_size == 4 && s.tree.blocking && !s.reproducible && few_ranks_size) {
        return ADAPT2_ALLREDUCE_RECDOUBLING;
    }
    // Two ranks: one exchange, where the tree sends the message twice in
    // turn (measured 0.7-0.9x the tree's time at 512 B-512 KiB; docs/design.md).
    why = "auto, 2 ranks below allreduce_ring_min_bytes: recursive doubling (one exchange)";
    if (comm_size == 2 && bytes < s.ring_min_bytes && s.recdoubling_max_bytes > 0) return ADAPT2_ALLREDUCE_RECDOUBLING;
    // Rabenseifner's: each rank reduces and moves about 2n(p-1)/p bytes in
    // 2 log2(p) steps where the fused tree's root reduces every child's whole
    // message. Measured on one host (docs/measurements.md): on 4 ranks
    // 0.64-0.86x the tree's time at 128 KiB-1 MiB, on 8 ranks 0.72x at
    // 512 KiB, even at 256 KiB and 1.2x at 128 KiB (hence from 256 KiB); 6
    // and 7 ranks like 8; on 3 and 5 ranks the tree was faster (the pairing
    // step costs a whole message there).
    // On a power of two ranks from 8 it stays ahead of the ring in the ring's
    // sizes too, up to its maximum (2 log2(p) steps against 2(p - 1)): on 8
    // ranks at 1-2 MiB 0.82-0.94x the ring's mean time in three runs (last
    // rank 0.86-0.99x). On 4 ranks (4 steps against 6) two runs disagreed
    // (0.75-0.80x, then 0.92-1.16x), so 4 ranks keep the ring
    // (docs/measurements.md, "Rabenseifner's before the ring").
    why =
        "auto, one node of a power of two ranks (at least 8), in [allreduce_rabenseifner_min_bytes, "
        "allreduce_rabenseifner_max_bytes): Rabenseifner's";
    if (power_of_two && comm_size >= 8 && rabenseifner_sizes) return ADAPT2_ALLREDUCE_RABENSEIFNER;
    why = "auto, in [allreduce_ring_min_bytes, allreduce_ring_max_bytes): the ring";
    if (can_ring && bytes >= s.ring_min_bytes && bytes < s.ring_max_bytes) return ADAPT2_ALLREDUCE_RING;
    why =
        "auto, one node of 4 or at least 6 ranks, in [allreduce_rabenseifner_min_bytes, "
        "allreduce_rabenseifner_max_bytes) below the ring: Rabenseifner's";
    const bool rabenseifner_ranks = comm_size == 4 || comm_size >= 6;
    if (rabenseifner_ranks && rabenseifner_sizes) return ADAPT2_ALLREDUCE_RABENSEIFNER;
    why = "auto: the fused tree";
    return ADAPT2_ALLREDUCE_TREE;
}

// A level's messages hold whole segments, at most CompletionWindow::kMax
// (the receive window spans messages, the arrival window segments). Every
// group divides the largest, so one staging block holds any message whole
// (StagingRing): a group that does not is cut to the next divisor.
void level_groups(const BcastPlan &plan, int segment_count, int groups[kLevels]) {
    for (int l = 0; l < kLevels; ++l) {
        size_t g = 1;
        if (plan.multi_level && plan.segment_bytes > 0) g = plan.level_bytes[l] / plan.segment_bytes;
        groups[l] =
            static_cast<int>(std::clamp<size_t>(g, 1, std::max(1, std::min(segment_count, CompletionWindow::kMax))));
    }
    const int largest = *std::max_element(groups, groups + kLevels);
    for (int l = 0; l < kLevels; ++l) {
        while (largest % groups[l] != 0) --groups[l];
    }
}

// ---- each collective's part of plan_call -------------------------------

namespace {

// The most ranks the linear allgather serves: each rank has p - 1 messages in
// flight at once, which a node's few ranks absorb and many would not.
constexpr int kLinearMaxRanks = 8;

// Allgather of p blocks, `all_bytes` in all: forced, or auto: across nodes
// (multi-level trees on) the multi-level allgather, except from
// settings.multi_level_max_bytes with block placement, where the flat
// ring's pipeline measured faster (with other placements the ring crosses
// node links at every step); else Bruck's log2(p) exchanges below
// settings.bruck_max_bytes, or on one node of a power of two ranks below
// settings.direct_max_bytes where they run on the direct path (a blocking
// call: recursive doubling in the result buffer, no schedule), the ring
// from there. Bruck's rotated blocks (any other p) staged through scratch
// took 1.18-1.47x the ring's time from 64 KiB per rank at np 3 and 6, so
// those do not take them above settings.bruck_max_bytes. Against the
// engine's exchanges the ring took 0.84x their time at np 4 and 1.34x at np
// 8 (non-blocking, 4 KiB-1 MiB per rank), no clear winner; the linear
// exchange (below) beat both on one node of up to 8 ranks, so from
// settings.bruck_max_bytes the calls the direct path does not take go there,
// while each block is below settings.linear_max_bytes, and to the ring
// beyond.
adapt2_allgather_algorithm_t choose_allgather(const adapt2_call_settings_t &s, size_t all_bytes, const CallShape &shape,
                                              const char **rule) {
    const char *unused;
    const char *&why = rule ? *rule : unused;
    if (s.algorithm == ADAPT2_ALLGATHER_RING || s.algorithm == ADAPT2_ALLGATHER_BRUCK ||
        s.algorithm == ADAPT2_ALLGATHER_MULTI_LEVEL || s.algorithm == ADAPT2_ALLGATHER_LINEAR) {
        why = "allgather_algorithm forces it";
        return static_cast<adapt2_allgather_algorithm_t>(s.algorithm);
    }
    if (s.tree.topology && shape.nodes > 1) {
        if (!shape.nodes_in_blocks) {
            why = "auto, across nodes whose ranks are not consecutive: multi-level";
            return ADAPT2_ALLGATHER_MULTI_LEVEL;
        }
        if (all_bytes < s.multi_level_max_bytes) {
            why = "auto, across nodes and all blocks below allgather_multi_level_max_bytes: multi-level";
            return ADAPT2_ALLGATHER_MULTI_LEVEL;
        }
    }
    if (all_bytes < s.bruck_max_bytes) {
        why = "auto, all blocks below allgather_bruck_max_bytes: Bruck";
        return ADAPT2_ALLGATHER_BRUCK;
    }
    if (all_bytes < s.direct_max_bytes && shape.nodes <= 1 && !allgather_rotates(shape.size)) {
        why =
            "auto, blocking on one node of a power of two ranks, all blocks below allgather_direct_max_bytes: "
            "recursive doubling, direct";
        return ADAPT2_ALLGATHER_BRUCK;
    }
    // On one node of a few ranks every block may go to every rank at once: p - 1
    // messages per rank in flight, none waiting for another (the ring's p - 1
    // steps each wait for the one before). Non-blocking (docs/measurements.md,
    // "The linear allgather"): 0.56-0.99x the ring's time at 16-512 KiB per
    // rank at np 4 and 8 (two runs), 1.24x at 1 MiB at np 4, hence the bound
    // on the block.
    why = "auto, one node of at most 8 ranks, blocks below allgather_linear_max_bytes: linear";
    const size_t block = shape.size > 0 ? all_bytes / static_cast<size_t>(shape.size) : all_bytes;
    if (shape.nodes <= 1 && shape.size <= kLinearMaxRanks && block < s.linear_max_bytes) {
        return ADAPT2_ALLGATHER_LINEAR;
    }
    why = "auto, from allgather_bruck_max_bytes (and allgather_direct_max_bytes, allgather_linear_max_bytes): the ring";
    return ADAPT2_ALLGATHER_RING;
}

// Reduce_scatter_block of blocks of `block_bytes`: forced (the ring only for
// commutative ops), or auto: recursive halving for blocks below
// settings.halving_max_bytes or a non-commutative op, the ring from there
// (measured: halving is ahead up to 512 KiB blocks at np 4 and 8, the
// ring's pipeline from 1 MiB; docs/measurements.md).
adapt2_reduce_scatter_algorithm_t choose_reduce_scatter(const adapt2_call_settings_t &s, size_t block_bytes,
                                                        bool commutative, const char **rule) {
    const char *unused;
    const char *&why = rule ? *rule : unused;
    if (s.algorithm == ADAPT2_REDUCE_SCATTER_HALVING) {
        why = "reduce_scatter_block_algorithm forces recursive halving";
        return ADAPT2_REDUCE_SCATTER_HALVING;
    }
    if (!commutative) {
        why = "non-commutative op: recursive halving (combines in rank order; the ring cannot)";
        return ADAPT2_REDUCE_SCATTER_HALVING;
    }
    if (s.algorithm == ADAPT2_REDUCE_SCATTER_RING) {
        why = "reduce_scatter_block_algorithm forces the ring";
        return ADAPT2_REDUCE_SCATTER_RING;
    }
    const bool halving = block_bytes < s.halving_max_bytes;
    why = halving ? "auto, blocks below reduce_scatter_block_halving_max_bytes: recursive halving"
                  : "auto, blocks from reduce_scatter_block_halving_max_bytes: the ring";
    return halving ? ADAPT2_REDUCE_SCATTER_HALVING : ADAPT2_REDUCE_SCATTER_RING;
}

bool commutative(const adapt2_call_t &c) { return c.reduction.commutative != 0; }
}  // namespace

void plan_bcast_call(const adapt2_call_t &c, const CallShape &shape, CallPlan *p) {
    p->tree = plan_bcast(p->settings.tree, c.recv.bytes, shape.size, shape.nodes);
    // the two halves' flows do not detach (one hello protocol per call)
    if (two_tree_split(p->tree)) p->settings.tree.detach_max_message = 0;
}

void plan_reduce_call(const adapt2_call_t &c, const CallShape &shape, CallPlan *p) {
    p->tree = plan_reduce(p->settings.tree, own_data(c).bytes, commutative(c), shape.nodes, shape.size);
    // as a broadcast's (plan_bcast_call)
    if (two_tree_split(p->tree)) p->settings.tree.detach_max_message = 0;
}

void plan_allreduce_call(const adapt2_call_t &c, const CallShape &shape, CallPlan *p) {
    p->algorithm = choose_allreduce(p->settings, c.recv.bytes, shape.size, commutative(c), &p->algorithm_rule,
                                    shape.nodes_in_blocks);
    if (p->algorithm == ADAPT2_ALLREDUCE_TREE) {
        p->tree = plan_reduce(p->settings.tree, c.recv.bytes, commutative(c), shape.nodes);
    }
}

void plan_allgather_call(const adapt2_call_t &c, const CallShape &shape, CallPlan *p) {
    p->algorithm = choose_allgather(p->settings, c.recv.bytes, shape, &p->algorithm_rule);
    p->whole_down = c.recv.bytes < p->settings.pipeline_min_bytes;
}

void plan_reduce_scatter_block_call(const adapt2_call_t &c, const CallShape &shape, CallPlan *p) {
    const size_t block = own_data(c).bytes / static_cast<size_t>(shape.size > 0 ? shape.size : 1);
    p->algorithm = choose_reduce_scatter(p->settings, block, commutative(c), &p->algorithm_rule);
}

}  // namespace adapt2
