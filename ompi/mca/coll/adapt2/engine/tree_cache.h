// Per-communicator cache of built trees, keyed by (shape, parameter, root).
// Trees are shared read-only; the cache keeps the most recently used ones so
// memory stays bounded when a communicator broadcasts from many roots.
#ifndef ADAPT2_ENGINE_TREE_CACHE_H
#define ADAPT2_ENGINE_TREE_CACHE_H

#include <list>
#include <memory>
#include <mutex>

#include "tree.h"

namespace adapt2 {

class TreeCache {
public:
    explicit TreeCache(int comm_size, size_t capacity = 32) : size_(comm_size), capacity_(capacity) {}

    std::shared_ptr<const Tree> get(const TreeSpec &spec, int root);

private:
    struct Entry {
        TreeSpec spec;
        int root;
        std::shared_ptr<const Tree> tree;
    };
    int size_;
    size_t capacity_;
    std::mutex lock_;           // taken once per collective call, never per segment
    std::list<Entry> entries_;  // most recently used first
};

}  // namespace adapt2

#endif
