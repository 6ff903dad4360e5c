// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// One builder per tree shape. Most shapes are built over "virtual ranks"
// (v = rank - root mod size, so the root is 0) and rotated afterwards; the
// in-order binomial is built over real ranks so that its subtrees stay
// contiguous (needed later for non-commutative reductions).
#include <algorithm>
#include <stdexcept>

#include "tree.h"

namespace adapt2 {
namespace {

using ChildLists = std::vector<std::vector<int>>;

int lowest_set_bit(int v) { return v & -v; }

// Serves the child with the most ranks below it first: its path is the
// longest, so starting it first shortens the whole broadcast. `span` gives the
// nominal size of a child's subtree; the end of the rank range truncates it.
template <typename Span>
void largest_first(int size, std::vector<int> &kids, Span span) {
    auto actual = [&](int c) { return std::min<long long>(span(c), size - c); };
    std::stable_sort(kids.begin(), kids.end(), [&](int a, int b) { return actual(a) > actual(b); });
}

void binomial_children(int size, ChildLists &kids) {
    for (int v = 0; v < size; ++v) {
        int limit = v == 0 ? size : lowest_set_bit(v);
        int mask = 1;
        while (mask * 2 < limit) mask *= 2;
        for (; mask > 0; mask /= 2) {
            if (mask < limit && v + mask < size) kids[v].push_back(v + mask);
        }
        // child v + m spans [v + m, v + 2m)
        largest_first(size, kids[v], [v](int c) { return static_cast<long long>(c - v); });
    }
}

void knomial_children(int size, int radix, ChildLists &kids) {
    for (int v = 0; v < size; ++v) {
        // v's own lowest non-zero base-`radix` digit bounds the digits it may add.
        long long limit = size;
        if (v != 0) {
            limit = 1;
            while ((v / limit) % radix == 0) limit *= radix;
        }
        long long weight = 1;
        while (weight * radix < limit) weight *= radix;
        for (; weight >= 1; weight /= radix) {
            for (int digit = 1; digit < radix; ++digit) {
                long long child = v + digit * weight;
                if (weight < limit && child < size) kids[v].push_back(static_cast<int>(child));
            }
        }
        largest_first(size, kids[v], [v, radix, limit](int c) {
            long long w = 1, off = c - v;  // the weight of the single digit v adds
            while (off % (w * radix) == 0 && w * radix < limit) w *= radix;
            return w;
        });
    }
}

void kary_children(int size, int fanout, ChildLists &kids) {
    for (long long v = 0; v < size; ++v) {
        for (long long c = fanout * v + 1; c <= fanout * v + fanout && c < size; ++c) {
            kids[v].push_back(static_cast<int>(c));
        }
    }
}

void chain_children(int size, int chains, ChildLists &kids) {
    int others = size - 1;
    if (chains > others) chains = others;
    int next = 1;
    for (int j = 0; j < chains; ++j) {
        int length = others / chains + (j < others % chains ? 1 : 0);
        int prev = 0;
        for (int i = 0; i < length; ++i, ++next) {
            kids[prev].push_back(next);
            prev = next;
        }
    }
}

void flat_children(int size, ChildLists &kids) {
    for (int v = 1; v < size; ++v) kids[0].push_back(v);
}

// Two trees (Sanders, Speck and Traff's two-tree broadcast; NCCL's double
// binary tree): the m = size - 1 non-root ranks get labels 1..m and form an
// in-order binary tree by label, whose leaves are the odd labels. Tree 0
// labels virtual rank v as v, tree 1 as v + 1 (m as 1): a rank with an even
// label in one tree has an odd one in the other, so it is interior in at
// most one. The root feeds each tree's top label.
//
// Tree 2 is tree 1 for a rank that is not tree 0's root: rooted at the rank
// before tree 0's root R (virtual 0 here, R - 1 there), with the other ranks
// where tree 1 has them and R where tree 1 has R - 1, i.e. at virtual rank
// m's place, which is a leaf in both trees when m is odd (an even number of
// ranks). So a node's second leader can feed half of a message into its
// node while its first leader feeds the other half (build_level_tree's
// lanes), and still no rank is interior twice. Virtual rank v of tree 2
// takes the place of tree 1's v - 1 (v = 1: of m).
int two_tree_label(int v, int m, int which) {
    if (which == 0) return v;
    if (which == 2) v = v == 1 ? m : v - 1;
    return v % m + 1;
}

void two_tree_children(int size, int which, ChildLists &kids) {
    const int m = size - 1;
    if (m < 1) return;
    std::vector<int> rank_of(m + 1);
    for (int v = 1; v <= m; ++v) rank_of[two_tree_label(v, m, which)] = v;
    int top = 1;
    while (top * 2 <= m) top *= 2;
    kids[0].push_back(rank_of[top]);
    for (int j = 1; j <= m; ++j) {
        const int b = lowest_set_bit(j);
        if (b == 1) continue;                            // odd labels are leaves
        kids[rank_of[j]].push_back(rank_of[j - b / 2]);  // the left half is always there
        int step = b / 2;                                // the right half, cut at m
        while (step >= 1 && j + step > m) step /= 2;
        if (step >= 1) kids[rank_of[j]].push_back(rank_of[j + step]);
    }
}

// Ranks [lo, hi) hang below `top`; the half not holding `top` becomes a child
// subtree rooted at its rank nearest to `top`, recursively.
void in_order_children(int lo, int hi, int top, ChildLists &kids) {
    while (hi - lo > 1) {
        int mid = lo + (hi - lo + 1) / 2;
        if (top < mid) {
            kids[top].push_back(mid);
            in_order_children(mid, hi, mid, kids);
            hi = mid;
        } else {
            kids[top].push_back(mid - 1);
            in_order_children(lo, mid, mid - 1, kids);
            lo = mid;
        }
    }
}

Tree from_children(int root, ChildLists &&kids) {
    std::vector<int> parent(kids.size(), -1);
    for (size_t r = 0; r < kids.size(); ++r) {
        for (int c : kids[r]) parent[c] = static_cast<int>(r);
    }
    return Tree(root, std::move(parent), kids);
}

// Renames virtual rank v to real rank (v + root) mod size.
Tree rotated(int size, int root, const ChildLists &vkids) {
    ChildLists kids(size);
    for (int v = 0; v < size; ++v) {
        for (int c : vkids[v]) kids[(v + root) % size].push_back((c + root) % size);
    }
    return from_children(root, std::move(kids));
}

int at_least(int value, int minimum) { return value < minimum ? minimum : value; }

}  // namespace

Tree build_tree(const TreeSpec &spec, int size, int root) {
    if (size < 1 || root < 0 || root >= size) throw std::invalid_argument("adapt2: bad tree size/root");
    ChildLists kids(size);
    switch (spec.shape) {
    case TreeShape::in_order_binomial:
        in_order_children(0, size, root, kids);
        return from_children(root, std::move(kids));
    case TreeShape::binomial: binomial_children(size, kids); break;
    case TreeShape::binary: kary_children(size, 2, kids); break;
    case TreeShape::kary: kary_children(size, at_least(spec.param, 1), kids); break;
    case TreeShape::knomial: knomial_children(size, at_least(spec.param, 2), kids); break;
    case TreeShape::chain: chain_children(size, at_least(spec.param, 1), kids); break;
    case TreeShape::pipeline: chain_children(size, 1, kids); break;
    case TreeShape::flat: flat_children(size, kids); break;
    case TreeShape::two_tree: two_tree_children(size, spec.param == 1 || spec.param == 2 ? spec.param : 0, kids); break;
    }
    return rotated(size, root, kids);
}

namespace {
struct NamedShape {
    std::string_view name;
    TreeShape shape;
};
constexpr NamedShape kShapeNames[] = {
    {"binomial", TreeShape::binomial}, {"in_order_binomial", TreeShape::in_order_binomial},
    {"binary", TreeShape::binary},     {"kary", TreeShape::kary},
    {"knomial", TreeShape::knomial},   {"chain", TreeShape::chain},
    {"pipeline", TreeShape::pipeline}, {"flat", TreeShape::flat},
    {"two_tree", TreeShape::two_tree},
};
}  // namespace

std::string_view tree_shape_name(TreeShape shape) {
    for (const auto &n : kShapeNames) {
        if (n.shape == shape) return n.name;
    }
    return "unknown";
}

bool tree_shape_from_name(std::string_view name, TreeShape *shape) {
    for (const auto &n : kShapeNames) {
        if (n.name == name) {
            *shape = n.shape;
            return true;
        }
    }
    return false;
}

}  // namespace adapt2
