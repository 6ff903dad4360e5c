// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Closed-form lower bounds on a collective's time for the machine's LogGP
// parameters: ceil(log2 p) hops of the cheapest small message (alpha = L + 2o)
// plus moving n bytes once through the slowest port every rank's data must
// cross (beta = G; between nodes when there are several), plus, for
// reductions, combining n bytes once (gamma). Allreduce: the bandwidth and
// compute terms of the reduce-scatter + allgather optimum, 2n(p-1)/p beta
// and n(p-1)/p gamma. Allgather and reduce-scatter of blocks of n bytes:
// (p-1)n beta (and (p-1)n gamma).
#ifndef ADAPT2_SIM_BOUNDS_H
#define ADAPT2_SIM_BOUNDS_H

#include <algorithm>
#include <cmath>

#include "adapt2_collective.h"
#include "machine.h"

namespace adapt2::sim {

inline double hop_alpha(const LinkParams &l) { return l.L + 2 * l.o; }

inline double lower_bound(CollKind kind, const Machine &m, int p, size_t bytes) {
    if (p <= 1) return 0;
    const bool nodes = p > m.ranks_per_node;
    const double alpha = nodes ? std::min(hop_alpha(m.intra), hop_alpha(m.inter)) : hop_alpha(m.intra);
    const double beta = nodes ? std::max(m.intra.G, m.inter.G) : m.intra.G;
    const double gamma = m.combine_us_per_byte * m.cpu_factor(p);
    const double hops = std::ceil(std::log2(double(p)));
    const double n = double(bytes);
    switch (kind) {
    case CollKind::bcast: return hops * alpha + n * beta;
    case CollKind::reduce: return hops * alpha + n * beta + n * gamma;
    case CollKind::allreduce: {
        const double share = double(p - 1) / p;
        return hops * alpha + 2 * n * share * beta + n * share * gamma;
    }
    // n is each rank's block: every rank receives the p - 1 others' (and,
    // reducing, combines them).
    case CollKind::allgather: return hops * alpha + (p - 1) * n * beta;
    case CollKind::reduce_scatter_block: return hops * alpha + (p - 1) * n * beta + (p - 1) * n * gamma;
    }
    return 0;
}

}  // namespace adapt2::sim

#endif
