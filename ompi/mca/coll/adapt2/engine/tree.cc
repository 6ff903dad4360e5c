// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Tree storage: flattens per-rank child lists into one array (CSR) so a tree
// of 64k ranks is three allocations, and computes the depth once.
#include "tree.h"

#include <stdexcept>

namespace adapt2 {

Tree::Tree(int root, std::vector<int> parent, const std::vector<std::vector<int>> &children,
           std::vector<uint8_t> edge_level)
    : root_(root), parent_(std::move(parent)), edge_level_(std::move(edge_level)) {
    const int n = static_cast<int>(parent_.size());
    if (children.size() != parent_.size() || root < 0 || root >= n ||
        (!edge_level_.empty() && edge_level_.size() != parent_.size())) {
        throw std::invalid_argument("adapt2::Tree: inconsistent sizes");
    }
    first_child_.resize(n + 1);
    for (int r = 0; r < n; ++r) {
        first_child_[r + 1] = first_child_[r] + static_cast<int>(children[r].size());
    }
    children_.reserve(first_child_[n]);
    for (const auto &kids : children) children_.insert(children_.end(), kids.begin(), kids.end());

    // Depth by breadth-first walk from the root (no recursion: chains are p long).
    std::vector<int> level(n, -1), queue{root};
    level[root] = 0;
    for (size_t head = 0; head < queue.size(); ++head) {
        int r = queue[head];
        for (int c : this->children(r)) {
            if (level[c] >= 0) continue;  // malformed; validators report it
            level[c] = level[r] + 1;
            depth_ = level[c] > depth_ ? level[c] : depth_;
            queue.push_back(c);
        }
    }
}

}  // namespace adapt2
