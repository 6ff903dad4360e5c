// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Communication trees over the ranks of a communicator.
//
// A Tree is immutable once built and shared (read-only) by every collective
// that uses it, on any thread; builders live in tree_shapes.cc. Later levels
// (node, socket, core) compose trees built here.
#ifndef ADAPT2_ENGINE_TREE_H
#define ADAPT2_ENGINE_TREE_H

#include <cstdint>
#include <string_view>
#include <vector>

namespace adapt2 {

enum class TreeShape : uint8_t {
    binomial,           // log2 depth; children served largest subtree first
    in_order_binomial,  // log2 depth; every subtree spans consecutive ranks
    binary,             // k-ary with k = 2
    kary,               // each rank has up to `fanout` children
    knomial,            // binomial generalised to radix k
    chain,              // root feeds `chains` chains of near-equal length
    pipeline,           // a single chain
    flat,               // root sends to everyone
    two_tree,           // param 0 or 1: one of two binary trees in which no rank is interior twice;
                        // 2: tree 1 for a second node leader (build_level_tree's lanes, tree_shapes.cc)
};

struct TreeSpec {
    TreeShape shape = TreeShape::binomial;
    int param = 0;  // fanout (kary), radix (knomial), chains (chain), which tree (two_tree); 0 elsewhere

    bool operator==(const TreeSpec &o) const { return shape == o.shape && param == o.param; }
};

// Children of one rank, in the order they should be served.
struct RankSpan {
    const int *first;
    const int *last;
    const int *begin() const { return first; }
    const int *end() const { return last; }
    int size() const { return static_cast<int>(last - first); }
    int operator[](int i) const { return first[i]; }
};

class Tree {
public:
    // `parent[r]` is -1 for the root; `children[r]` lists r's children in serving order.
    // `edge_level[r]` (optional) says which level of a multi-level tree the
    // edge from r's parent to r belongs to (topology.h); 0 for every edge if empty.
    Tree(int root, std::vector<int> parent, const std::vector<std::vector<int>> &children,
         std::vector<uint8_t> edge_level = {});

    int size() const { return static_cast<int>(parent_.size()); }
    int root() const { return root_; }
    int parent(int rank) const { return parent_[rank]; }
    RankSpan children(int rank) const {
        return {children_.data() + first_child_[rank], children_.data() + first_child_[rank + 1]};
    }
    // Edges on the longest root-to-leaf path.
    int depth() const { return depth_; }
    // The level of the edge from rank's parent to rank (0 in single-level trees).
    int edge_level(int rank) const { return edge_level_.empty() ? 0 : edge_level_[rank]; }

private:
    int root_;
    int depth_ = 0;
    std::vector<int> parent_;
    std::vector<int> first_child_;  // CSR offsets into children_, size()+1 entries
    std::vector<int> children_;
    std::vector<uint8_t> edge_level_;  // empty, or one per rank
};

// Builds the tree of `spec` over ranks 0..size-1 rooted at `root`.
Tree build_tree(const TreeSpec &spec, int size, int root);

std::string_view tree_shape_name(TreeShape shape);
bool tree_shape_from_name(std::string_view name, TreeShape *shape);

}  // namespace adapt2

#endif
