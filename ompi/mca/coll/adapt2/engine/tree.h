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
};

struct TreeSpec {
    TreeShape shape = TreeShape::binomial;
    int param = 0;  // fanout (kary), radix (knomial) or chains (chain); 0 elsewhere

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
    Tree(int root, std::vector<int> parent, const std::vector<std::vector<int>> &children);

    int size() const { return static_cast<int>(parent_.size()); }
    int root() const { return root_; }
    int parent(int rank) const { return parent_[rank]; }
    RankSpan children(int rank) const {
        return {children_.data() + first_child_[rank], children_.data() + first_child_[rank + 1]};
    }
    // Edges on the longest root-to-leaf path.
    int depth() const { return depth_; }

private:
    int root_;
    int depth_ = 0;
    std::vector<int> parent_;
    std::vector<int> first_child_;  // CSR offsets into children_, size()+1 entries
    std::vector<int> children_;
};

// Builds the tree of `spec` over ranks 0..size-1 rooted at `root`.
Tree build_tree(const TreeSpec &spec, int size, int root);

std::string_view tree_shape_name(TreeShape shape);
bool tree_shape_from_name(std::string_view name, TreeShape *shape);

}  // namespace adapt2

#endif
