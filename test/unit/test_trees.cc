// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Tree builders: every shape, every root, p = 1..1024. Each tree must reach
// every rank exactly once from the root, parent and child lists must agree,
// and the depth must respect the shape's bound.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "cmocka_cxx.h"
#include "tree.h"
#include "tree_cache.h"

using namespace adapt2;

namespace {

const TreeSpec kSpecs[] = {
    {TreeShape::binomial, 0}, {TreeShape::in_order_binomial, 0}, {TreeShape::binary, 0},  {TreeShape::kary, 3},
    {TreeShape::kary, 8},     {TreeShape::knomial, 3},           {TreeShape::knomial, 4}, {TreeShape::chain, 1},
    {TreeShape::chain, 4},    {TreeShape::pipeline, 0},          {TreeShape::flat, 0},    {TreeShape::two_tree, 0},
    {TreeShape::two_tree, 1},
};

int ceil_log(int base, int p) {  // smallest d with base^d >= p
    int d = 0;
    for (long long v = 1; v < p; v *= base) ++d;
    return d;
}

int depth_bound(const TreeSpec &s, int p) {
    switch (s.shape) {
    case TreeShape::binomial:
    case TreeShape::in_order_binomial: return ceil_log(2, p);
    case TreeShape::binary: return ceil_log(2, p + 1) - 1;
    case TreeShape::kary: return ceil_log(s.param, (s.param - 1) * p + 1) - 1;
    case TreeShape::knomial: return ceil_log(s.param, p);
    case TreeShape::chain: return (p - 1 + s.param - 1) / s.param;
    case TreeShape::pipeline: return p - 1;
    case TreeShape::flat: return p > 1 ? 1 : 0;
    case TreeShape::two_tree: return ceil_log(2, p);  // the root's edge, then an in-order binary tree
    }
    return -1;
}

std::string describe(const TreeSpec &s, int p, int root) {
    return std::string(tree_shape_name(s.shape)) + "(" + std::to_string(s.param) + ") p=" + std::to_string(p) +
           " root=" + std::to_string(root);
}

// Returns an empty string when the tree is valid, else what is wrong.
std::string check_tree(const Tree &t, const TreeSpec &s, int p, int root) {
    if (t.size() != p || t.root() != root || t.parent(root) != -1) return "size/root";
    std::vector<int> as_child(p, 0);
    for (int r = 0; r < p; ++r) {
        for (int c : t.children(r)) {
            if (c < 0 || c >= p) return "child out of range";
            if (t.parent(c) != r) return "parent/child disagree at " + std::to_string(c);
            ++as_child[c];
        }
    }
    for (int r = 0; r < p; ++r) {
        if (as_child[r] != (r == root ? 0 : 1))
            return "rank " + std::to_string(r) + " listed " + std::to_string(as_child[r]) + " times";
    }
    // Walk from the root: every rank reached exactly once.
    std::vector<int> seen(p, 0), queue{root};
    seen[root] = 1;
    for (size_t h = 0; h < queue.size(); ++h) {
        for (int c : t.children(queue[h])) {
            if (seen[c]++) return "rank reached twice";
            queue.push_back(c);
        }
    }
    if (static_cast<int>(queue.size()) != p) return "not every rank reached";
    if (t.depth() > depth_bound(s, p)) {
        return "depth " + std::to_string(t.depth()) + " > bound " + std::to_string(depth_bound(s, p));
    }
    return "";
}

// Subtree sizes, for the ordering and contiguity properties.
std::vector<int> subtree_sizes(const Tree &t) {
    std::vector<int> order{t.root()}, size(t.size(), 1);
    for (size_t h = 0; h < order.size(); ++h) {
        for (int c : t.children(order[h])) order.push_back(c);
    }
    for (size_t i = order.size(); i-- > 1;) size[t.parent(order[i])] += size[order[i]];
    return size;
}

// Every root for p <= 128; above, a spread of roots (the shapes are built by
// rotation, so a root's structure does not depend on p beyond these).
std::vector<int> roots_for(int p) {
    std::vector<int> roots;
    if (p <= 128) {
        for (int r = 0; r < p; ++r) roots.push_back(r);
    } else {
        for (int r : {0, 1, 2, p / 3, p / 2, p - 2, p - 1}) roots.push_back(r);
        for (int r = 5; r < p; r += 97) roots.push_back(r);
    }
    return roots;
}

// Under AddressSanitizer (CI's second build) every check costs about ten
// times more: the plain build sweeps p = 1..1024 and every root at 1024, the
// sanitizer build p = 1..256 and every 8th root.
#ifdef __SANITIZE_ADDRESS__
constexpr int kMaxRanks = 256, kRootStep = 8;
#else
constexpr int kMaxRanks = 1024, kRootStep = 1;
#endif

void test_all_shapes_valid(void **) {
    long checked = 0;
    for (const auto &s : kSpecs) {
        for (int p = 1; p <= kMaxRanks; ++p) {
            for (int root : roots_for(p)) {
                std::string err = check_tree(build_tree(s, p, root), s, p, root);
                if (!err.empty()) fail_msg("%s: %s", describe(s, p, root).c_str(), err.c_str());
                ++checked;
            }
        }
    }
    std::printf("# %ld trees checked\n", checked);
}

void test_every_root_at_1024(void **) {
    for (const auto &s : kSpecs) {
        for (int root = 0; root < 1024; root += kRootStep) {
            std::string err = check_tree(build_tree(s, 1024, root), s, 1024, root);
            if (!err.empty()) fail_msg("%s: %s", describe(s, 1024, root).c_str(), err.c_str());
        }
    }
}

// Binomial and k-nomial trees serve the largest subtree first, so the
// longest remaining path starts first.
void test_binomial_serves_largest_first(void **) {
    for (int p : {2, 7, 8, 100, 1000, 1024}) {
        for (TreeSpec spec : {TreeSpec{TreeShape::binomial, 0}, TreeSpec{TreeShape::knomial, 3}}) {
            Tree t = build_tree(spec, p, p / 3);
            auto size = subtree_sizes(t);
            for (int r = 0; r < p; ++r) {
                auto kids = t.children(r);
                for (int i = 1; i < kids.size(); ++i) assert_true(size[kids[i - 1]] >= size[kids[i]]);
            }
        }
    }
}

// In-order binomial: every subtree covers consecutive ranks (what in-order
// reductions of non-commutative operations need).
void test_in_order_subtrees_contiguous(void **) {
    for (int p = 1; p <= 200; ++p) {
        for (int root = 0; root < p; ++root) {
            Tree t = build_tree({TreeShape::in_order_binomial, 0}, p, root);
            auto size = subtree_sizes(t);
            for (int r = 0; r < p; ++r) {
                int lo = r, hi = r;  // extent of r's subtree
                std::vector<int> stack{r};
                while (!stack.empty()) {
                    int x = stack.back();
                    stack.pop_back();
                    lo = x < lo ? x : lo;
                    hi = x > hi ? x : hi;
                    for (int c : t.children(x)) stack.push_back(c);
                }
                if (hi - lo + 1 != size[r]) fail_msg("p=%d root=%d: subtree of %d not contiguous", p, root, r);
            }
        }
    }
}

void test_chain_lengths_balanced(void **) {
    Tree t = build_tree({TreeShape::chain, 4}, 11, 3);  // 10 others: chains of 3,3,2,2
    assert_int_equal(t.children(3).size(), 4);
    assert_int_equal(t.depth(), 3);
    Tree few = build_tree({TreeShape::chain, 8}, 3, 0);  // more chains than ranks
    assert_int_equal(few.children(0).size(), 2);
}

// The two trees of a two-tree broadcast: the root feeds each once, every
// other rank has at most 2 children in each and children in at most one
// (so it forwards about one copy of the message; issue 16).
void test_two_trees_interior_once(void **) {
    for (int p = 1; p <= kMaxRanks; ++p) {
        for (int root : roots_for(p)) {
            const Tree a = build_tree({TreeShape::two_tree, 0}, p, root);
            const Tree b = build_tree({TreeShape::two_tree, 1}, p, root);
            const std::string where = describe({TreeShape::two_tree, 0}, p, root);
            if (p > 1 && (a.children(root).size() != 1 || b.children(root).size() != 1))
                fail_msg("%s: the root feeds %d and %d", where.c_str(), a.children(root).size(),
                         b.children(root).size());
            for (int r = 0; r < p; ++r) {
                if (r == root) continue;
                const int in_a = a.children(r).size(), in_b = b.children(r).size();
                if (in_a > 2 || in_b > 2 || (in_a > 0 && in_b > 0))
                    fail_msg("%s: rank %d has %d and %d children", where.c_str(), r, in_a, in_b);
            }
        }
    }
}

void test_names_round_trip(void **) {
    for (const auto &s : kSpecs) {
        TreeShape back;
        assert_true(tree_shape_from_name(tree_shape_name(s.shape), &back));
        assert_true(back == s.shape);
    }
    TreeShape unused;
    assert_false(tree_shape_from_name("binomail", &unused));
}

void test_bad_arguments_throw(void **) {
    bool threw = false;
    try {
        build_tree({TreeShape::binomial, 0}, 4, 4);
    } catch (const std::invalid_argument &) {
        threw = true;
    }
    assert_true(threw);
}

void test_cache_shares_and_bounds(void **) {
    TreeCache cache(16, 4);
    auto a = cache.get({TreeShape::binomial, 0}, 3);
    auto b = cache.get({TreeShape::binomial, 0}, 3);
    assert_ptr_equal(a.get(), b.get());
    for (int root = 0; root < 10; ++root) cache.get({TreeShape::flat, 0}, root);
    auto c = cache.get({TreeShape::binomial, 0}, 3);  // evicted and rebuilt
    assert_ptr_not_equal(a.get(), c.get());
    assert_int_equal(a->root(), 3);  // the evicted tree stays valid for its holders
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_shapes_valid),
        cmocka_unit_test(test_every_root_at_1024),
        cmocka_unit_test(test_binomial_serves_largest_first),
        cmocka_unit_test(test_in_order_subtrees_contiguous),
        cmocka_unit_test(test_chain_lengths_balanced),
        cmocka_unit_test(test_two_trees_interior_once),
        cmocka_unit_test(test_names_round_trip),
        cmocka_unit_test(test_bad_arguments_throw),
        cmocka_unit_test(test_cache_shares_and_bounds),
    };
    return cmocka_run_group_tests_name("trees", tests, nullptr, nullptr);
}
