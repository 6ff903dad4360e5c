// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// adapt2_sim: runs the real adapt2 engine (and lock-step baselines) on a
// simulated LogGP cluster; see perf/sim/README.md.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

#include "adapt2_collective.h"
#include "bounds.h"
#include "lockstep.h"
#include "loop.h"

using namespace adapt2::sim;

namespace {

struct Options {
    CollKind kind = CollKind::bcast;
    std::vector<std::string> algorithms{"adapt2", "adapt2-sync", "tuned"};
    std::vector<int> ranks{64};
    std::vector<size_t> sizes{1 << 20};
    size_t segment = 0;  // 0: adapt2's default for the collective; chain: 64 KiB
    bool segment_given = false;
    long message_cost = -1;  // -c: coll_adapt2_node_message_cost (-1: its default; -2: the inter link's)
    Machine machine;
    std::string noise = "none";
    uint64_t seed = 1;
    int iterations = 20;
    double compute_us = 2000;
    double grace_us = 100;
    bool topology = true;  // -t: coll_adapt2_topology
    int bench_calls = 0;   // -b: perf/adapt2_bench's loop instead of one call
    std::string table;     // -o: also write the rows here
};

void usage(FILE *f) {
    std::fprintf(f,
                 "Usage: adapt2_sim [options]\n"
                 "Runs the adapt2 engine on every simulated rank of a LogGP cluster, with lock-step\n"
                 "baselines, and prints one row per (algorithm, ranks, size).\n"
                 "  -k COLL     bcast (default), reduce, allreduce, allgather, reduce_scatter_block\n"
                 "              (allgather, reduce_scatter_block: -m is each rank's block)\n"
                 "  -a LIST     algorithms, comma separated (default adapt2,adapt2-sync,tuned):\n"
                 "              adapt2 (defaults), adapt2-sync (detach_max_message=0), adapt2-flat\n"
                 "              (coll_adapt2_topology=0), adapt2:SHAPE or adapt2-sync:SHAPE (a forced\n"
                 "              tree: binomial, knomial, pipeline, two_tree, ...; adapt2:node=SHAPE\n"
                 "              forces the tree between node leaders, adapt2:nodeseg=SIZE their\n"
                 "              segments; join several with +, e.g. adapt2:two_tree+node=two_tree;\n"
                 "              an allreduce then takes the\n"
                 "              tree allreduce), binomial,\n"
                 "              knomial, chain, scatter-allgather, tuned (tuned's fixed pick)\n"
                 "  -p LIST     ranks: N,N,... or A:B (powers of two from A to B) (default 64)\n"
                 "  -m LIST     message sizes, K/M suffixes, same syntax (default 1M)\n"
                 "  -S SIZE     segment size of adapt2's trees and of the chain (default: adapt2's\n"
                 "              MCA default for the collective; chain 64K)\n"
                 "  -c COST     coll_adapt2_node_message_cost in bytes (default: the component's), or\n"
                 "              link: the inter-node link's max(o, g) / G\n"
                 "  -M SPEC     machine: intra.L=..,intra.o=..,intra.g=..,intra.G=..,inter.*,\n"
                 "              k=ranks per node,cores=cores per node,eager=bytes,gamma=us/byte\n"
                 "  -n SPEC     noise (perf/noise.h syntax, e.g. p=0.1,d=5ms); not none: run the\n"
                 "              noise_bench loop clean and noisy and report amplification\n"
                 "  -s SEED     noise seed (default 1)\n"
                 "  -i N        loop iterations with noise (default 20)\n"
                 "  -w US       compute per iteration (default 2000)\n"
                 "  -g US       grace period of blocking calls (default 100)\n"
                 "  -t 0|1      adapt2's multi-level trees where the machine has several nodes\n"
                 "              (coll_adapt2_topology, default 1)\n"
                 "  -b N        perf/adapt2_bench's loop: N calls, each started by all ranks together\n"
                 "              after an ideal barrier; t_avg_us is then the mean time in a call and\n"
                 "              t_last_us the median over calls of the slowest rank's (last_median_us)\n"
                 "  -o FILE     also write the rows (tab separated) to FILE\n");
}

size_t parse_size(const std::string &s) {
    char *end = nullptr;
    double v = std::strtod(s.c_str(), &end);
    if (end && (*end == 'K' || *end == 'k')) v *= 1024;
    if (end && (*end == 'M' || *end == 'm')) v *= 1024 * 1024;
    if (end && (*end == 'G' || *end == 'g')) v *= 1024.0 * 1024 * 1024;
    return size_t(v);
}

std::vector<std::string> split(const std::string &s, char sep) {
    std::vector<std::string> out;
    size_t from = 0;
    for (size_t at; (at = s.find(sep, from)) != std::string::npos; from = at + 1)
        out.push_back(s.substr(from, at - from));
    out.push_back(s.substr(from));
    return out;
}

// "A:B" (powers of two from A to B) or "a,b,c".
std::vector<size_t> parse_list(const std::string &s) {
    std::vector<size_t> out;
    auto range = split(s, ':');
    if (range.size() == 2) {
        for (size_t v = parse_size(range[0]); v && v <= parse_size(range[1]); v *= 2) out.push_back(v);
        return out;
    }
    for (const auto &item : split(s, ',')) out.push_back(parse_size(item));
    return out;
}

bool parse(int argc, char **argv, Options &o) {
    int c;
    while ((c = getopt(argc, argv, "k:a:p:m:S:c:M:n:s:i:w:g:t:b:o:h")) != -1) {
        switch (c) {
        case 'k':
            if (!coll_from_name(optarg, &o.kind)) return false;
            break;
        case 'a': o.algorithms = split(optarg, ','); break;
        case 'p': {
            o.ranks.clear();
            for (size_t v : parse_list(optarg)) o.ranks.push_back(int(v));
            break;
        }
        case 'm': o.sizes = parse_list(optarg); break;
        case 'S': o.segment = parse_size(optarg), o.segment_given = true; break;
        case 'c': o.message_cost = std::string(optarg) == "link" ? -2 : static_cast<long>(parse_size(optarg)); break;
        case 'M': {
            std::string err = parse_machine(optarg, o.machine);
            if (!err.empty()) return std::fprintf(stderr, "adapt2_sim: %s\n", err.c_str()), false;
            break;
        }
        case 'n': o.noise = optarg; break;
        case 's': o.seed = std::strtoull(optarg, nullptr, 10); break;
        case 'i': o.iterations = std::atoi(optarg); break;
        case 'w': o.compute_us = std::atof(optarg); break;
        case 'g': o.grace_us = std::atof(optarg); break;
        case 't': o.topology = std::atoi(optarg) != 0; break;
        case 'b': o.bench_calls = std::atoi(optarg); break;
        case 'o': o.table = optarg; break;
        default: return false;
        }
    }
    return !o.ranks.empty() && !o.sizes.empty() && o.iterations > 0 && o.bench_calls >= 0;
}

// What one message costs on `link` beyond its bytes, in bytes: its
// per-message time (overhead or gap) at the link's bandwidth.
long link_cost(const LinkParams &link) { return link.G > 0 ? std::lround(std::max(link.o, link.g) / link.G) : 0; }

// One forced item of adapt2:ITEM+ITEM: SHAPE (the tree, or the tree inside nodes
// with multi-level trees), node=SHAPE (between node leaders) or nodeseg=SIZE
// (coll_adapt2_node_segment_size). False if unknown.
bool force_item(std::string item, Adapt2Config &c) {
    if (item.rfind("nodeseg=", 0) == 0) {
        const size_t bytes = parse_size(item.substr(8));
        c.bcast.node_segment_size = c.reduce.tree.node_segment_size = c.allreduce.tree.node_segment_size = bytes;
        return bytes > 0;
    }
    const bool node = item.rfind("node=", 0) == 0;
    if (node) item = item.substr(5);
    int alg = 0;
    while (alg < ADAPT2_ALG_COUNT && item != mca_coll_adapt2_engine_algorithm_name(alg)) ++alg;
    if (alg == ADAPT2_ALG_COUNT) return false;
    if (node) {
        c.bcast.node_algorithm = c.reduce.tree.node_algorithm = c.allreduce.tree.node_algorithm = alg;
    } else {
        c.bcast.algorithm = c.reduce.tree.algorithm = c.allreduce.tree.algorithm = alg;
    }
    return true;
}

// The collective `name` for these options, or null if unknown.
CollectiveFactory factory(const Options &o, const std::string &name, int p, size_t bytes) {
    const std::string base = name.substr(0, name.find(':'));
    if (base == "adapt2" || base == "adapt2-sync" || base == "adapt2-flat") {
        Adapt2Config c = default_adapt2_config(o.kind, bytes, o.machine.oversubscribed(p));
        set_topology(c, o.topology && base != "adapt2-flat");
        if (o.segment_given) set_segment_size(c, o.segment);
        if (o.message_cost != -1)
            set_message_cost(c, o.message_cost >= 0 ? o.message_cost : link_cost(o.machine.inter));
        if (base == "adapt2-sync") force_sync(c);
        if (name.find(':') != std::string::npos) {  // adapt2:ITEM+ITEM...: forced trees (coll_adapt2_*_algorithm)
            std::string items = name.substr(name.find(':') + 1);
            for (size_t at = 0; at != std::string::npos;) {
                const size_t plus = items.find('+', at);
                if (!force_item(items.substr(at, plus == std::string::npos ? plus : plus - at), c)) return nullptr;
                at = plus == std::string::npos ? plus : plus + 1;
            }
            c.allreduce.algorithm = ADAPT2_ALLREDUCE_TREE;  // a tree only the tree allreduce uses
        }
        c.grace_us = o.grace_us;
        return [c](Network &net, CallListener &l) { return std::make_unique<Adapt2Collective>(net, l, c); };
    }
    LockstepConfig c;
    if (!lockstep_from_name(name, &c.algorithm)) return nullptr;
    c.kind = o.kind;
    c.bytes = bytes;
    c.segment = o.segment_given && o.segment ? o.segment : 65536;
    return [c](Network &net, CallListener &l) { return make_lockstep(net, l, c); };
}

// An ideal barrier's cost: ceil(log2 p) small messages over the slowest link.
double barrier_us(const Machine &m, int p) {
    const LinkParams &l = p > m.ranks_per_node ? m.inter : m.intra;
    int rounds = 0;
    while ((1 << rounds) < p) ++rounds;
    return rounds * (l.L + 2 * l.o);
}

double peak_rss_mib() {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss / 1024.0;
}

struct Row {
    std::string text;
};

void print_header(FILE *f) {
    std::fprintf(f, "%-9s %-18s %7s %9s %12s %12s %12s %12s %8s %12s %12s %10s %7s %8s %8s %8s %11s %10s\n", "#coll",
                 "alg", "p", "bytes", "t_avg_us", "t_last_us", "t_finish_us", "bound_us", "last/lb", "T_clean_us",
                 "T_noisy_us", "noise_us", "amp", "amp_last", "sim_s", "rss_mib", "events", "events/s");
}

}  // namespace

