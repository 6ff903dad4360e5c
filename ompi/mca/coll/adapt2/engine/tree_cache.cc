#include "tree_cache.h"

namespace adapt2 {

std::shared_ptr<const Tree> TreeCache::get(const TreeSpec &spec, int root) {
    std::lock_guard<std::mutex> guard(lock_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
        if (it->root == root && it->spec == spec) {
            entries_.splice(entries_.begin(), entries_, it);
            return entries_.front().tree;
        }
    }
    auto tree = std::make_shared<const Tree>(build_tree(spec, size_, root));
    entries_.push_front({spec, root, tree});
    if (entries_.size() > capacity_) entries_.pop_back();
    return tree;
}

}  // namespace adapt2
