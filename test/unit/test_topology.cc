// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Multi-level trees (engine/topology.h) for many placements and every root:
// each rank is reached exactly once; exactly nodes-1 edges cross nodes and
// domains-1 cross NUMA domains inside a node; leaders are the root or the
// lowest rank of their group; slow-level children come first. Then whole
// broadcasts, reduces and allreduces over the fake network on such trees:
// data checked on every rank, inter-node sends counted against nodes-1
// transfers per segment (broadcast).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "cmocka_cxx.h"
#include "collectives.h"
#include "decision.h"
#include "fake_transport.h"
#include "segments.h"
#include "test_support.h"
#include "topology.h"

using namespace adapt2;
using namespace adapt2::test;

namespace {

// ---- placements ---------------------------------------------------------
struct Placement {
    std::string name;
    Topology topo;
};

Topology block(int p, int per_node) {
    Topology t;
    for (int r = 0; r < p; ++r) t.node.push_back(r / per_node);
    return t;
}

Topology cyclic(int p, int nodes) {
    Topology t;
    for (int r = 0; r < p; ++r) t.node.push_back(r % nodes);
    return t;
}

// Uneven nodes with arbitrary (non-dense) ids, and two NUMA domains per node
// assigned by parity when `numa`.
Topology uneven(int p, uint64_t seed, bool numa) {
    std::mt19937_64 rng(seed);
    Topology t;
    for (int r = 0; r < p; ++r) {
        t.node.push_back(static_cast<int>(rng() % 5) * 17 + 3);
        if (numa) t.numa.push_back(static_cast<int>(rng() % 2));
    }
    return t;
}

std::vector<Placement> placements() {
    std::vector<Placement> all;
    for (int p : {1, 2, 5, 8, 13, 32}) {
        all.push_back({"block2 p=" + std::to_string(p), block(p, 2)});
        all.push_back({"block3 p=" + std::to_string(p), block(p, 3)});
        all.push_back({"cyclic4 p=" + std::to_string(p), cyclic(p, 4)});
        all.push_back({"one node p=" + std::to_string(p), block(p, p)});
        for (uint64_t seed : {1, 2, 3}) {
            all.push_back({"uneven p=" + std::to_string(p) + " seed=" + std::to_string(seed), uneven(p, seed, false)});
            all.push_back(
                {"uneven+numa p=" + std::to_string(p) + " seed=" + std::to_string(seed), uneven(p, seed, true)});
        }
    }
    return all;
}

const LevelSpecs kLevelShapes[] = {
    {{TreeShape::binomial, 0}, {TreeShape::flat, 0}, {TreeShape::knomial, 8}},
    {{TreeShape::pipeline, 0}, {TreeShape::binomial, 0}, {TreeShape::binomial, 0}},
    {{TreeShape::chain, 2}, {TreeShape::pipeline, 0}, {TreeShape::kary, 3}},
    {{TreeShape::flat, 0}, {TreeShape::flat, 0}, {TreeShape::in_order_binomial, 0}},
};

int domain_of(const Topology &t, int r) { return t.numa.empty() ? 0 : t.numa[r]; }
bool same_domain(const Topology &t, int a, int b) { return t.same_node(a, b) && domain_of(t, a) == domain_of(t, b); }

// ---- the builder ----------------------------------------------------------
// Reached exactly once, from the root, parents and children consistent.
void check_reach(const std::string &what, const Tree &tree, int root) {
    const int p = tree.size();
    if (tree.root() != root || tree.parent(root) != -1) fail_msg("%s: bad root", what.c_str());
    std::vector<int> reached(p, 0), queue{root};
    reached[root] = 1;
    for (size_t i = 0; i < queue.size(); ++i) {
        for (int c : tree.children(queue[i])) {
            if (tree.parent(c) != queue[i])
                fail_msg("%s: %d lists %d, whose parent is %d", what.c_str(), queue[i], c, tree.parent(c));
            if (reached[c]++) fail_msg("%s: rank %d reached twice", what.c_str(), c);
            queue.push_back(c);
        }
    }
    if (static_cast<int>(queue.size()) != p) fail_msg("%s: %zu of %d ranks reached", what.c_str(), queue.size(), p);
}

void check_tree(const std::string &what, const Topology &t, const Tree &tree, int root) {
    const int p = t.size();
    if (tree.size() != p) fail_msg("%s: bad size", what.c_str());
    check_reach(what, tree, root);
    // Edge counts per level, and leaders.
    std::set<int> nodes(t.node.begin(), t.node.end());
    std::set<std::pair<int, int>> domains;
    for (int r = 0; r < p; ++r) domains.insert({t.node[r], domain_of(t, r)});
    int inter_node = 0, inter_domain = 0;
    for (int r = 0; r < p; ++r) {
        const int up = tree.parent(r);
        if (up < 0) continue;
        if (!t.same_node(r, up)) {
            ++inter_node;
            int lowest = p;
            for (int q = 0; q < p; ++q)
                if (t.same_node(q, r)) lowest = std::min(lowest, q);
            if (r != lowest)
                fail_msg("%s: node leader %d is not the lowest rank %d of its node", what.c_str(), r, lowest);
        } else if (!same_domain(t, r, up)) {
            ++inter_domain;
        }
        // Children on other nodes are served before those on this node.
        bool local_seen = false;
        for (int c : tree.children(r)) {
            if (t.same_node(c, r))
                local_seen = true;
            else if (local_seen)
                fail_msg("%s: rank %d serves a remote child after a local one", what.c_str(), r);
        }
    }
    if (inter_node != static_cast<int>(nodes.size()) - 1)
        fail_msg("%s: %d inter-node edges for %zu nodes", what.c_str(), inter_node, nodes.size());
    if (inter_domain != static_cast<int>(domains.size() - nodes.size()))
        fail_msg("%s: %d inter-domain edges, expected %zu", what.c_str(), inter_domain, domains.size() - nodes.size());
}

void test_builder_all_placements_and_roots(void **) {
    long trees = 0;
    for (const Placement &pl : placements()) {
        for (const LevelSpecs &levels : kLevelShapes) {
            for (int root = 0; root < pl.topo.size(); ++root) {
                std::string what = pl.name + " root=" + std::to_string(root) +
                                   " node shape=" + std::string(tree_shape_name(levels.node.shape));
                check_tree(what, pl.topo, build_level_tree(pl.topo, levels, root), root);
                ++trees;
            }
        }
    }
    std::printf("# %ld multi-level trees checked\n", trees);
}

void test_multi_level_detection(void **) {
    if (block(8, 8).multi_level()) fail_msg("one node, no NUMA: not multi-level");
    if (!block(8, 2).multi_level()) fail_msg("four nodes: multi-level");
    Topology t = block(8, 8);
    t.numa = {0, 0, 0, 0, 1, 1, 1, 1};
    if (!t.multi_level()) fail_msg("one node, two NUMA domains: multi-level");
    if (block(8, 2).nodes() != 4 || cyclic(7, 3).nodes() != 3) fail_msg("node count");
}

// Block placement (each node's ranks consecutive), and the node order the
// multi-level allgather works in: nodes by lowest rank, ranks ascending.
void test_node_order(void **) {
    if (!block(7, 3).nodes_in_blocks() || !Topology{}.nodes_in_blocks()) fail_msg("blocks not seen");
    if (cyclic(8, 2).nodes_in_blocks()) fail_msg("round-robin taken for blocks");
    if (Topology{{5, 5, 9, 9, 5}, {}}.nodes_in_blocks()) fail_msg("a node's second run missed");
    const NodeOrder b = node_order(block(7, 3), 7);
    if (!b.identity || b.rank_at != std::vector<int>({0, 1, 2, 3, 4, 5, 6}))
        fail_msg("block placement: the identity order");
    const NodeOrder o = node_order(Topology{{9, 4, 9, 4, 4}, {}}, 5);
    if (o.rank_at != std::vector<int>({0, 2, 1, 3, 4}) || o.first != std::vector<int>({0, 2, 5}))
        fail_msg("node order of 9,4,9,4,4 wrong");
    if (o.leader(1) != 1 || o.ranks_on(1) != 3 || o.position[3] != 3 || o.node_of[2] != 0 || o.identity)
        fail_msg("node order's lookups wrong");
    for (int p : {1, 6, 13}) {
        const Topology t = uneven(p, 7, false);
        const NodeOrder u = node_order(t, p);
        bool in_rank_order = true;
        for (int at = 0; at < p; ++at) in_rank_order &= u.rank_at[at] == at;
        if (u.identity != in_rank_order) fail_msg("uneven p=%d: the identity flag is %d", p, u.identity);
        for (int at = 1; at < p; ++at) {
            const int a = u.rank_at[at - 1], b = u.rank_at[at];
            const bool same = t.node[a] == t.node[b];
            if (u.position[b] != at || (same && a > b) || (!same && u.first[u.node_of[b]] != at))
                fail_msg("uneven p=%d: position %d out of node order", p, at);
        }
    }
    if (node_order(Topology{}, 4).nodes() != 1) fail_msg("no topology: one node");
}

void test_cache_keys(void **) {
    TreeCache cache(block(8, 2));
    auto a = cache.get_levels(kLevelShapes[0], 3), b = cache.get_levels(kLevelShapes[0], 3);
    auto c = cache.get_levels(kLevelShapes[1], 3), d = cache.get_levels(kLevelShapes[0], 4);
    auto flat = cache.get(TreeSpec{TreeShape::binomial, 0}, 3);
    if (a != b) fail_msg("same key, different trees");
    if (a == c || a == d || a == flat) fail_msg("different keys, same tree");
    TreeCache plain(8);  // no topology: the core shape over all ranks
    auto e = plain.get_levels(kLevelShapes[0], 0);
    for (int r = 1; r < 8; ++r)
        if (e->parent(r) != 0) fail_msg("no topology: expected the flat knomial:8 tree");
}

// ---- whole collectives over the fake network ------------------------------
char pattern(size_t i) { return static_cast<char>((i * 131 + 7) ^ (i >> 8)); }

adapt2_tree_settings_t multi_level_settings(size_t segment) {
    adapt2_tree_settings_t s{};
    s.algorithm = ADAPT2_ALG_AUTO;
    s.radix = 4, s.fanout = 3, s.chains = 2;
    s.recv_window = 4, s.send_window = 2;
    s.topology = 1;
    s.node_algorithm = ADAPT2_ALG_BINOMIAL;
    s.numa_algorithm = ADAPT2_ALG_FLAT;
    s.topology_segment_size = segment;
    return s;
}

struct World {
    FakeNetwork net;
    std::vector<std::unique_ptr<Comm>> comms;
    World(const Topology &t, const NetworkOptions &o) : net(t.size(), o) {
        for (int r = 0; r < t.size(); ++r) {
            comms.push_back(std::make_unique<Comm>(net.endpoint(r), r, t.size(), 1 << 20));
            comms.back()->set_topology(t);
        }
    }
    uint64_t internode_segments() const {
        uint64_t n = 0;
        for (const auto &c : comms) n += c->internode_segments();
        return n;
    }
};

enum class Layout { contiguous, strided, mixed };

// A broadcast of `bytes` with settings `s`; every rank's data is checked,
// and the messages sent between nodes must be (nodes-1) x `node_messages`.
// Strided data goes through the staging ring; mixed: odd ranks' data only,
// so the two ends of an edge may differ (they must still agree on messages).
void bcast_case(const std::string &name, const Topology &t, int root, size_t bytes, const NetworkOptions &o,
                const adapt2_tree_settings_t &s, uint64_t node_messages, Layout how = Layout::contiguous) {
    World w(t, o);
    const int p = t.size();
    std::vector<std::vector<char>> mem(p, std::vector<char>(2 * bytes, 0));
    std::vector<Strided> layout(p);
    auto strided_at = [&](int r) { return how == Layout::strided || (how == Layout::mixed && r % 2 == 1); };
    for (size_t i = 0; i < bytes; ++i) mem[root][strided_at(root) ? 2 * i : i] = pattern(i);
    std::vector<Done> done(p);
    for (int r = 0; r < p; ++r) {
        const bool strided = strided_at(r);
        layout[r].base = mem[r].data();
        auto buf = strided ? strided_buffer(&layout[r], bytes) : contiguous_buffer(mem[r].data(), bytes);
        if (start_bcast(*w.comms[r], buf, root, 42, s, on_done, &done[r]) != 0)
            fail_msg("%s: start failed", name.c_str());
    }
    w.net.run();
    for (int r = 0; r < p; ++r) {
        if (done[r].calls != 1 || done[r].status != 0) fail_msg("%s: rank %d not done once", name.c_str(), r);
        const bool strided = strided_at(r);
        for (size_t i = 0; i < bytes; ++i)
            if (mem[r][strided ? 2 * i : i] != pattern(i)) fail_msg("%s: rank %d byte %zu wrong", name.c_str(), r, i);
    }
    const uint64_t want = static_cast<uint64_t>(t.nodes() - 1) * node_messages;
    if (w.internode_segments() != want)
        fail_msg("%s: %llu inter-node segments, expected (nodes-1) x segments = %llu", name.c_str(),
                 static_cast<unsigned long long>(w.internode_segments()), static_cast<unsigned long long>(want));
}

int32_t contribution(int r, size_t e) { return static_cast<int32_t>(r * 1000 + e % 977); }

void reduction_case(const std::string &name, const Topology &t, int root, size_t elems, bool all,
                    const NetworkOptions &o) {
    World w(t, o);
    const int p = t.size();
    std::vector<std::vector<int32_t>> own(p, std::vector<int32_t>(elems)), result(p, std::vector<int32_t>(elems, -1));
    for (int r = 0; r < p; ++r)
        for (size_t e = 0; e < elems; ++e) own[r][e] = contribution(r, e);
    std::vector<Done> done(p);
    adapt2_reduction_t op{4, 1, nullptr, sum_i32, nullptr, 0, 0};
    const size_t bytes = elems * 4;
    for (int r = 0; r < p; ++r) {
        auto in = contiguous_buffer(reinterpret_cast<char *>(own[r].data()), bytes);
        auto out = contiguous_buffer(reinterpret_cast<char *>(result[r].data()), bytes);
        int rc;
        if (all) {
            adapt2_allreduce_settings_t s{};
            s.tree = multi_level_settings(64);
            rc = start_allreduce(*w.comms[r], in, out, false, op, 100, s, on_done, &done[r]);
        } else {
            adapt2_reduce_settings_t s{multi_level_settings(64), 0};
            rc = start_reduce(*w.comms[r], in, out, false, op, root, 100, s, on_done, &done[r]);
        }
        if (rc != 0) fail_msg("%s: start failed", name.c_str());
    }
    w.net.run();
    for (int r = 0; r < p; ++r) {
        if (done[r].calls != 1 || done[r].status != 0) fail_msg("%s: rank %d not done once", name.c_str(), r);
        if (!all && r != root) continue;
        for (size_t e = 0; e < elems; ++e) {
            int32_t want = 0;
            for (int q = 0; q < p; ++q) want += contribution(q, e);
            if (result[r][e] != want)
                fail_msg("%s: rank %d element %zu: %d, expected %d", name.c_str(), r, e, result[r][e], want);
        }
    }
    // A reduction sends each segment up once per inter-node edge too.
    const uint64_t want = static_cast<uint64_t>(t.nodes() - 1) * Segments(bytes, 64, 4).count() * (all ? 2 : 1);
    if (w.internode_segments() != want)
        fail_msg("%s: %llu inter-node segments, expected %llu", name.c_str(),
                 static_cast<unsigned long long>(w.internode_segments()), static_cast<unsigned long long>(want));
}

void test_collectives_on_multi_level_trees(void **) {
    long runs = 0;
    for (const Placement &pl : placements()) {
        if (pl.topo.size() > 13) continue;  // the builder test covers 32; keep this one quick
        for (auto o : completion_orders(1)) {
            for (int root : {0, pl.topo.size() / 2, pl.topo.size() - 1}) {
                bcast_case("bcast " + pl.name, pl.topo, root, 1000, o, multi_level_settings(64),
                           Segments(1000, 64).count());
                reduction_case("reduce " + pl.name, pl.topo, root, 100, false, o);
                runs += 2;
            }
            reduction_case("allreduce " + pl.name, pl.topo, 0, 100, true, o);
            ++runs;
        }
    }
    std::printf("# %ld collectives on multi-level trees checked\n", runs);
}

// Every edge of a multi-level tree knows its level: node edges join nodes,
// NUMA edges join domains of one node, core edges stay inside a domain.
void test_edge_levels(void **) {
    long edges = 0;
    for (const Placement &pl : placements()) {
        const Topology &t = pl.topo;
        auto numa = [&](int r) { return t.numa.empty() ? 0 : t.numa[r]; };
        for (int root = 0; root < t.size(); ++root) {
            const Tree tree = build_level_tree(t, kLevelShapes[0], root);
            for (int r = 0; r < t.size(); ++r) {
                const int up = tree.parent(r);
                if (up < 0) continue;
                const int want = !t.same_node(r, up) ? kNodeLevel : numa(r) != numa(up) ? kNumaLevel : kCoreLevel;
                if (tree.edge_level(r) != want)
                    fail_msg("%s root %d: edge %d->%d level %d, expected %d", pl.name.c_str(), root, up, r,
                             tree.edge_level(r), want);
                ++edges;
            }
        }
    }
    std::printf("# %ld edge levels checked\n", edges);
}

// Per-level message sizes: the node level sends messages of several
// segments (or fewer bytes than the others), data stays exact, and the slow
// links carry exactly one message per node-level message, whatever the
// layout at either end of an edge (staged data travels in the same messages).
void test_level_segment_sizes(void **) {
    struct Sizes {
        size_t base, node, numa;
    };
    const Sizes sizes[] = {{64, 256, 0}, {64, 256, 128}, {128, 64, 0}, {64, 200, 64},
                           {64, 0, 192}, {64, 192, 128}};  // numa's 2 does not divide node's 3: cut to 1
    long runs = 0;
    for (const Placement &pl : placements()) {
        if (pl.topo.size() > 13) continue;
        for (const Sizes &z : sizes) {
            auto s = multi_level_settings(z.base);
            s.node_algorithm = ADAPT2_ALG_PIPELINE;
            s.node_segment_size = z.node, s.numa_segment_size = z.numa;
            const size_t cut = std::min({z.base, z.node ? z.node : z.base, z.numa ? z.numa : z.base});
            const size_t node_bytes = (z.node ? z.node : z.base) / cut * cut;  // whole segments
            for (size_t bytes : {size_t{1000}, size_t{64}, size_t{4096}}) {
                const uint64_t node_messages = (bytes + node_bytes - 1) / node_bytes;
                for (auto o : completion_orders(2)) {
                    for (int root : {0, pl.topo.size() - 1}) {
                        const std::string name = "levels " + pl.name + " " + std::to_string(z.base) + "/" +
                                                 std::to_string(z.node) + "/" + std::to_string(z.numa);
                        bcast_case(name, pl.topo, root, bytes, o, s, node_messages);
                        bcast_case(name + " strided", pl.topo, root, bytes, o, s, node_messages, Layout::strided);
                        bcast_case(name + " mixed", pl.topo, root, bytes, o, s, node_messages, Layout::mixed);
                        runs += 3;
                    }
                }
            }
        }
    }
    std::printf("# %ld broadcasts with per-level message sizes checked\n", runs);
}

// ---- lanes: two trees inside nodes, each half entering by its own rank ----
// Tree `which` of a message cut in two halves (two_tree.h's half_tree).
LevelSpecs lane_levels(TreeShape node_shape, int which) {
    LevelSpecs l{{node_shape, node_shape == TreeShape::two_tree ? which : 0},
                 {TreeShape::flat, 0},
                 {TreeShape::two_tree, which}};
    l.lane = 1;
    return l;
}

int lowest_of_node(const Topology &t, int r) {
    for (int q = 0; q < t.size(); ++q)
        if (t.same_node(q, r)) return q;
    return r;
}

// The rank before `r`'s node leader among its node's ranks, cyclically.
int before_leader(const Topology &t, int leader) {
    std::vector<int> ranks;
    for (int q = 0; q < t.size(); ++q)
        if (t.same_node(q, leader)) ranks.push_back(q);
    const size_t at = std::find(ranks.begin(), ranks.end(), leader) - ranks.begin();
    return ranks[(at + ranks.size() - 1) % ranks.size()];
}

// Each half's tree reaches every rank once and enters every other node once,
// by the node's leader (first half) or the rank before it (second half);
// with a pipeline between nodes of an even number of ranks, no rank sends
// more than one copy (children in both trees together at most 2), where the
// nodes' own leaders sent two.
void test_lane_trees(void **) {
    long trees = 0;
    for (const Placement &pl : placements()) {
        const Topology &t = pl.topo;
        if (!t.numa.empty()) continue;  // lanes need one NUMA domain per node
        bool even = t.size() > 0;
        for (int r = 0; r < t.size(); ++r) {
            int n = 0;
            for (int q = 0; q < t.size(); ++q) n += t.same_node(q, r);
            even &= n % 2 == 0;
        }
        for (TreeShape node_shape : {TreeShape::pipeline, TreeShape::two_tree}) {
            for (int root = 0; root < t.size(); ++root) {
                const Tree a = build_level_tree(t, lane_levels(node_shape, 0), root);
                const Tree b = build_level_tree(t, lane_levels(node_shape, 1), root);
                int most = 0, most_classic = 0;
                LevelSpecs classic = lane_levels(node_shape, 0);
                classic.lane = 0;
                const Tree c0 = build_level_tree(t, classic, root);
                classic.core.param = 1, classic.node.param = node_shape == TreeShape::two_tree ? 1 : 0;
                const Tree c1 = build_level_tree(t, classic, root);
                for (int which = 0; which < 2; ++which) {
                    const Tree &tree = which ? b : a;
                    const std::string what = pl.name + " root=" + std::to_string(root) + " half " +
                                             std::to_string(which) + " " + std::string(tree_shape_name(node_shape));
                    check_reach(what, tree, root);
                    int crossings = 0;
                    for (int r = 0; r < t.size(); ++r) {
                        const int up = tree.parent(r);
                        if (up < 0) continue;
                        const bool across = !t.same_node(r, up);
                        if (tree.edge_level(r) != (across ? kNodeLevel : kCoreLevel))
                            fail_msg("%s: edge %d->%d has level %d", what.c_str(), up, r, tree.edge_level(r));
                        if (!across) continue;
                        ++crossings;
                        const int leader = lowest_of_node(t, r);
                        const int entry = which == 0 ? leader : before_leader(t, leader);
                        if (r != entry)
                            fail_msg("%s: node of %d entered at %d, expected %d", what.c_str(), leader, r, entry);
                    }
                    if (crossings != t.nodes() - 1)
                        fail_msg("%s: %d inter-node edges for %d nodes", what.c_str(), crossings, t.nodes());
                    ++trees;
                }
                for (int r = 0; r < t.size(); ++r) {
                    most = std::max<int>(most, a.children(r).size() + b.children(r).size());
                    most_classic = std::max<int>(most_classic, c0.children(r).size() + c1.children(r).size());
                }
                if (even && node_shape == TreeShape::pipeline && most > 2)
                    fail_msg("%s root=%d: a rank has %d children in the two lane trees", pl.name.c_str(), root, most);
                if (even && node_shape == TreeShape::pipeline && t.nodes() > 1 && most_classic < 3)
                    fail_msg("%s root=%d: the classic trees' leaders should carry more", pl.name.c_str(), root);
            }
        }
    }
    std::printf("# %ld lane trees checked\n", trees);
}

// Whole broadcasts on lane trees over the fake network: shared memory
// without single copy makes the plan take two trees inside nodes, and lanes
// from 512 KiB; every rank's data checked.
void test_collectives_on_lane_trees(void **) {
    long runs = 0;
    for (const Placement &pl : placements()) {
        if (pl.topo.size() > 13 || pl.topo.size() < 2 || !pl.topo.numa.empty()) continue;
        auto s = multi_level_settings(size_t{16} << 10);
        s.single_copy = 0;
        s.core_message_cost = 2048;
        s.node_algorithm = ADAPT2_ALG_PIPELINE;
        for (int root : {0, pl.topo.size() / 2, pl.topo.size() - 1}) {
            for (auto o : completion_orders(1)) {
                World w(pl.topo, o);
                const int p = pl.topo.size();
                const size_t bytes = size_t{640} << 10;  // lanes from 512 KiB
                if (pl.topo.nodes() > 1 && plan_bcast(s, bytes, p, pl.topo.nodes()).levels.lane != 1)
                    fail_msg("lanes %s: the plan of %zu bytes takes no lanes", pl.name.c_str(), bytes);
                std::vector<std::vector<char>> mem(p, std::vector<char>(bytes, 0));
                for (size_t i = 0; i < bytes; ++i) mem[root][i] = pattern(i);
                std::vector<Done> done(p);
                for (int r = 0; r < p; ++r) {
                    if (start_bcast(*w.comms[r], contiguous_buffer(mem[r].data(), bytes), root, 42, s, on_done,
                                    &done[r]) != 0)
                        fail_msg("lanes %s: start failed", pl.name.c_str());
                }
                w.net.run();
                for (int r = 0; r < p; ++r) {
                    if (done[r].calls != 1 || done[r].status != 0)
                        fail_msg("lanes %s root %d: rank %d not done once", pl.name.c_str(), root, r);
                    for (size_t i = 0; i < bytes; ++i)
                        if (mem[r][i] != pattern(i))
                            fail_msg("lanes %s root %d: rank %d byte %zu wrong", pl.name.c_str(), root, r, i);
                }
                ++runs;
            }
        }
    }
    std::printf("# %ld broadcasts on lane trees checked\n", runs);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builder_all_placements_and_roots),
        cmocka_unit_test(test_multi_level_detection),
        cmocka_unit_test(test_node_order),
        cmocka_unit_test(test_cache_keys),
        cmocka_unit_test(test_collectives_on_multi_level_trees),
        cmocka_unit_test(test_edge_levels),
        cmocka_unit_test(test_level_segment_sizes),
        cmocka_unit_test(test_lane_trees),
        cmocka_unit_test(test_collectives_on_lane_trees),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
