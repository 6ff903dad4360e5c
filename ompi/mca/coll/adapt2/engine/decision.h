// Picks the tree and segment size of a call from the user's settings, the
// message size and the communicator size. Everything it reads is equal on all
// ranks of a call, so every rank picks the same plan without talking.
#ifndef ADAPT2_ENGINE_DECISION_H
#define ADAPT2_ENGINE_DECISION_H

#include <cstddef>

#include "../adapt2_bridge.h"
#include "tree.h"

namespace adapt2 {

struct BcastPlan {
    TreeSpec tree;
    size_t segment_bytes;
};

BcastPlan plan_bcast(const adapt2_bcast_settings_t &settings, size_t bytes, int comm_size);

// Reduce (and the tree allreduce): a non-commutative op always takes the
// in-order binomial tree (its subtrees are contiguous, so combining by rank
// gives the serial order), whatever shape was asked for.
BcastPlan plan_reduce(const adapt2_tree_settings_t &settings, size_t bytes, bool commutative);

// Allreduce: recursive doubling and the ring need contiguous buffers, the
// ring a commutative op; the fused tree takes everything.
adapt2_allreduce_algorithm_t choose_allreduce(const adapt2_allreduce_settings_t &settings, size_t bytes,
                                              int comm_size, bool commutative, bool contiguous);

// The tree a forced algorithm stands for (algorithm must not be AUTO).
TreeSpec tree_for_algorithm(int algorithm, const adapt2_bcast_settings_t &settings);

}  // namespace adapt2

#endif
