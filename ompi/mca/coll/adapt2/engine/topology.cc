// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
#include "topology.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

namespace adapt2 {
namespace {

using Domains = std::vector<std::vector<int>>;  // the ranks of each NUMA domain of one node

// Ranks grouped by node, then by NUMA domain; groups in order of their first
// rank, ranks ascending. Every rank computes the same from the same input.
std::vector<Domains> group_ranks(const Topology &topo) {
    std::vector<Domains> nodes;
    std::map<int, int> node_index;
    std::vector<std::map<int, int>> domain_index;
    for (int r = 0; r < topo.size(); ++r) {
        auto [n, new_node] = node_index.emplace(topo.node[r], static_cast<int>(nodes.size()));
        if (new_node) {
            nodes.emplace_back();
            domain_index.emplace_back();
        }
        const int ni = n->second;
        const int numa = topo.numa.empty() ? 0 : topo.numa[r];
        auto [d, new_domain] = domain_index[ni].emplace(numa, static_cast<int>(nodes[ni].size()));
        if (new_domain) nodes[ni].emplace_back();
        nodes[ni][d->second].push_back(r);
    }
    return nodes;
}

bool contains(const std::vector<int> &ranks, int rank) {
    return std::find(ranks.begin(), ranks.end(), rank) != ranks.end();
}

// A group's leader: the root if it is in the group, else its lowest rank.
int leader_of(const std::vector<int> &ranks, int root) { return contains(ranks, root) ? root : ranks.front(); }

std::vector<int> ranks_of(const Domains &node) {
    std::vector<int> all;
    for (const auto &domain : node) all.insert(all.end(), domain.begin(), domain.end());
    std::sort(all.begin(), all.end());
    return all;
}

class LevelLinker {
public:
    explicit LevelLinker(int size) : parent_(size, -1), children_(size), level_(size, kNodeLevel) {}

    // Links `ranks` by a `spec` tree rooted at `top`, one of them, with
    // edges of level `edge_level`.
    void link(const TreeSpec &spec, const std::vector<int> &ranks, int top, TreeLevel edge_level) {
        const int n = static_cast<int>(ranks.size());
        if (n < 2) return;
        const int top_index = static_cast<int>(std::find(ranks.begin(), ranks.end(), top) - ranks.begin());
        const Tree level = build_tree(spec, n, top_index);
        for (int i = 0; i < n; ++i) {
            for (int c : level.children(i)) {
                parent_[ranks[c]] = ranks[i];
                children_[ranks[i]].push_back(ranks[c]);
                level_[ranks[c]] = edge_level;
            }
        }
    }

    Tree finish(int root) { return Tree(root, std::move(parent_), children_, std::move(level_)); }

private:
    std::vector<int> parent_;
    std::vector<std::vector<int>> children_;
    std::vector<uint8_t> level_;
};

}  // namespace

int Topology::nodes() const { return static_cast<int>(std::set<int>(node.begin(), node.end()).size()); }

bool Topology::nodes_in_blocks() const {
    std::set<int> left;  // nodes whose run of ranks has ended
    for (int r = 1; r < size(); ++r) {
        if (node[r] == node[r - 1]) continue;
        left.insert(node[r - 1]);
        if (left.count(node[r])) return false;  // a node's second run
    }
    return true;
}

bool Topology::multi_level() const {
    if (nodes() > 1) return true;
    return !numa.empty() && std::set<int>(numa.begin(), numa.end()).size() > 1;
}

namespace {

// The rank before `leader` among `ranks` (ascending), cyclically.
int rank_before(const std::vector<int> &ranks, int leader) {
    const auto at = std::find(ranks.begin(), ranks.end(), leader) - ranks.begin();
    return ranks[(at + ranks.size() - 1) % ranks.size()];
}

bool one_domain_each(const std::vector<Domains> &nodes) {
    return std::all_of(nodes.begin(), nodes.end(), [](const Domains &n) { return n.size() == 1; });
}

// Tree `which` (0 or 1) of two trees inside nodes, with lanes
// (build_level_tree, topology.h).
Tree build_lane_tree(const std::vector<Domains> &nodes, const LevelSpecs &levels, int root, int which, int size) {
    LevelLinker linker(size);
    std::vector<int> entries;  // where the half enters each node
    int top = root;
    for (const Domains &node : nodes) {
        const std::vector<int> &ranks = node.front();
        const int leader = leader_of(ranks, root), second = rank_before(ranks, leader);
        const bool root_node = contains(ranks, root);
        if (root_node) top = second;
        entries.push_back(root_node || which == 1 ? second : leader);
    }
    linker.link(levels.node, entries, top, kNodeLevel);
    for (size_t n = 0; n < nodes.size(); ++n) {
        const std::vector<int> &ranks = nodes[n].front();
        const bool root_node = contains(ranks, root);
        const TreeSpec spec{TreeShape::two_tree, root_node ? which : which == 1 ? 2 : 0};
        linker.link(spec, ranks, root_node ? root : entries[n], kCoreLevel);
    }
    return linker.finish(root);
}

}  // namespace

Tree build_level_tree(const Topology &topo, const LevelSpecs &levels, int root) {
    const std::vector<Domains> nodes = group_ranks(topo);
    if (levels.lane == 1 && levels.core.shape == TreeShape::two_tree && one_domain_each(nodes)) {
        return build_lane_tree(nodes, levels, root, levels.core.param == 1 ? 1 : 0, topo.size());
    }
    LevelLinker linker(topo.size());
    // Links are added level by level, so every rank lists its node-level
    // children first, then NUMA, then core.
    std::vector<int> node_leaders;
    for (const Domains &node : nodes) node_leaders.push_back(leader_of(ranks_of(node), root));
    linker.link(levels.node, node_leaders, root, kNodeLevel);
    std::vector<std::vector<int>> domain_leaders(nodes.size());
    for (size_t n = 0; n < nodes.size(); ++n) {
        for (const auto &domain : nodes[n]) domain_leaders[n].push_back(leader_of(domain, node_leaders[n]));
        linker.link(levels.numa, domain_leaders[n], node_leaders[n], kNumaLevel);
    }
    for (size_t n = 0; n < nodes.size(); ++n) {
        for (size_t d = 0; d < nodes[n].size(); ++d)
            linker.link(levels.core, nodes[n][d], domain_leaders[n][d], kCoreLevel);
    }
    return linker.finish(root);
}

NodeOrder node_order(const Topology &topo, int size) {
    NodeOrder o;
    o.node_of.assign(static_cast<size_t>(size), 0);
    std::map<int, int> index;  // node id -> index, in order of first rank
    std::vector<int> count;
    for (int r = 0; r < size && !topo.empty(); ++r) {
        auto [n, added] = index.emplace(topo.node[r], static_cast<int>(count.size()));
        if (added) count.push_back(0);
        o.node_of[r] = n->second;
        ++count[n->second];
    }
    if (count.empty()) count.push_back(size);
    o.first.assign(count.size() + 1, 0);
    for (size_t n = 0; n < count.size(); ++n) o.first[n + 1] = o.first[n] + count[n];
    std::vector<int> next(o.first.begin(), o.first.end() - 1);
    o.rank_at.assign(static_cast<size_t>(size), 0);
    o.position.assign(static_cast<size_t>(size), 0);
    for (int r = 0; r < size; ++r) {
        const int at = next[o.node_of[r]]++;
        o.rank_at[at] = r, o.position[r] = at;
    }
    o.identity = topo.nodes_in_blocks();
    return o;
}

}  // namespace adapt2
