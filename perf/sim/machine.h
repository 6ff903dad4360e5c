// The simulated machine: LogGP parameters within a node and between nodes,
// nodes of `ranks_per_node` consecutive ranks, and how many cores a node has
// (ranks beyond that share cores, so their CPU work runs slower).
//
// LogGP (Alexandrov et al.): a message of n bytes costs the sender o of CPU,
// occupies its network port for max(g, n*G), travels L, and costs the
// receiver o of CPU. All times are in microseconds.
#ifndef ADAPT2_SIM_MACHINE_H
#define ADAPT2_SIM_MACHINE_H

#include <algorithm>
#include <cstddef>
#include <string>

namespace adapt2::sim {

struct LinkParams {
    double L = 0;  // latency (us)
    double o = 0;  // CPU overhead per message, each side (us)
    double g = 0;  // gap between messages at one port (us)
    double G = 0;  // gap per byte (us/byte): 1/bandwidth
};

struct Machine {
    LinkParams intra{0.3, 0.2, 0.05, 1.0 / 8000};   // shared memory, ~8 GB/s
    LinkParams inter{2.0, 0.5, 0.2, 1.0 / 12000};   // a 100 Gb/s-class network
    int ranks_per_node = 32;
    int cores_per_node = 32;
    size_t eager_limit = 4096;  // larger messages wait for a matching receive (rendezvous)
    double combine_us_per_byte = 1.0 / 4000;  // reduction arithmetic, ~4 GB/s

    int node_of(int rank) const { return rank / std::max(1, ranks_per_node); }
    const LinkParams &link(int a, int b) const { return node_of(a) == node_of(b) ? intra : inter; }
    // Ranks beyond the cores of a node share them: their CPU work (message
    // overheads, combining) takes this many times longer.
    double cpu_factor() const {
        return cores_per_node >= ranks_per_node ? 1.0 : double(ranks_per_node) / std::max(1, cores_per_node);
    }
    std::string describe() const;
};

// Parses "key=value,..." overrides (intra.L=0.3,inter.G=8e-5,k=16,cores=16,
// eager=4096,gamma=2.5e-4) into `m`. Returns an error message or "".
std::string parse_machine(const std::string &spec, Machine &m);

}  // namespace adapt2::sim

#endif
