// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Lock-step baselines: the classic algorithms as Open MPI's tuned component
// runs them, as a sequence of blocking steps per rank (post a step's sends
// and receives, wait for all of them, go on). A call returns only when all
// of its rank's sends are done, so a late peer holds up everyone who talks
// to it, and through them the next step. They run on the same simulated
// network and CPUs as adapt2, for comparison.
//
//   binomial           whole message down a binomial tree (tuned alg 6)
//   knomial            whole message down a radix-4 k-nomial tree (alg 7)
//   chain              pipelined chain: one chain, segments (alg 3)
//   scatter-allgather  binomial scatter of p chunks, then a recursive-doubling
//                      allgather (alg 8; p must be a power of two)
//   tuned              what tuned's fixed decision (4.1) picks for bcast
//                      (coll_tuned_decision_fixed.c) among the above:
//                      1 MiB at p 64-1023: knomial; from p 1024: scatter-allgather
//   reduce: binomial (tuned alg 5, whole message) or chain (segments)
#ifndef ADAPT2_SIM_LOCKSTEP_H
#define ADAPT2_SIM_LOCKSTEP_H

#include <memory>
#include <string>
#include <vector>

#include "adapt2_collective.h"
#include "collective.h"
#include "tree.h"

namespace adapt2::sim {

enum class Lockstep { binomial, knomial, chain, scatter_allgather, tuned };

bool lockstep_from_name(const std::string &name, Lockstep *out);
// What `tuned` stands for at this size and communicator size.
Lockstep tuned_bcast_choice(size_t bytes, int p);

struct LockstepConfig {
    CollKind kind = CollKind::bcast;  // bcast or reduce
    Lockstep algorithm = Lockstep::binomial;
    size_t bytes = 1 << 20;
    size_t segment = 65536;  // chain only
    int root = 0;
};

std::unique_ptr<Collective> make_lockstep(Network &net, CallListener &listener, const LockstepConfig &config);

}  // namespace adapt2::sim

#endif
