// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Two-tree calls (docs/design.md, "Two trees"): the message's two halves,
// each a flow of its own down one of the two trees (TreeShape::two_tree).
// What the broadcast (bcast.cc) and the reduce (reduce.cc) share.
#ifndef ADAPT2_ENGINE_TWO_TREE_H
#define ADAPT2_ENGINE_TWO_TREE_H

#include <memory>
#include <string>

#include "comm.h"
#include "decision.h"
#include "detach.h"
#include "segments.h"

namespace adapt2 {

// Where the message is cut: after the first half of its segments, else in
// the middle; whole `unit`s either way. 0 when it has fewer than two units
// or the plan has no two trees: then one flow down the first tree.
inline size_t two_tree_cut(const BcastPlan &plan, size_t bytes, size_t unit) {
    if (!two_tree_split(plan) || unit == 0 || bytes / unit < 2) return 0;
    const Segments segments(bytes, plan.segment_bytes, unit);
    if (segments.count() > 1) return segments.offset((segments.count() + 1) / 2);
    return bytes / unit / 2 * unit;
}

// Tags of the flow of one half (or of the whole message) of `bytes`.
inline int half_tags(const adapt2_tree_settings_t &s, const BcastPlan &plan, size_t bytes, size_t unit) {
    return call_tags(s, Segments(bytes, plan.segment_bytes, unit), bytes);
}

// The tree of half `which` (0 or 1): the two trees, flat or between nodes.
inline std::shared_ptr<const Tree> half_tree(Comm &comm, const BcastPlan &plan, int root, int which) {
    if (!plan.multi_level) return comm.trees().get({TreeShape::two_tree, which}, root);
    LevelSpecs levels = plan.levels;  // each level of two trees takes tree `which`
    if (levels.node.shape == TreeShape::two_tree) levels.node.param = which;
    if (levels.core.shape == TreeShape::two_tree) levels.core.param = which;  // and the plan's lane
    return comm.trees().get_levels(levels, root);
}

// The plan line's words for a message cut at `cut`: "; halves of A and B
// bytes " + how.
inline std::string halves_text(size_t cut, size_t bytes, const char *how) {
    return "; halves of " + std::to_string(cut) + " and " + std::to_string(bytes - cut) + " bytes " + how;
}

// Bytes [from, from + bytes) of a message, as a message of its own.
inline adapt2_buffer_t part_of(const adapt2_buffer_t &b, size_t from, size_t bytes) {
    adapt2_buffer_t part = b;
    part.bytes = bytes;
    if (part.contig) part.contig += from;
    part.stream_offset += from;
    return part;
}

}  // namespace adapt2

#endif
