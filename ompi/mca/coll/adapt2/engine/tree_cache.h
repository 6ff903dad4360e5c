// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Per-communicator cache of built trees, keyed by (shape, parameter, root),
// or for multi-level trees by (the shape of each level, root). Trees are
// shared read-only; the cache keeps the most recently used ones so memory
// stays bounded when a communicator broadcasts from many roots.
#ifndef ADAPT2_ENGINE_TREE_CACHE_H
#define ADAPT2_ENGINE_TREE_CACHE_H

#include <list>
#include <memory>
#include <mutex>

#include "topology.h"
#include "tree.h"

namespace adapt2 {

class TreeCache {
public:
    explicit TreeCache(int comm_size, size_t capacity = 32) : size_(comm_size), capacity_(capacity) {}
    // A communicator whose ranks' places are known (multi-level trees).
    explicit TreeCache(Topology topology, size_t capacity = 32)
        : size_(topology.size()),
          capacity_(capacity),
          topology_(std::move(topology)),
          nodes_(topology_.empty() ? 1 : topology_.nodes()),
          nodes_in_blocks_(topology_.nodes_in_blocks()) {}

    std::shared_ptr<const Tree> get(const TreeSpec &spec, int root);
    // Needs a topology (without one: the flat tree of levels.core).
    std::shared_ptr<const Tree> get_levels(const LevelSpecs &levels, int root);
    const Topology &topology() const { return topology_; }
    int nodes() const { return nodes_; }  // counted once: decisions read it every call
    bool nodes_in_blocks() const { return nodes_in_blocks_; }
    // Built at the first use (p entries: communicators that never gather
    // spend nothing on it), then read-only.
    const NodeOrder &node_order();

private:
    struct Entry {
        bool multi_level;
        TreeSpec spec;      // flat trees
        LevelSpecs levels;  // multi-level trees
        int root;
        std::shared_ptr<const Tree> tree;
    };
    template <typename Matches, typename Build>
    std::shared_ptr<const Tree> find_or_build(Matches matches, Build build, Entry key);

    int size_;
    size_t capacity_;
    Topology topology_;
    int nodes_ = 1;
    bool nodes_in_blocks_ = true;
    std::unique_ptr<const NodeOrder> node_order_;
    std::mutex lock_;           // taken once per collective call, never per segment
    std::list<Entry> entries_;  // most recently used first
};

}  // namespace adapt2

#endif
