// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
#include "tree_cache.h"

#include "threads.h"

namespace adapt2 {

template <typename Matches, typename Build>
std::shared_ptr<const Tree> TreeCache::find_or_build(Matches matches, Build build, Entry key) {
    RaceGuard guard(lock_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
        if (matches(*it)) {
            entries_.splice(entries_.begin(), entries_, it);
            return entries_.front().tree;
        }
    }
    key.tree = std::make_shared<const Tree>(build());
    entries_.push_front(key);
    if (entries_.size() > capacity_) entries_.pop_back();
    return key.tree;
}

std::shared_ptr<const Tree> TreeCache::get(const TreeSpec &spec, int root) {
    return find_or_build([&](const Entry &e) { return !e.multi_level && e.root == root && e.spec == spec; },
                         [&] { return build_tree(spec, size_, root); }, Entry{false, spec, {}, root, nullptr});
}

std::shared_ptr<const Tree> TreeCache::get_levels(const LevelSpecs &levels, int root) {
    if (topology_.empty()) return get(levels.core, root);
    return find_or_build([&](const Entry &e) { return e.multi_level && e.root == root && e.levels == levels; },
                         [&] { return build_level_tree(topology_, levels, root); },
                         Entry{true, {}, levels, root, nullptr});
}

const NodeOrder &TreeCache::node_order() {
    RaceGuard hold(lock_);
    if (!node_order_) node_order_ = std::make_unique<const NodeOrder>(adapt2::node_order(topology_, size_));
    return *node_order_;
}

}  // namespace adapt2
