// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// The decision rules: what `auto` picks, and that forced choices are obeyed.
#include <cmath>
#include <cstring>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "allgather_plan.h"
#include "halving_plan.h"
#include "cmocka_cxx.h"
#include "decision.h"
#include "param_defaults.h"
#include "plan_call.h"
#include "rules.h"

using namespace adapt2;

namespace {

// A communicator of 4 ranks on one node.
const CallShape kShape{4, 1};

// The algorithm plan_call picks for an allgather of `all_bytes` (all p
// blocks together) with these settings, and (rule) the rule that did.
int allgather_plan(const adapt2_call_settings_t &s, size_t all_bytes, const char **rule = nullptr,
                   CallShape shape = kShape) {
    adapt2_call_t c{};
    c.collective = ADAPT2_COLL_ALLGATHER;
    c.settings = s;
    c.recv.bytes = all_bytes;
    const CallPlan p = plan_call(c, shape);
    if (rule) *rule = p.algorithm_rule;
    return p.algorithm;
}

// ... for a reduce_scatter_block of blocks of `block_bytes`.
int reduce_scatter_plan(const adapt2_call_settings_t &s, size_t block_bytes, bool commutative,
                        const char **rule = nullptr) {
    adapt2_call_t c{};
    c.collective = ADAPT2_COLL_REDUCE_SCATTER_BLOCK;
    c.settings = s;
    c.send.bytes = block_bytes * static_cast<size_t>(kShape.size);
    c.reduction.unit_bytes = 1;
    c.reduction.commutative = commutative;
    const CallPlan p = plan_call(c, kShape);
    if (rule) *rule = p.algorithm_rule;
    return p.algorithm;
}

}  // namespace