int main(int argc, char **argv) {
    Options o;
    if (!parse(argc, argv, o)) {
        usage(stderr);
        return 2;
    }
    NoiseModel noise;
    std::string err = noise.parse(o.noise, o.seed);
    if (!err.empty()) {
        std::fprintf(stderr, "adapt2_sim: bad noise spec '%s': %s\n", o.noise.c_str(), err.c_str());
        return 2;
    }
    FILE *table = o.table.empty() ? nullptr : std::fopen(o.table.c_str(), "w");
    std::printf("# machine %s\n# noise %s seed %llu iterations %d compute_us %g\n", o.machine.describe().c_str(),
                noise.describe().c_str(), (unsigned long long)o.seed, o.iterations, o.compute_us);
    if (o.bench_calls > 0)
        std::printf("# adapt2_bench loop: %d calls after barriers; t_avg_us mean call, t_last_us median slowest call\n",
                    o.bench_calls);
    print_header(stdout);
    if (table) print_header(table);
    for (const std::string &alg : o.algorithms) {
        for (int p : o.ranks) {
            for (size_t bytes : o.sizes) {
                CollectiveFactory make = factory(o, alg, p, bytes);
                if (!make) {
                    std::fprintf(stderr, "adapt2_sim: unknown algorithm '%s'\n", alg.c_str());
                    return 2;
                }
                const auto t0 = std::chrono::steady_clock::now();
                LoopConfig single;        // one call, everyone enters at 0
                if (o.bench_calls > 0) {  // or adapt2_bench's loop: calls separated by barriers
                    single.iterations = o.bench_calls;
                    single.barrier = true;
                    single.barrier_us = barrier_us(o.machine, p);
                }
                LoopResult one = run_loop(p, o.machine, single, make);
                if (o.bench_calls > 0) {
                    one.mean_time = one.mean_call;
                    one.max_time = one.median_last;
                }
                LoopResult clean, noisy;
                if (noise.on()) {
                    LoopConfig loop;
                    loop.iterations = o.iterations;
                    loop.compute_us = o.compute_us;
                    clean = run_loop(p, o.machine, loop, make);
                    loop.noise = noise;
                    noisy = run_loop(p, o.machine, loop, make);
                }
                const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                const double bound = lower_bound(o.kind, o.machine, p, bytes);
                char line[600];
                int n = std::snprintf(line, sizeof line, "%-9s %-18s %7d %9zu %12.2f %12.2f %12.2f %12.2f %8.3f",
                                      coll_name(o.kind), alg.c_str(), p, bytes, one.mean_time, one.max_time,
                                      one.finished, bound, bound > 0 ? one.max_time / bound : 0.0);
                if (noise.on()) {
                    n += std::snprintf(line + n, sizeof line - n, " %12.1f %12.1f %10.1f %7.3f %8.3f", clean.mean_time,
                                       noisy.mean_time, noisy.mean_noise, amplification(clean, noisy),
                                       amplification_last(clean, noisy));
                } else {
                    n += std::snprintf(line + n, sizeof line - n, " %12s %12s %10s %7s %8s", "-", "-", "-", "-", "-");
                }
                // The simulator's own speed: events handled (every run of this row) per second of wall time.
                const uint64_t events = one.events + clean.events + noisy.events;
                std::snprintf(line + n, sizeof line - n, " %8.2f %8.1f %11llu %10.3g%s\n", secs, peak_rss_mib(),
                              (unsigned long long)events, secs > 0 ? events / secs : 0.0,
                              one.complete && clean.complete && noisy.complete ? "" : "  INCOMPLETE");
                std::fputs(line, stdout);
                std::fflush(stdout);
                if (table) std::fputs(line, table);
            }
        }
    }
    if (table) std::fclose(table);
    return 0;
}
