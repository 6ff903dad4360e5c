// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// The simulated machine: LogGP parameters within a node and between nodes,
// nodes of `ranks_per_node` consecutive ranks, and how many cores a node has
// (ranks beyond that share cores, so their CPU work runs slower).
//
// LogGP (Alexandrov et al.): a message of n bytes costs the sender o of CPU,
// occupies its network port for max(g, n*G), travels L, and costs the
// receiver o of CPU. All times are in microseconds.
//
// Refinements for shared memory, oversubscribed cores and emulated clusters,
// all off by default (perf/sim/README.md, "Calibration"):
//  - a link class with `get` moves rendezvous data as a single copy made by
//    the receiver's CPU (Open MPI's vader with CMA: the receiver reads the
//    sender's buffer with process_vm_readv), so n*G is CPU time of the
//    receiver, slowed like all CPU work where cores are shared, and the
//    sender is free meanwhile;
//  - `host_cores`: all ranks of the machine share that many cores (nodes
//    emulated on one host);
//  - `mem_G`: the memory bandwidth (us/byte) that concurrent copies and
//    combines of one node (with host_cores: of the host) share: c > 1 of them
//    at once take at least c*n*mem_G each (one alone runs at its core's speed);
//  - `wake_us`: where ranks outnumber cores, a message reaches a waiting rank
//    only once the scheduler runs it: every message takes wake_us longer per
//    rank beyond one per core (ranks/cores - 1 times);
//  - a link class with a token bucket (`burst` bytes, line rate `G0`), as tc's
//    tbf shapes the emulated cluster's links: G is the sustained rate, and
//    while a rank's port has tokens (one per byte, refilled at 1/G bytes per
//    us up to `burst`) its bytes go at G0. Both the sending and the receiving
//    port are shaped (tbf on both ends of a node's link).
#ifndef ADAPT2_SIM_MACHINE_H
#define ADAPT2_SIM_MACHINE_H

#include <algorithm>
#include <cstddef>
#include <string>

namespace adapt2::sim {

struct LinkParams {
    double L = 0;      // latency (us)
    double o = 0;      // CPU overhead per message, each side (us)
    double g = 0;      // gap between messages at one port (us)
    double G = 0;      // gap per byte (us/byte): 1/bandwidth
    long eager = -1;   // eager limit (bytes); -1: Machine::eager_limit
    bool get = false;  // rendezvous data copied by the receiver's CPU (see above)
    double burst = 0;  // token bucket (bytes; 0: none), see above
    double G0 = 0;     // us/byte while the bucket has tokens
};

struct Machine {
    LinkParams intra{0.3, 0.2, 0.05, 1.0 / 8000};  // shared memory, ~8 GB/s
    LinkParams inter{2.0, 0.5, 0.2, 1.0 / 12000};  // a 100 Gb/s-class network
    int ranks_per_node = 32;
    int cores_per_node = 32;
    int host_cores = 0;  // all ranks share this many cores (0: no such limit)
    // How shared cores slow CPU work down: false: always by ranks/cores (as if
    // every rank were always busy); true: by the ranks busy when the work
    // starts (on its node, or on the host with host_cores) over the cores.
    bool share_busy = false;
    double mem_G = 0;                         // us/byte of memory bandwidth shared by concurrent copies (0: no limit)
    double wake_us = 0;                       // scheduling delay per message and extra rank per core
    size_t eager_limit = 4096;                // larger messages wait for a matching receive (rendezvous)
    double combine_us_per_byte = 1.0 / 4000;  // reduction arithmetic, ~4 GB/s
    double copy_us_per_byte = 0;              // the engine's own copies (detach, copy-out); 0: free

    int node_of(int rank) const { return rank / std::max(1, ranks_per_node); }
    const LinkParams &link(int a, int b) const { return node_of(a) == node_of(b) ? intra : inter; }
    size_t eager(const LinkParams &l) const { return l.eager >= 0 ? size_t(l.eager) : eager_limit; }
    // More ranks on a node than it has cores (what adapt2's auto settings
    // look at: ranks on this node against the cores it sees).
    bool oversubscribed(int ranks) const { return std::min(ranks_per_node, ranks) > cores_per_node; }
    // Where cores can be shared at all.
    bool cores_shared(int ranks) const { return oversubscribed(ranks) || (host_cores > 0 && ranks > host_cores); }
    // Ranks beyond the cores of a node (or of the host) share them: their CPU
    // work (message overheads, copies, combining) takes this many times longer
    // (share_busy: at most).
    double cpu_factor(int ranks) const {
        double f = std::max(1.0, double(std::min(ranks_per_node, ranks)) / std::max(1, cores_per_node));
        if (host_cores > 0) f = std::max(f, double(ranks) / host_cores);
        return f;
    }
    std::string describe() const;
};

// Parses "key=value,..." overrides (intra.L=0.3,inter.G=8e-5,intra.eager=4096,
// intra.get=1,inter.burst=1250000,inter.G0=1e-3,k=16,cores=16,host_cores=2,share=1,mem=6e-5,wake=1.5,
// eager=4096 (both links),gamma=2.5e-4,copy=1e-4) into `m`. Returns an error
// message or "".
std::string parse_machine(const std::string &spec, Machine &m);

}  // namespace adapt2::sim

#endif