namespace {

// The component's defaults (params.def), bcast's segment size; no detaching,
// as the rules below were written for.
adapt2_bcast_settings_t defaults() {
    adapt2_bcast_settings_t s = adapt2::defaults::tree_settings(adapt2::defaults::bcast_segment_size);
    s.detach_max_message = 0;
    s.topology_segment_size = s.node_segment_size = s.numa_segment_size = 0;
    return s;
}

void test_auto_is_knomial_of_the_radix(void **) {
    auto s = defaults();
    for (size_t bytes : {size_t{1}, size_t{1} << 20, size_t{1} << 30}) {
        BcastPlan p = plan_bcast(s, bytes, 64);
        assert_true(p.tree.shape == TreeShape::knomial);
        assert_int_equal(p.tree.param, 8);
        assert_int_equal(p.segment_bytes, 1 << 20);  // deep tree: pipelined
    }
}

void test_auto_does_not_segment_a_flat_tree(void **) {
    auto s = defaults();
    for (int p : {2, 4, 8}) assert_int_equal(plan_bcast(s, 16 << 20, p).segment_bytes, 0);
    assert_int_equal(plan_bcast(s, 16 << 20, 9).segment_bytes, 1 << 20);
    s.radix = 2;
    assert_int_equal(plan_bcast(s, 16 << 20, 4).segment_bytes, 1 << 20);
}

// Shared memory without single copy (single_copy 0): from 64 KiB on more
// than 2 ranks the two trees, in segments of sqrt(bytes x core_message_cost /
// depth) (depth: the ranks' bit width), a power of two in [8 KiB, the
// collective's segment size]; below 64 KiB, on 2 ranks, with single copy or a
// forced tree, as before; multi-level plans take the two trees as their core
// tree.
void test_no_single_copy_takes_two_trees(void **) {
    auto s = defaults();
    s.single_copy = 0;
    s.core_message_cost = 2048;
    const TreeSpec two_tree{TreeShape::two_tree, 0}, knomial{TreeShape::knomial, 8};
    struct Case {
        size_t bytes;
        int ranks;
        TreeSpec tree;
        size_t segment;
    };
    const Case cases[] = {
        {(64 << 10) - 1, 8, knomial, 0},          // below 64 KiB: one message
        {64 << 10, 2, knomial, 0},                // one child either way
        {64 << 10, 3, two_tree, 8 << 10},         // depth 2: sqrt(64K x 2K / 2) = 8K
        {1 << 20, 8, two_tree, 16 << 10},         // depth 4: 22.6K
        {1 << 20, 32, two_tree, 16 << 10},        // depth 6: 18.5K
        {64 << 20, 8, two_tree, 128 << 10},       // 181K
        {16 << 20, 1024, two_tree, 32 << 10},     // depth 11: 54.6K
        {size_t{4} << 30, 8, two_tree, 1 << 20},  // 1.4M: at most bcast_segment_size
    };
    for (const Case &c : cases) {
        BcastPlan p = plan_bcast(s, c.bytes, c.ranks);
        if (!(p.tree == c.tree))
            fail_msg("%zu bytes on %d ranks: wrong tree %s", c.bytes, c.ranks, describe(p).c_str());
        if (p.segment_bytes != c.segment)
            fail_msg("%zu bytes on %d ranks: %zu-byte segments, want %zu", c.bytes, c.ranks, p.segment_bytes,
                     c.segment);
    }
    s.core_message_cost = 0;
    assert_int_equal(plan_bcast(s, 1 << 20, 8).segment_bytes, 1 << 20);
    s.core_message_cost = 2048;
    s.algorithm = ADAPT2_ALG_BINOMIAL;
    assert_true(plan_bcast(s, 1 << 20, 8).tree == (TreeSpec{TreeShape::binomial, 0}));
    s.algorithm = ADAPT2_ALG_AUTO;
    s.topology = 1;
    s.topology_segment_size = 256 << 10;
    BcastPlan ml = plan_bcast(s, 1 << 20, 16, 4);
    assert_true(ml.levels.core == two_tree);
    assert_true(two_tree_split(ml));                         // each half down its own tree inside the nodes
    assert_int_equal(ml.level_bytes[kNodeLevel], 64 << 10);  // the node pipeline's: sqrt(1M x 16K / 4)
    assert_int_equal(ml.level_bytes[kCoreLevel], 16 << 10);  // 4 ranks a node, depth 3: 26.7K
    assert_int_equal(ml.segment_bytes, 16 << 10);
    assert_true(plan_bcast(s, 32 << 10, 16, 4).levels.core == knomial);
    // each half in a lane of its own across nodes from 512 KiB (topology.h)
    assert_int_equal(ml.levels.lane, 1);
    assert_true(describe(ml).find("a lane per half") != std::string::npos);
    assert_int_equal(plan_bcast(s, 512 << 10, 16, 4).levels.lane, 1);
    assert_int_equal(plan_bcast(s, (512 << 10) - 1, 16, 4).levels.lane, 0);
    assert_int_equal(plan_bcast(s, 1 << 20, 16, 1).levels.lane, 0);  // one node (NUMA levels only)
    s.single_copy = 1;
    ml = plan_bcast(s, 1 << 20, 16, 4);
    assert_true(ml.levels.core == knomial);
    assert_int_equal(ml.levels.lane, 0);
    assert_false(two_tree_split(ml));
    assert_int_equal(ml.level_bytes[kCoreLevel], 64 << 10);
    s.topology = 0;
    assert_true(plan_bcast(s, 1 << 20, 8).tree == knomial);
}

// An MPI_Reduce without single copy takes the two trees from 64 KiB on more
// than 2 ranks, as a broadcast does; not the tree allreduce (spread 0), not a
// non-commutative op, not with single copy.
void test_reduce_without_single_copy(void **) {
    auto s = defaults();
    s.single_copy = 0;
    s.core_message_cost = 2048;
    const TreeSpec two_tree{TreeShape::two_tree, 0};
    BcastPlan p = plan_reduce(s, 1 << 20, true, 1, 8);
    assert_true(p.tree == two_tree);
    assert_int_equal(p.segment_bytes, 16 << 10);  // as the broadcast's: depth 4, 22.6K
    assert_true(two_tree_split(p));
    assert_false(plan_reduce(s, (64 << 10) - 1, true, 1, 8).tree == two_tree);
    assert_false(plan_reduce(s, 1 << 20, true, 1, 2).tree == two_tree);
    assert_false(plan_reduce(s, 1 << 20, true, 1, 0).tree == two_tree);  // the tree allreduce
    assert_true(plan_reduce(s, 1 << 20, false, 1, 8).tree == (TreeSpec{TreeShape::in_order_binomial, 0}));
    s.algorithm = ADAPT2_ALG_BINOMIAL;
    assert_true(plan_reduce(s, 1 << 20, true, 1, 8).tree == (TreeSpec{TreeShape::binomial, 0}));
    s.algorithm = ADAPT2_ALG_AUTO;
    s.topology = 1;
    s.topology_segment_size = 256 << 10;
    p = plan_reduce(s, 1 << 20, true, 4, 16);
    assert_true(p.levels.core == two_tree);
    assert_int_equal(p.levels.lane, 1);
    assert_int_equal(p.segment_bytes, 16 << 10);  // 4 ranks a node
    s.single_copy = 1;
    p = plan_reduce(s, 1 << 20, true, 4, 16);
    assert_true(p.levels.core == (TreeSpec{TreeShape::knomial, 8}));
    assert_false(two_tree_split(p));
}

void test_forced_algorithms_keep_their_settings(void **) {
    auto s = defaults();
    s.segment_size = 4096;
    const struct {
        int algorithm;
        TreeShape shape;
        int param;
    } cases[] = {
        {ADAPT2_ALG_BINOMIAL, TreeShape::binomial, 0}, {ADAPT2_ALG_IN_ORDER_BINOMIAL, TreeShape::in_order_binomial, 0},
        {ADAPT2_ALG_BINARY, TreeShape::binary, 0},     {ADAPT2_ALG_KARY, TreeShape::kary, 4},
        {ADAPT2_ALG_KNOMIAL, TreeShape::knomial, 8},   {ADAPT2_ALG_CHAIN, TreeShape::chain, 4},
        {ADAPT2_ALG_PIPELINE, TreeShape::pipeline, 0}, {ADAPT2_ALG_FLAT, TreeShape::flat, 0},
    };
    for (const auto &c : cases) {
        s.algorithm = c.algorithm;
        BcastPlan p = plan_bcast(s, 1 << 20, 4);  // even where auto would not segment
        assert_true(p.tree.shape == c.shape);
        assert_int_equal(p.tree.param, c.param);
        assert_int_equal(p.segment_bytes, 4096);
    }
}

void test_reduce_rules(void **) {
    auto s = defaults();
    s.segment_size = 65536;
    BcastPlan small = plan_reduce(s, (1 << 20) - 4, true);
    assert_true(small.tree.shape == TreeShape::knomial);
    assert_int_equal(small.segment_bytes, 0);
    BcastPlan large = plan_reduce(s, 1 << 20, true);
    assert_true(large.tree.shape == TreeShape::binomial);
    assert_int_equal(large.segment_bytes, 65536);
    // MPI_Reduce on more than 4 ranks: a binary tree of segments from 512 B
    // below 1 MiB; the flat tree below 512 B, on 4 ranks, and for allreduce's tree (0).
    BcastPlan spread = plan_reduce(s, 512, true, 1, 5);
    assert_true(spread.tree.shape == TreeShape::binary);
    assert_int_equal(spread.segment_bytes, 65536);
    assert_true(plan_reduce(s, (1 << 20) - 4, true, 1, 8).tree.shape == TreeShape::binary);
    assert_true(plan_reduce(s, 508, true, 1, 8).tree.shape == TreeShape::knomial);
    assert_true(plan_reduce(s, 4096, true, 1, 4).tree.shape == TreeShape::knomial);
    assert_true(plan_reduce(s, 4096, true, 1, 0).tree.shape == TreeShape::knomial);
    assert_true(plan_reduce(s, 1 << 20, true, 1, 8).tree.shape == TreeShape::binomial);
    // non-commutative: in-order, whatever was asked for
    s.algorithm = ADAPT2_ALG_FLAT;
    assert_true(plan_reduce(s, 1 << 20, false).tree.shape == TreeShape::in_order_binomial);
    assert_true(plan_reduce(s, 1 << 20, true).tree.shape == TreeShape::flat);
}

void test_allreduce_rules(void **) {
    adapt2_allreduce_settings_t s{};
    s.tree = defaults();
    s.algorithm = ADAPT2_ALLREDUCE_AUTO;
    s.ring_min_bytes = 256 << 10;
    s.ring_max_bytes = 8 << 20;
    s.recdoubling_max_bytes = 16 << 10;
    s.recdoubling_max_ranks = 4;
    s.rabenseifner_min_bytes = s.ring_min_bytes;  // off (tested below)
    // (no buffer layout: ranks may describe the same data with other datatypes)
    auto pick = [&](size_t bytes, bool commutative) { return choose_allreduce(s, bytes, 4, commutative); };
    // recursive doubling only on a power of two ranks up to the maximum
    assert_int_equal(choose_allreduce(s, 64, 2, true), ADAPT2_ALLREDUCE_RECDOUBLING);
    assert_int_equal(choose_allreduce(s, 64, 3, true), ADAPT2_ALLREDUCE_TREE);
    assert_int_equal(choose_allreduce(s, 64, 8, true), ADAPT2_ALLREDUCE_TREE);
    assert_int_equal(choose_allreduce(s, 64, 1, true), ADAPT2_ALLREDUCE_TREE);
    // two ranks: one exchange up to the ring's sizes, commutative or not
    assert_int_equal(choose_allreduce(s, (256 << 10) - 4, 2, false), ADAPT2_ALLREDUCE_RECDOUBLING);
    assert_int_equal(choose_allreduce(s, 256 << 10, 2, true), ADAPT2_ALLREDUCE_RING);
    assert_int_equal(choose_allreduce(s, 256 << 10, 2, false), ADAPT2_ALLREDUCE_TREE);
    s.recdoubling_max_bytes = 0;  // off, on two ranks too
    assert_int_equal(choose_allreduce(s, 64, 2, true), ADAPT2_ALLREDUCE_TREE);
    s.recdoubling_max_bytes = 16 << 10;
    s.recdoubling_max_ranks = 8;
    assert_int_equal(choose_allreduce(s, 64, 8, true), ADAPT2_ALLREDUCE_RECDOUBLING);
    assert_int_equal(choose_allreduce(s, 64, 6, true), ADAPT2_ALLREDUCE_TREE);
    // 4 ranks, blocking: recursive doubling up to its own maximum (not non-blocking, not on 8
    // ranks), off with the general one
    s.recdoubling_max_bytes = 512;
    s.recdoubling_few_ranks_max_bytes = 8 << 10;
    assert_int_equal(choose_allreduce(s, 4 << 10, 4, true), ADAPT2_ALLREDUCE_TREE);  // non-blocking
    s.tree.blocking = 1;
    s.reproducible = 1;  // blocking and non-blocking alike
    assert_int_equal(choose_allreduce(s, 4 << 10, 4, true), ADAPT2_ALLREDUCE_TREE);
    s.reproducible = 0;
    assert_int_equal(choose_allreduce(s, (8 << 10) - 4, 4, false), ADAPT2_ALLREDUCE_RECDOUBLING);
    assert_int_equal(choose_allreduce(s, 8 << 10, 4, true), ADAPT2_ALLREDUCE_TREE);
    assert_int_equal(choose_allreduce(s, 4 << 10, 8, true), ADAPT2_ALLREDUCE_TREE);
    assert_int_equal(choose_allreduce(s, 256, 8, true), ADAPT2_ALLREDUCE_RECDOUBLING);
    s.recdoubling_max_bytes = 0;
    assert_int_equal(choose_allreduce(s, 64, 4, true), ADAPT2_ALLREDUCE_TREE);
    s.recdoubling_few_ranks_max_bytes = 0;
    s.tree.blocking = 0;
    s.recdoubling_max_bytes = 16 << 10;
    s.recdoubling_max_ranks = 4;
    assert_int_equal(pick((16 << 10) - 4, true), ADAPT2_ALLREDUCE_RECDOUBLING);
    assert_int_equal(pick((16 << 10) - 4, false), ADAPT2_ALLREDUCE_RECDOUBLING);  // by rank order
    assert_int_equal(pick(16 << 10, true), ADAPT2_ALLREDUCE_TREE);
    assert_int_equal(pick(256 << 10, true), ADAPT2_ALLREDUCE_RING);
    assert_int_equal(pick(256 << 10, false), ADAPT2_ALLREDUCE_TREE);  // non-commutative: no ring
    assert_int_equal(pick(8 << 20, true), ADAPT2_ALLREDUCE_TREE);
    s.algorithm = ADAPT2_ALLREDUCE_RING;
    assert_int_equal(pick(4, true), ADAPT2_ALLREDUCE_RING);
    assert_int_equal(pick(4, false), ADAPT2_ALLREDUCE_TREE);
    s.algorithm = ADAPT2_ALLREDUCE_RECDOUBLING;
    assert_int_equal(pick(1 << 20, false), ADAPT2_ALLREDUCE_RECDOUBLING);
    assert_int_equal(pick(1 << 20, true), ADAPT2_ALLREDUCE_RECDOUBLING);
    s.algorithm = ADAPT2_ALLREDUCE_TREE;
    assert_int_equal(pick(4, true), ADAPT2_ALLREDUCE_TREE);
    s.algorithm = ADAPT2_ALLREDUCE_RABENSEIFNER;
    assert_int_equal(pick(4, false), ADAPT2_ALLREDUCE_RABENSEIFNER);  // any op: folded in rank order
    assert_int_equal(choose_allreduce(s, 8 << 20, 5, true), ADAPT2_ALLREDUCE_RABENSEIFNER);
    // auto: Rabenseifner's in its range, on a power of two ranks from 8
    // before the ring, on 4 or 6 or more others where the ring does not apply
    s.algorithm = ADAPT2_ALLREDUCE_AUTO;
    s.rabenseifner_min_bytes = 64 << 10, s.rabenseifner_max_bytes = 4 << 20;
    assert_int_equal(pick((64 << 10) - 4, true), ADAPT2_ALLREDUCE_TREE);
    assert_int_equal(pick(64 << 10, true), ADAPT2_ALLREDUCE_RABENSEIFNER);
    assert_int_equal(pick(64 << 10, false), ADAPT2_ALLREDUCE_RABENSEIFNER);
    assert_int_equal(pick((256 << 10) - 4, true), ADAPT2_ALLREDUCE_RABENSEIFNER);
    assert_int_equal(pick(256 << 10, true), ADAPT2_ALLREDUCE_RING);
    assert_int_equal(pick(256 << 10, false), ADAPT2_ALLREDUCE_RABENSEIFNER);  // no ring: rank order
    assert_int_equal(pick(4 << 20, false), ADAPT2_ALLREDUCE_TREE);
    for (int p : {8, 64}) {
        assert_int_equal(choose_allreduce(s, 1 << 20, p, true), ADAPT2_ALLREDUCE_RABENSEIFNER);
        assert_int_equal(choose_allreduce(s, (4 << 20) - 8, p, true), ADAPT2_ALLREDUCE_RABENSEIFNER);
        assert_int_equal(choose_allreduce(s, 4 << 20, p, true), ADAPT2_ALLREDUCE_RING);  // from its maximum
    }
    for (int p : {6, 7}) {
        assert_int_equal(choose_allreduce(s, (256 << 10) - 4, p, true), ADAPT2_ALLREDUCE_RABENSEIFNER);
        assert_int_equal(choose_allreduce(s, 256 << 10, p, true), ADAPT2_ALLREDUCE_RING);
        assert_int_equal(choose_allreduce(s, 256 << 10, p, false), ADAPT2_ALLREDUCE_RABENSEIFNER);
    }
    for (int p : {3, 5}) assert_int_equal(choose_allreduce(s, 64 << 10, p, true), ADAPT2_ALLREDUCE_TREE);
    for (int p : {6, 7, 8, 64}) assert_int_equal(choose_allreduce(s, 64 << 10, p, true), ADAPT2_ALLREDUCE_RABENSEIFNER);
    // across nodes placed in blocks, before the ring; not round-robin
    s.tree.topology = 1, s.tree.segment_size = 64 << 10;
    const char *across = nullptr;
    assert_int_equal(choose_allreduce(s, 64 << 10, 8, true, &across, true), ADAPT2_ALLREDUCE_RABENSEIFNER);
    assert_non_null(strstr(across, "nearest partners first"));
    assert_int_equal(choose_allreduce(s, 1 << 20, 5, false, nullptr, true), ADAPT2_ALLREDUCE_RABENSEIFNER);
    assert_int_equal(choose_allreduce(s, 4 << 20, 8, true, nullptr, true), ADAPT2_ALLREDUCE_RING);
    assert_int_equal(choose_allreduce(s, 1 << 20, 8, true, nullptr, false), ADAPT2_ALLREDUCE_TREE);
    s.tree.topology = 0, s.tree.segment_size = 0;
    s.rabenseifner_min_bytes = s.rabenseifner_max_bytes = 0;  // off
    // across nodes: the ring where nodes are in blocks and each rank's block
    // is at least a segment; the multi-level tree otherwise
    s.algorithm = ADAPT2_ALLREDUCE_AUTO;
    s.tree.topology = 1, s.tree.segment_size = 64 << 10;
    const char *why = nullptr;
    assert_int_equal(choose_allreduce(s, 8 * (64 << 10), 8, true, &why, true), ADAPT2_ALLREDUCE_RING);
    assert_non_null(strstr(why, "placed in blocks"));
    assert_int_equal(choose_allreduce(s, 64 << 20, 8, true, nullptr, true), ADAPT2_ALLREDUCE_RING);
    assert_int_equal(choose_allreduce(s, 8 * (64 << 10) - 8, 8, true, nullptr, true), ADAPT2_ALLREDUCE_TREE);
    assert_int_equal(choose_allreduce(s, 64 << 20, 8, true, nullptr, false), ADAPT2_ALLREDUCE_TREE);
    assert_int_equal(choose_allreduce(s, 64 << 20, 8, false, nullptr, true), ADAPT2_ALLREDUCE_TREE);
    s.tree.segment_size = 0;
    assert_int_equal(choose_allreduce(s, 64 << 20, 8, true, nullptr, true), ADAPT2_ALLREDUCE_TREE);
}

// The position of `name` in a comma-separated list, or -1.
static int position(const char *list, const std::string &name) {
    std::string rest = std::string(list) + ",";
    for (int i = 0; !rest.empty(); ++i) {
        if (rest.substr(0, rest.find(',')) == name) return i;
        rest.erase(0, rest.find(',') + 1);
    }
    return -1;
}

// The algorithm parameters are MCA enums whose values are params.def's
// names in the engine enums' order (then previous): a name out of place
// would run another algorithm than the one asked for.
void test_algorithm_names_match_the_engine(void **) {
    for (const char *list : {defaults::bcast_algorithm_names, defaults::reduce_algorithm_names,
                             defaults::node_algorithm_names, defaults::numa_algorithm_names}) {
        for (int a = ADAPT2_ALG_AUTO; a < ADAPT2_ALG_COUNT; ++a) {
            const std::string name = mca_coll_adapt2_engine_algorithm_name(a);
            assert_int_equal(position(list, name), a);
            TreeShape shape;
            assert_true(a == ADAPT2_ALG_AUTO || tree_shape_from_name(name, &shape));
        }
        assert_int_equal(position(list, "previous"), ADAPT2_ALG_COUNT);
    }
    assert_string_equal(mca_coll_adapt2_engine_algorithm_name(ADAPT2_ALG_COUNT), "unknown");
    const char *allreduce = defaults::allreduce_algorithm_names;
    assert_int_equal(position(allreduce, "auto"), ADAPT2_ALLREDUCE_AUTO);
    assert_int_equal(position(allreduce, "tree"), ADAPT2_ALLREDUCE_TREE);
    assert_int_equal(position(allreduce, "ring"), ADAPT2_ALLREDUCE_RING);
    assert_int_equal(position(allreduce, "recursive_doubling"), ADAPT2_ALLREDUCE_RECDOUBLING);
    assert_int_equal(position(allreduce, "rabenseifner"), ADAPT2_ALLREDUCE_RABENSEIFNER);
    assert_int_equal(position(allreduce, "previous"), ADAPT2_ALLREDUCE_RABENSEIFNER + 1);
    const char *allgather = defaults::allgather_algorithm_names;
    assert_int_equal(position(allgather, "ring"), ADAPT2_ALLGATHER_RING);
    assert_int_equal(position(allgather, "bruck"), ADAPT2_ALLGATHER_BRUCK);
    assert_int_equal(position(allgather, "multi_level"), ADAPT2_ALLGATHER_MULTI_LEVEL);
    assert_int_equal(position(allgather, "linear"), ADAPT2_ALLGATHER_LINEAR);
    assert_int_equal(position(allgather, "previous"), ADAPT2_ALLGATHER_LINEAR + 1);
    const char *rsb = defaults::reduce_scatter_block_algorithm_names;
    assert_int_equal(position(rsb, "ring"), ADAPT2_REDUCE_SCATTER_RING);
    assert_int_equal(position(rsb, "recursive_halving"), ADAPT2_REDUCE_SCATTER_HALVING);
    assert_int_equal(position(rsb, "previous"), ADAPT2_REDUCE_SCATTER_HALVING + 1);
}

// Between nodes: a pipeline from 64 KiB while its fill (a segment time per
// node) stays short, nodes <= 2 x segments + 8 counted in
// topology_segment_size; two trees beyond; binomial below 64 KiB; a forced
// node algorithm always wins.
void test_node_level_rule(void **) {
    auto s = defaults();
    s.topology = 1;
    s.topology_segment_size = 256 << 10;
    const TreeSpec pipeline{TreeShape::pipeline, 0}, two_tree{TreeShape::two_tree, 0}, binomial{TreeShape::binomial, 0};
    struct Case {
        size_t bytes;
        int nodes;
        TreeSpec want;
    };
    const Case cases[] = {
        {32 << 10, 4, binomial},   {32 << 10, 1000, binomial}, {64 << 10, 4, pipeline}, {64 << 10, 10, pipeline},
        {64 << 10, 11, two_tree},  {1 << 20, 16, pipeline},    {1 << 20, 17, two_tree}, {16 << 20, 136, pipeline},
        {16 << 20, 137, two_tree}, {1 << 20, 65536, two_tree},
    };
    for (const Case &c : cases) {
        BcastPlan p = plan_bcast(s, c.bytes, 2 * c.nodes, c.nodes);
        if (!(p.levels.node == c.want)) fail_msg("%zu bytes over %d nodes: wrong node tree", c.bytes, c.nodes);
        BcastPlan r = plan_reduce(s, c.bytes, true, c.nodes);
        if (!(r.levels.node == c.want)) fail_msg("reduce %zu bytes over %d nodes: wrong node tree", c.bytes, c.nodes);
    }
    s.node_algorithm = ADAPT2_ALG_BINARY;
    assert_true(plan_bcast(s, 1 << 20, 2000, 1000).levels.node == (TreeSpec{TreeShape::binary, 0}));
}

// Segments across nodes from 64 KiB: sqrt(bytes x node_message_cost /
// depth) rounded down to a power of two, in [8 KiB, topology_segment_size],
// at every level; depth: the nodes for a pipeline, their bit width for the
// trees. node_segment_size, one node, less than 64 KiB or a cost of 0 keep
// topology_segment_size.
void test_node_segments(void **) {
    auto s = defaults();
    s.topology = 1;
    s.topology_segment_size = 256 << 10;
    s.node_message_cost = 16 << 10;
    struct Case {
        size_t bytes;
        int nodes;
        size_t want;
    };
    const Case cases[] = {
        {64 << 10, 4, 16 << 10},     // pipeline: sqrt(64K x 16K / 4) = 16K
        {1 << 20, 4, 64 << 10},      // pipeline: 64K
        {1 << 20, 16, 32 << 10},     // pipeline: 32K
        {1 << 20, 17, 32 << 10},     // two trees, depth 5: 58.6K
        {1 << 20, 512, 32 << 10},    // depth 10: 41.4K
        {1 << 20, 65536, 16 << 10},  // depth 17: 31.8K
        {256 << 20, 4, 256 << 10},   // 1 M: the cap
    };
    for (const Case &c : cases) {
        for (const BcastPlan &p :
             {plan_bcast(s, c.bytes, 2 * c.nodes, c.nodes), plan_reduce(s, c.bytes, true, c.nodes)}) {
            if (p.segment_bytes != c.want) {
                fail_msg("%zu bytes over %d nodes: %zu-byte segments, want %zu", c.bytes, c.nodes, p.segment_bytes,
                         c.want);
            }
            for (int l = 0; l < kLevels; ++l) assert_int_equal(p.level_bytes[l], c.want);
        }
    }
    s.node_message_cost = 1;  // sqrt(1M / 4) = 512: the 8 KiB floor
    assert_int_equal(plan_bcast(s, 1 << 20, 8, 4).segment_bytes, 8 << 10);
    s.node_algorithm = ADAPT2_ALG_CHAIN, s.chains = 2;  // a forced tree too; chains: depth 8 of 16 nodes
    s.node_message_cost = 16 << 10;
    assert_int_equal(plan_bcast(s, 4 << 20, 32, 16).segment_bytes, 64 << 10);  // 90.5K
    s.node_algorithm = ADAPT2_ALG_AUTO;
    assert_int_equal(plan_bcast(s, 1 << 20, 8, 1).segment_bytes, 256 << 10);         // one node
    assert_int_equal(plan_bcast(s, (64 << 10) - 1, 8, 4).segment_bytes, 256 << 10);  // below 64 KiB
    s.node_message_cost = 0;
    assert_int_equal(plan_bcast(s, 1 << 20, 8, 4).segment_bytes, 256 << 10);
    s.node_message_cost = 16 << 10;
    s.node_segment_size = 128 << 10;
    assert_int_equal(plan_bcast(s, 1 << 20, 8, 4).level_bytes[kNodeLevel], 128 << 10);
}

// Allgather: across nodes with multi-level trees on, multi-level below
// allgather_multi_level_max_bytes; else Bruck below allgather_bruck_max_bytes
// (all blocks together), the ring from there; a forced algorithm is obeyed.
void test_allgather_rules(void **) {
    adapt2_call_settings_t s{};
    s.tree = defaults();
    s.bruck_max_bytes = 64 << 10;
    s.multi_level_max_bytes = 1 << 20;
    s.algorithm = ADAPT2_ALLGATHER_AUTO;
    assert_int_equal(allgather_plan(s, 0), ADAPT2_ALLGATHER_BRUCK);
    assert_int_equal(allgather_plan(s, (64 << 10) - 1), ADAPT2_ALLGATHER_BRUCK);
    assert_int_equal(allgather_plan(s, 64 << 10), ADAPT2_ALLGATHER_RING);
    const CallShape four_nodes{8, 4};
    assert_int_equal(allgather_plan(s, 8, nullptr, four_nodes), ADAPT2_ALLGATHER_BRUCK);  // topology off
    s.tree.topology = 1;
    assert_int_equal(allgather_plan(s, 8), ADAPT2_ALLGATHER_BRUCK);  // one node
    assert_int_equal(allgather_plan(s, 8, nullptr, four_nodes), ADAPT2_ALLGATHER_MULTI_LEVEL);
    assert_int_equal(allgather_plan(s, (1 << 20) - 1, nullptr, four_nodes), ADAPT2_ALLGATHER_MULTI_LEVEL);
    assert_int_equal(allgather_plan(s, 1 << 20, nullptr, four_nodes), ADAPT2_ALLGATHER_RING);
    const CallShape round_robin{8, 4, false};  // the ring would cross node links at every step
    assert_int_equal(allgather_plan(s, 1 << 30, nullptr, round_robin), ADAPT2_ALLGATHER_MULTI_LEVEL);
    adapt2_call_t g{};  // below allgather_multi_level_pipeline_min_bytes: the result down at once
    g.collective = ADAPT2_COLL_ALLGATHER;
    g.settings = s;
    g.settings.pipeline_min_bytes = 1 << 16;
    g.recv.bytes = (1 << 16) - 1;
    assert_true(plan_call(g, four_nodes).whole_down);
    g.recv.bytes = 1 << 16;
    assert_false(plan_call(g, four_nodes).whole_down);
    // a blocking call with the direct path on: recursive doubling (direct)
    // up to allgather_direct_max_bytes, on one node of a power of two ranks only
    s.direct_max_bytes = 8 << 20;
    const CallShape eight{8, 1}, six{6, 1};
    assert_int_equal(allgather_plan(s, 64 << 10, nullptr, eight), ADAPT2_ALLGATHER_BRUCK);
    assert_int_equal(allgather_plan(s, (8 << 20) - 1, nullptr, eight), ADAPT2_ALLGATHER_BRUCK);
    assert_int_equal(allgather_plan(s, 8 << 20, nullptr, eight), ADAPT2_ALLGATHER_RING);
    assert_int_equal(allgather_plan(s, 64 << 10, nullptr, six), ADAPT2_ALLGATHER_RING);  // Bruck's rotation
    assert_int_equal(allgather_plan(s, (64 << 10) - 1, nullptr, six), ADAPT2_ALLGATHER_BRUCK);
    assert_int_equal(allgather_plan(s, 2 << 20, nullptr, four_nodes), ADAPT2_ALLGATHER_RING);
    // the linear exchange from allgather_bruck_max_bytes (all blocks) while each block is below
    // allgather_linear_max_bytes, on one node of at most 8 ranks, where the direct path's
    // recursive doubling does not run
    s.linear_max_bytes = 1 << 20;
    const CallShape nine{9, 1};
    assert_int_equal(allgather_plan(s, 64 << 10, nullptr, six), ADAPT2_ALLGATHER_LINEAR);
    assert_int_equal(allgather_plan(s, 6 * ((1 << 20) - 1), nullptr, six), ADAPT2_ALLGATHER_LINEAR);
    assert_int_equal(allgather_plan(s, 6 << 20, nullptr, six), ADAPT2_ALLGATHER_RING);
    assert_int_equal(allgather_plan(s, (64 << 10) - 1, nullptr, six), ADAPT2_ALLGATHER_BRUCK);
    assert_int_equal(allgather_plan(s, 64 << 10, nullptr, eight), ADAPT2_ALLGATHER_BRUCK);  // direct
    assert_int_equal(allgather_plan(s, 64 << 10, nullptr, nine), ADAPT2_ALLGATHER_RING);
    assert_int_equal(allgather_plan(s, 2 << 20, nullptr, four_nodes), ADAPT2_ALLGATHER_RING);
    s.direct_max_bytes = 0;  // a non-blocking call
    assert_int_equal(allgather_plan(s, 64 << 10, nullptr, eight), ADAPT2_ALLGATHER_LINEAR);
    s.linear_max_bytes = 0;
    assert_int_equal(allgather_plan(s, 64 << 10, nullptr, eight), ADAPT2_ALLGATHER_RING);
    s.algorithm = ADAPT2_ALLGATHER_LINEAR;
    assert_int_equal(allgather_plan(s, 8, nullptr, four_nodes), ADAPT2_ALLGATHER_LINEAR);
    s.algorithm = ADAPT2_ALLGATHER_RING;
    assert_int_equal(allgather_plan(s, 8, nullptr, four_nodes), ADAPT2_ALLGATHER_RING);
    s.algorithm = ADAPT2_ALLGATHER_BRUCK;
    assert_int_equal(allgather_plan(s, 1 << 30), ADAPT2_ALLGATHER_BRUCK);
    s.algorithm = ADAPT2_ALLGATHER_MULTI_LEVEL;
    assert_int_equal(allgather_plan(s, 1 << 30), ADAPT2_ALLGATHER_MULTI_LEVEL);
}

// The direct allgather's exchanges (allgather_plan.h), played out for every
// rank of p = 1..70: each exchange's sender and receiver agree (peer and
// from, block counts), nothing lands on a block a rank already holds, only
// held blocks are sent, the first exchange sends only the rank's own block,
// p - 1 blocks are sent in all, and after ceil(log2 p) exchanges every rank holds every block where the
// plan says (rank order, or Bruck's rotation).
void test_allgather_exchanges(void **) {
    for (int p = 1; p <= 70; ++p) {
        std::vector<std::vector<adapt2_direct_step_t>> steps(p);
        std::vector<std::vector<int>> slots(p, std::vector<int>(p, -1));  // slot -> block (rank) held
        const bool rotated = allgather_rotates(p);
        for (int r = 0; r < p; ++r) {
            plan_allgather(r, p, [&](adapt2_direct_step_t x) { steps[r].push_back(x); });
            slots[r][rotated ? 0 : r] = r;
        }
        int log2p = 0;
        while ((1 << log2p) < p) ++log2p;
        for (int r = 0; r < p; ++r) {
            assert_int_equal(static_cast<int>(steps[r].size()), log2p);
            int sent = 0;  // p - 1 blocks in all (the counters rely on it: direct_route.cc)
            for (const adapt2_direct_step_t &x : steps[r]) sent += x.blocks;
            assert_int_equal(sent, p - 1);
            if (p > 1) {
                assert_int_equal(steps[r][0].blocks, 1);
                assert_int_equal(steps[r][0].send_block, rotated ? 0 : r);
            }
        }
        for (int k = 0; k < log2p; ++k) {
            auto next = slots;
            for (int r = 0; r < p; ++r) {
                const adapt2_direct_step_t &x = steps[r][k];
                const adapt2_direct_step_t &y = steps[x.peer][k];  // the receiver's view
                assert_int_equal(y.from, r);
                assert_int_equal(y.blocks, x.blocks);
                for (int b = 0; b < x.blocks; ++b) {
                    const int held = slots[r][x.send_block + b];
                    assert_true(held >= 0);
                    assert_int_equal(next[x.peer][y.recv_block + b], -1);
                    next[x.peer][y.recv_block + b] = held;
                }
            }
            slots = next;
        }
        for (int r = 0; r < p; ++r) {
            for (int i = 0; i < p; ++i) assert_int_equal(slots[r][i], rotated ? (r + i) % p : i);
        }
    }
}

// The direct reduce-scatter's exchanges (halving_plan.h), run symbolically on
// every rank of p = 1..40: each block holds how often each rank's data was
// folded into it. Messages between two ranks match in order; a step posts its
// send (its blocks as they are then) and completes once its receive has
// arrived. Every rank finishes (no exchange waits for one never posted), each
// message is received as many blocks, at the same block, as were sent, and
// rank r ends with block r holding every rank's data exactly once.
void test_reduce_scatter_exchanges(void **) {
    for (int p = 1; p <= 40; ++p) {
        using Blocks = std::vector<std::vector<int>>;  // block -> contributions per rank
        struct Message {
            int first;
            Blocks blocks;
        };
        std::vector<std::vector<adapt2_direct_step_t>> steps(p);
        std::vector<Blocks> data(p, Blocks(p, std::vector<int>(p, 0)));
        for (int r = 0; r < p; ++r) {
            plan_halving_scatter(r, p, [&](adapt2_direct_step_t x) { steps[r].push_back(x); });
            assert_true(static_cast<int>(steps[r].size()) <= ADAPT2_DIRECT_MAX_STEPS);
            for (int b = 0; b < p; ++b) data[r][b][r] = 1;
        }
        std::map<std::pair<int, int>, std::deque<Message>> wire;  // (from, to) -> messages in order
        std::vector<size_t> at(p, 0);
        std::vector<bool> posted(p, false);
        for (bool progress = true; progress;) {
            progress = false;
            for (int r = 0; r < p; ++r) {
                if (at[r] == steps[r].size()) continue;
                const adapt2_direct_step_t &x = steps[r][at[r]];
                if (!posted[r] && x.send) {
                    Message m{x.send_block, {}};
                    for (int b = 0; b < x.blocks; ++b) m.blocks.push_back(data[r][x.send_block + b]);
                    wire[{r, x.peer}].push_back(m);
                }
                posted[r] = true;
                if (x.recv) {
                    auto &queue = wire[{x.peer, r}];
                    if (queue.empty()) continue;
                    const Message m = queue.front();
                    queue.pop_front();
                    assert_int_equal(m.first, x.recv_block);
                    assert_int_equal(static_cast<int>(m.blocks.size()), x.recv_blocks);
                    for (int b = 0; b < x.recv_blocks; ++b) {
                        std::vector<int> &into = data[r][x.recv_block + b];
                        for (int q = 0; q < p; ++q) into[q] = x.fold ? into[q] + m.blocks[b][q] : m.blocks[b][q];
                    }
                }
                ++at[r];
                posted[r] = false;
                progress = true;
            }
        }
        for (int r = 0; r < p; ++r) {
            assert_int_equal(at[r], steps[r].size());  // finished
            for (int q = 0; q < p; ++q) assert_int_equal(data[r][r][q], 1);
        }
        for (const auto &link : wire) assert_true(link.second.empty());  // every message received
    }
}

// A call of `collective` with the default tree settings, detaching allowed.
adapt2_call_t plain_call(int collective, bool commutative = true) {
    adapt2_call_t call{};
    call.collective = collective;
    call.settings.tree = defaults();
    call.settings.tree.detach_max_message = 1 << 20;
    call.settings.algorithm = ADAPT2_ALLREDUCE_AUTO;
    call.reduction.unit_bytes = 4;
    call.reduction.commutative = commutative;
    return call;
}

// plan_call's call-level rules, each one: which calls go to the previous
// component, and what the plan changes in the settings the C layer gave.
void test_plan_call_rules(void **) {
    std::set<std::string> seen;
    for (int c = 0; c < ADAPT2_COLL_COUNT; ++c) {  // `previous` wins for every collective
        adapt2_call_t call = plain_call(c);
        call.facts.previous = 1;
        const CallPlan plan = plan_call(call, kShape);
        assert_true(plan.previous);
        seen.insert(plan.rule);
    }
    // non-commutative ops: recursive halving and the in-order tree take them
    CallPlan plan = plan_call(plain_call(ADAPT2_COLL_REDUCE_SCATTER_BLOCK, false), kShape);
    assert_false(plan.previous);
    assert_false(plan_call(plain_call(ADAPT2_COLL_REDUCE, false), kShape).previous);
    for (int c : {ADAPT2_COLL_ALLGATHER, ADAPT2_COLL_REDUCE_SCATTER_BLOCK}) {
        adapt2_call_t call = plain_call(c);
        call.facts.device_support = 1;
        plan = plan_call(call, kShape);
        assert_true(plan.previous), seen.insert(plan.rule);
        assert_false(plan_call(plain_call(c), kShape).previous);
    }
    // allreduce never detaches; with device support on it takes the tree
    adapt2_call_t all = plain_call(ADAPT2_COLL_ALLREDUCE);
    all.facts.blocking = 1;
    plan = plan_call(all, kShape);
    assert_false(plan.previous);
    assert_int_equal(plan.settings.tree.detach_max_message, 0);
    assert_int_equal(plan.settings.algorithm, ADAPT2_ALLREDUCE_AUTO);
    assert_false(plan.grace), seen.insert(plan.rule);
    all.facts.device_support = 1;
    all.settings.algorithm = ADAPT2_ALLREDUCE_RING;
    plan = plan_call(all, kShape);
    assert_int_equal(plan.settings.algorithm, ADAPT2_ALLREDUCE_TREE), seen.insert(plan.rule);
    // ... and segments of at least device_segment_size; 0 (one segment) stays
    all.settings.tree.segment_size = 64 << 10, all.settings.tree.topology_segment_size = 0;
    all.settings.tree.node_segment_size = 4 << 20;
    all.facts.device_segment_size = 1 << 20;
    plan = plan_call(all, kShape);
    assert_int_equal(plan.settings.tree.segment_size, 1 << 20);
    assert_int_equal(plan.settings.tree.topology_segment_size, 0);
    assert_int_equal(plan.settings.tree.node_segment_size, 4 << 20);
    all.facts.device_support = 0;
    assert_int_equal(plan_call(all, kShape).settings.tree.segment_size, 64 << 10);
    // ... except blocking calls up to device_bounce_max, planned as host calls
    // (each rank bounces its GPU buffers): not below it, nor non-blocking
    all.facts.device_support = 1, all.facts.device_bounce_max = 128 << 10;
    for (uint64_t bytes : {uint64_t(8), uint64_t(128) << 10, uint64_t(129) << 10}) {
        all.send.bytes = all.recv.bytes = bytes;
        for (int blocking : {1, 0}) {
            all.facts.blocking = blocking;
            const bool bounced = blocking && bytes <= (128u << 10);
            assert_int_equal(device_bounces(all.facts, bytes), bounced);
            plan = plan_call(all, kShape);
            assert_int_equal(plan.settings.algorithm, bounced ? ADAPT2_ALLREDUCE_RING : ADAPT2_ALLREDUCE_TREE);
            assert_int_equal(plan.settings.tree.segment_size, bounced ? 64 << 10 : 1 << 20);
        }
    }
    for (int c : {ADAPT2_COLL_ALLGATHER, ADAPT2_COLL_REDUCE_SCATTER_BLOCK}) {
        adapt2_call_t call = plain_call(c);
        call.facts.device_support = 1, call.facts.device_bounce_max = 128 << 10, call.facts.blocking = 1;
        call.send.bytes = call.recv.bytes = 4096;
        assert_false(plan_call(call, kShape).previous);
        call.facts.device_bounce_max = 0;  // none bounces
        assert_true(plan_call(call, kShape).previous);
    }
    all.facts.device_support = 0, all.facts.device_bounce_max = 0, all.facts.blocking = 1;
    all.send.bytes = all.recv.bytes = 0;
    // a user op is never called after the reduce returned
    adapt2_call_t red = plain_call(ADAPT2_COLL_REDUCE);
    red.facts.user_op = 1;
    plan = plan_call(red, kShape);
    assert_int_equal(plan.settings.tree.detach_max_message, 0), seen.insert(plan.rule);
    // blocking bcast and reduce get a grace period and detach as set; others don't
    for (int c : {ADAPT2_COLL_BCAST, ADAPT2_COLL_REDUCE}) {
        adapt2_call_t call = plain_call(c);
        call.facts.blocking = 1;
        plan = plan_call(call, kShape);
        assert_true(plan.grace && plan.settings.tree.blocking);
        assert_int_equal(plan.settings.tree.detach_max_message, 1 << 20), seen.insert(plan.rule);
        call.facts.blocking = 0;
        plan = plan_call(call, kShape);
        assert_false(plan.grace || plan.settings.tree.blocking);
    }
    // every rule reached, each named in kCallRules
    assert_int_equal(seen.size(), size_t(kCallRuleCount));
    for (int i = 0; i < kCallRuleCount; ++i) assert_true(seen.count(kCallRules[i]));
}

// plan_call returns the collective's part too: the tree and segments of a
// bcast or reduce, the algorithm of the others (with its rule), as the
// collective's own rules give them for the call's sizes and the shape.
void test_plan_call_plans_the_collective(void **) {
    adapt2_call_t b = plain_call(ADAPT2_COLL_BCAST);
    b.recv.bytes = 16 << 20;
    for (CallShape shape : {CallShape{4, 1}, CallShape{64, 1}}) {
        const CallPlan p = plan_call(b, shape);
        const BcastPlan want = plan_bcast(b.settings.tree, b.recv.bytes, shape.size, shape.nodes);
        assert_true(p.tree.tree.shape == want.tree.shape);
        assert_int_equal(p.tree.segment_bytes, want.segment_bytes);
        assert_string_equal(p.tree.rule, want.rule);
    }
    adapt2_call_t r = plain_call(ADAPT2_COLL_REDUCE, false);
    r.send.bytes = r.recv.bytes = 4 << 20;
    assert_true(plan_call(r, kShape).tree.tree.shape == TreeShape::in_order_binomial);
    adapt2_call_t a = plain_call(ADAPT2_COLL_ALLREDUCE);
    a.settings.ring_min_bytes = 256 << 10, a.settings.ring_max_bytes = 8 << 20;
    a.send.bytes = a.recv.bytes = 1 << 20;
    CallPlan p = plan_call(a, kShape);
    assert_int_equal(p.algorithm, ADAPT2_ALLREDUCE_RING);
    assert_string_equal(p.algorithm_rule, "auto, in [allreduce_ring_min_bytes, allreduce_ring_max_bytes): the ring");
    a.facts.device_support = 1;  // the tree, planned
    p = plan_call(a, kShape);
    assert_int_equal(p.algorithm, ADAPT2_ALLREDUCE_TREE);
    assert_true(p.tree.rule && *p.tree.rule);
    adapt2_call_t g = plain_call(ADAPT2_COLL_ALLGATHER);
    g.settings.bruck_max_bytes = 64 << 10;
    g.recv.bytes = 4 * 1000;
    assert_int_equal(plan_call(g, kShape).algorithm, ADAPT2_ALLGATHER_BRUCK);
    g.recv.bytes = 4 * 100000;
    assert_int_equal(plan_call(g, kShape).algorithm, ADAPT2_ALLGATHER_RING);
    adapt2_call_t s = plain_call(ADAPT2_COLL_REDUCE_SCATTER_BLOCK);
    s.settings.halving_max_bytes = 1 << 20;
    s.send.bytes = 4 * (2 << 20);  // blocks of 2 MiB at p = 4
    assert_int_equal(plan_call(s, kShape).algorithm, ADAPT2_REDUCE_SCATTER_RING);
    assert_int_equal(plan_call(s, CallShape{16, 1}).algorithm, ADAPT2_REDUCE_SCATTER_HALVING);  // 512 KiB
    s.reduction.commutative = 0;
    assert_int_equal(plan_call(s, kShape).algorithm, ADAPT2_REDUCE_SCATTER_HALVING);
}

// Every rule names itself (coll_adapt2_verbose 20 prints it), and each
// branch a different name: the name says which rule chose the plan.
void test_every_rule_is_named(void **) {
    std::set<std::string> names;
    auto name = [&](const char *rule, const char *what) {
        if (!rule || !*rule) fail_msg("%s: no rule name", what);
        names.insert(rule);
    };
    auto s = defaults();
    name(plan_bcast(s, 1 << 20, 4).rule, "bcast flat");
    name(plan_bcast(s, 1 << 20, 64).rule, "bcast segmented");
    s.algorithm = ADAPT2_ALG_BINARY;
    name(plan_bcast(s, 1 << 20, 64).rule, "bcast forced");
    name(plan_reduce(s, 1 << 20, true).rule, "reduce forced");
    s.algorithm = ADAPT2_ALG_AUTO;
    name(plan_reduce(s, 1 << 20, false).rule, "reduce non-commutative");
    name(plan_reduce(s, 1 << 10, true).rule, "reduce small");
    name(plan_reduce(s, 1 << 20, true).rule, "reduce large");
    name(plan_reduce(s, 1 << 10, true, 1, 8).rule, "reduce spread");
    s.topology = 1, s.topology_segment_size = 1 << 18;
    name(plan_bcast(s, 1 << 10, 8, 4).rule, "multi-level small");
    name(plan_bcast(s, 1 << 20, 8, 4).rule, "multi-level pipeline");
    name(plan_bcast(s, 1 << 20, 2000, 1000).rule, "multi-level two trees");
    s.node_algorithm = ADAPT2_ALG_FLAT;
    name(plan_bcast(s, 1 << 20, 8, 4).rule, "multi-level forced");
    const size_t tree_rules = names.size();
    assert_int_equal(tree_rules, 12);
    adapt2_allreduce_settings_t a{};
    a.tree = defaults();
    a.ring_min_bytes = 256 << 10, a.ring_max_bytes = 8 << 20, a.recdoubling_max_bytes = 16 << 10;
    a.recdoubling_max_ranks = 4, a.rabenseifner_min_bytes = 128 << 10, a.rabenseifner_max_bytes = 256 << 10;
    const char *rule = nullptr;
    for (int algorithm :
         {ADAPT2_ALLREDUCE_RING, ADAPT2_ALLREDUCE_RECDOUBLING, ADAPT2_ALLREDUCE_TREE, ADAPT2_ALLREDUCE_RABENSEIFNER}) {
        a.algorithm = algorithm;
        choose_allreduce(a, 4, 4, true, &rule), name(rule, "allreduce forced");
        choose_allreduce(a, 4, 4, false, &rule), name(rule, "allreduce forced, not possible");
    }
    a.algorithm = ADAPT2_ALLREDUCE_AUTO;
    for (size_t bytes : {size_t{4}, size_t{128} << 10, size_t{1} << 20, size_t{16} << 20}) {
        choose_allreduce(a, bytes, 4, true, &rule), name(rule, "allreduce auto");
    }
    a.tree.topology = 1;
    choose_allreduce(a, 4, 4, true, &rule), name(rule, "allreduce across nodes");
    choose_allreduce(a, 128 << 10, 4, true, &rule, true), name(rule, "allreduce across nodes in blocks");
    assert_int_equal(names.size(), tree_rules + 11);
    for (int algorithm : {ADAPT2_ALLGATHER_AUTO, ADAPT2_ALLGATHER_RING}) {
        a.algorithm = algorithm;
        allgather_plan(a, 4, &rule), name(rule, "allgather");
        a.bruck_max_bytes = 1 << 20;
        allgather_plan(a, 4, &rule), name(rule, "allgather");
    }
    a.algorithm = ADAPT2_ALLGATHER_AUTO, a.multi_level_max_bytes = 1 << 20;
    allgather_plan(a, 4, &rule, CallShape{8, 4}), name(rule, "allgather across nodes");
    allgather_plan(a, 4, &rule, CallShape{8, 4, false}), name(rule, "allgather across nodes, round-robin");
    assert_int_equal(names.size(), tree_rules + 16);
    adapt2_call_settings_t r{};
    r.halving_max_bytes = 1 << 16;
    for (int algorithm : {ADAPT2_REDUCE_SCATTER_AUTO, ADAPT2_REDUCE_SCATTER_RING, ADAPT2_REDUCE_SCATTER_HALVING}) {
        r.algorithm = algorithm;
        for (size_t bytes : {size_t{64}, size_t{1} << 20}) {
            reduce_scatter_plan(r, bytes, true, &rule), name(rule, "reduce_scatter");
            reduce_scatter_plan(r, bytes, false, &rule), name(rule, "reduce_scatter non-commutative");
        }
    }
    assert_int_equal(names.size(), tree_rules + 21);
}

// Reduce_scatter_block: recursive halving below the threshold and for
// non-commutative ops (even when the ring is asked for), the ring above.
void test_reduce_scatter_rules(void **) {
    adapt2_call_settings_t s{};
    s.halving_max_bytes = 1 << 16;
    assert_int_equal(reduce_scatter_plan(s, (1 << 16) - 1, true), ADAPT2_REDUCE_SCATTER_HALVING);
    assert_int_equal(reduce_scatter_plan(s, 1 << 16, true), ADAPT2_REDUCE_SCATTER_RING);
    assert_int_equal(reduce_scatter_plan(s, 1 << 24, false), ADAPT2_REDUCE_SCATTER_HALVING);
    s.algorithm = ADAPT2_REDUCE_SCATTER_RING;
    assert_int_equal(reduce_scatter_plan(s, 64, true), ADAPT2_REDUCE_SCATTER_RING);
    assert_int_equal(reduce_scatter_plan(s, 64, false), ADAPT2_REDUCE_SCATTER_HALVING);
    s.algorithm = ADAPT2_REDUCE_SCATTER_HALVING;
    assert_int_equal(reduce_scatter_plan(s, 1 << 24, true), ADAPT2_REDUCE_SCATTER_HALVING);
    s.algorithm = ADAPT2_REDUCE_SCATTER_AUTO, s.halving_max_bytes = 0;
    assert_int_equal(reduce_scatter_plan(s, 1, true), ADAPT2_REDUCE_SCATTER_RING);
}

// ---- the user's decision table (rules.h, coll_adapt2_rules) -------------

RuleTable parsed(const std::string &text) {
    RuleTable t;
    std::string error;
    if (!RuleTable::parse(text, "f", &t, &error)) fail_msg("rejected: %s", error.c_str());
    return t;
}

// What parse says of `text`: "" when accepted, else its message.
std::string rejection(const std::string &text) {
    RuleTable t;
    std::string error;
    return RuleTable::parse(text, "f", &t, &error) ? "" : error;
}

void test_rules_parse(void **) {
    const RuleTable t = parsed(
        "# a comment first\n"
        "adapt2-rules 1   # the version\n"
        "\n"
        "allreduce 2-8 * 0-4K algorithm=recursive_doubling\n"
        "bcast * 2- 64K- algorithm=chain chains=3 segment_size=16K recv_window=8 send_window=3 "
        "detach_max_message=0\n"
        "reduce 4 1 1M previous\n"
        "* * * * fanout=5 radix=16\n"
        "allgather * * * algorithm=previous\n");
    assert_int_equal(t.size(), 5);
    const Rule &a = t[0], &b = t[1], &r = t[2], &any = t[3], &g = t[4];
    assert_int_equal(a.collective, ADAPT2_COLL_ALLREDUCE);
    assert_int_equal(a.algorithm, ADAPT2_ALLREDUCE_RECDOUBLING);
    assert_true(a.ranks.lo == 2 && a.ranks.hi == 8 && a.bytes.lo == 0 && a.bytes.hi == 4096);
    assert_true(a.nodes.lo == 0 && a.nodes.hi == UINT64_MAX);
    assert_int_equal(b.algorithm, ADAPT2_ALG_CHAIN);
    assert_true(b.chains == 3 && b.segment_size == 16384 && b.recv_window == 8 && b.send_window == 3);
    assert_int_equal(b.detach_max_message, 0);
    assert_int_equal(a.detach_max_message, -1);  // not set: the parameter's
    assert_true(b.nodes.lo == 2 && b.nodes.hi == UINT64_MAX && b.bytes.lo == 65536);
    assert_true(r.previous && r.ranks.lo == 4 && r.ranks.hi == 4 && r.bytes.lo == (1u << 20) &&
                r.bytes.hi == (1u << 20));
    assert_true(any.collective == -1 && any.fanout == 5 && any.radix == 16 && any.algorithm == -1);
    assert_true(g.previous && g.collective == ADAPT2_COLL_ALLGATHER);
    assert_string_equal(a.where.c_str(), "f:4: allreduce 2-8 * 0-4K algorithm=recursive_doubling");
}

// The fingerprint the ranks compare: the rules' words decide it, not
// comments, spacing or the file's name; never 0 (no table).
void test_rules_fingerprint(void **) {
    const std::string a = "adapt2-rules 1\nbcast * * 0-1K previous\nreduce 4 * * algorithm=chain\n";
    RuleTable t1, t2, t3;
    std::string error;
    assert_true(RuleTable::parse(a, "one", &t1, &error));
    assert_true(
        RuleTable::parse("# same\nadapt2-rules   1\n\nbcast  *  * 0-1K  previous # c\nreduce 4 * * "
                         "algorithm=chain\n",
                         "two", &t2, &error));
    assert_true(RuleTable::parse("adapt2-rules 1\nbcast * * 0-2K previous\nreduce 4 * * algorithm=chain\n", "one", &t3,
                                 &error));
    assert_true(t1.fingerprint() != 0);
    assert_true(t1.fingerprint() == t2.fingerprint());
    assert_true(t1.fingerprint() != t3.fingerprint());
    assert_string_equal(t2.origin().c_str(), "two");
}

// Every kind of bad line is refused with its line number and reason.
void test_rules_rejections(void **) {
    const std::string h = "adapt2-rules 1\n";
    const struct {
        std::string text, says;
    } bad[] = {
        {"", "empty"},
        {"bcast * * * previous\n", "f:1: the first line must be 'adapt2-rules 1'"},
        {"adapt2-rules 2\n", "f:1: the first line must be"},
        {h + "bcast * *\n", "f:2: expected: collective ranks nodes bytes"},
        {h + "gather * * * previous\n", "f:2: unknown collective 'gather'"},
        {h + "bcast x * * previous\n", "f:2: bad ranks range 'x'"},
        {h + "bcast * 5-2 * previous\n", "f:2: bad nodes range '5-2'"},
        {h + "bcast * * 4Q previous\n", "f:2: bad bytes range '4Q'"},
        {h + "bcast * * * previous radix=2\n", "f:2: previous takes no other setting"},
        {h + "bcast * * * radix\n", "f:2: 'radix' is not KEY=VALUE"},
        {h + "bcast * * * radix=1\n", "f:2: radix=1: not a number in [2,"},
        {h + "bcast * * * send_window=65\n", "f:2: send_window=65: not a number in [1, 64]"},
        {h + "bcast * * * colour=red\n", "f:2: unknown setting 'colour'"},
        {h + "* * * * algorithm=ring\n", "f:2: algorithm= needs one collective"},
        {h + "allgather * * * algorithm=knomial\n", "f:2: unknown algorithm 'knomial' (known: auto,ring,bruck"},
    };
    for (const auto &b : bad) {
        const std::string said = rejection(b.text);
        if (said.find(b.says) == std::string::npos)
            fail_msg("'%s': expected '%s', got '%s'", b.text.c_str(), b.says.c_str(), said.c_str());
    }
}

// The first line that matches decides; ranges include both ends.
void test_rules_match(void **) {
    const RuleTable t = parsed(
        "adapt2-rules 1\n"
        "bcast 4 * 0-1K previous\n"
        "bcast * 1 1K-64K algorithm=binary\n"
        "* * 2-3 * fanout=3\n");
    assert_int_equal(t.size(), 3);
    assert_ptr_equal(t.match(ADAPT2_COLL_BCAST, CallShape{4, 1}, 1024), &t[0]);  // both match: the first
    assert_ptr_equal(t.match(ADAPT2_COLL_BCAST, CallShape{5, 1}, 1024), &t[1]);
    assert_ptr_equal(t.match(ADAPT2_COLL_BCAST, CallShape{5, 1}, 65536), &t[1]);
    assert_null(t.match(ADAPT2_COLL_BCAST, CallShape{5, 1}, 65537));
    assert_null(t.match(ADAPT2_COLL_REDUCE, CallShape{4, 1}, 8));
    assert_ptr_equal(t.match(ADAPT2_COLL_REDUCE, CallShape{4, 3}, 8), &t[2]);
    assert_null(t.match(ADAPT2_COLL_REDUCE, CallShape{4, 4}, 8));
}

// A call's size for the table: the whole message, whatever the collective.
void test_rules_message_bytes(void **) {
    adapt2_call_t c{};
    c.send.bytes = 100, c.recv.bytes = 400;
    for (int coll : {ADAPT2_COLL_BCAST, ADAPT2_COLL_ALLREDUCE, ADAPT2_COLL_ALLGATHER}) {
        c.collective = coll;
        assert_int_equal(message_bytes(c), 400);
    }
    for (int coll : {ADAPT2_COLL_REDUCE, ADAPT2_COLL_REDUCE_SCATTER_BLOCK}) {
        c.collective = coll;
        c.in_place = 0;
        assert_int_equal(message_bytes(c), 100);
        c.in_place = 1;  // the input is in the receive buffer
        assert_int_equal(message_bytes(c), 400);
    }
}

// plan_call with a table: a matching line sets the algorithm and settings
// and names itself as the rule; `previous` hands the call on; a collective
// whose algorithm the user set keeps it; calls no line matches are planned
// as without a table.
void test_rules_in_plan_call(void **) {
    auto table =
        std::make_shared<RuleTable>(parsed("adapt2-rules 1\n"
                                           "allreduce * * 0-4K algorithm=recursive_doubling\n"
                                           "bcast * * 64K- algorithm=chain chains=2 segment_size=16K\n"
                                           "reduce * * * previous\n"
                                           "bcast 2 * 257- detach_max_message=0\n"));
    set_rule_table(table);
    adapt2_call_t a = plain_call(ADAPT2_COLL_ALLREDUCE);
    a.send.bytes = a.recv.bytes = 4096;
    CallPlan p = plan_call(a, kShape);
    assert_int_equal(p.algorithm, ADAPT2_ALLREDUCE_RECDOUBLING);
    assert_string_equal(p.algorithm_rule, "f:2: allreduce * * 0-4K algorithm=recursive_doubling");
    a.send.bytes = a.recv.bytes = 4100;  // no line: as without a table
    adapt2_call_t plain = a;
    set_rule_table(nullptr);
    const CallPlan without = plan_call(plain, kShape);
    set_rule_table(table);
    assert_int_equal(plan_call(a, kShape).algorithm, without.algorithm);
    a.settings.algorithm = ADAPT2_ALLREDUCE_RING;  // the user's parameter wins
    a.send.bytes = a.recv.bytes = 64;
    assert_int_equal(plan_call(a, kShape).algorithm, ADAPT2_ALLREDUCE_RING);

    adapt2_call_t b = plain_call(ADAPT2_COLL_BCAST);
    b.recv.bytes = 1 << 20;
    p = plan_call(b, CallShape{16, 1});
    assert_true(p.tree.tree.shape == TreeShape::chain && p.tree.tree.param == 2);
    assert_int_equal(p.tree.segment_bytes, 16384);
    assert_string_equal(p.tree.rule, "f:3: bcast * * 64K- algorithm=chain chains=2 segment_size=16K");

    // np 2 picks latency over absorption: no detaching, hence no hellos
    adapt2_call_t pair = plain_call(ADAPT2_COLL_BCAST);
    pair.recv.bytes = 1024;
    pair.settings.tree.detach_max_message = 1 << 20;
    assert_int_equal(plan_call(pair, CallShape{2, 1}).settings.tree.detach_max_message, 0);
    assert_int_equal(plan_call(pair, CallShape{3, 1}).settings.tree.detach_max_message, 1 << 20);

    adapt2_call_t r = plain_call(ADAPT2_COLL_REDUCE);
    r.send.bytes = r.recv.bytes = 8;
    p = plan_call(r, kShape);
    assert_true(p.previous);
    assert_string_equal(p.rule, "f:4: reduce * * * previous");
    r.settings.tree.algorithm = ADAPT2_ALG_BINOMIAL;
    assert_false(plan_call(r, kShape).previous);
    set_rule_table(nullptr);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_auto_is_knomial_of_the_radix),
        cmocka_unit_test(test_auto_does_not_segment_a_flat_tree),
        cmocka_unit_test(test_forced_algorithms_keep_their_settings),
        cmocka_unit_test(test_reduce_rules),
        cmocka_unit_test(test_allgather_exchanges),
        cmocka_unit_test(test_reduce_scatter_exchanges),
        cmocka_unit_test(test_allreduce_rules),
        cmocka_unit_test(test_algorithm_names_match_the_engine),
        cmocka_unit_test(test_node_level_rule),
        cmocka_unit_test(test_node_segments),
        cmocka_unit_test(test_allgather_rules),
        cmocka_unit_test(test_reduce_scatter_rules),
        cmocka_unit_test(test_plan_call_rules),
        cmocka_unit_test(test_plan_call_plans_the_collective),
        cmocka_unit_test(test_every_rule_is_named),
        cmocka_unit_test(test_rules_parse),
        cmocka_unit_test(test_no_single_copy_takes_two_trees),
        cmocka_unit_test(test_reduce_without_single_copy),
        cmocka_unit_test(test_rules_fingerprint),
        cmocka_unit_test(test_rules_rejections),
        cmocka_unit_test(test_rules_match),
        cmocka_unit_test(test_rules_message_bytes),
        cmocka_unit_test(test_rules_in_plan_call),
    };
    return cmocka_run_group_tests_name("decision", tests, nullptr, nullptr);
}
