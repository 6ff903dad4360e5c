// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// The direct path (the latency path's last step, docs/design.md): a blocking
// broadcast that its plan sends as one whole message with no hellos needs
// none of a schedule's machinery (segments, windows, staging, detaching):
// each rank receives the message from its parent in the plan's tree and
// sends it to its children; nor a blocking reduce of one whole message
// (each rank combines its children's data with its own and sends it up).
// Nor does a blocking allreduce that its plan runs
// by recursive doubling: each rank exchanges its accumulator with log2(p)
// partners in turn. The C layer runs these with the PML's own calls
// (coll_adapt2_direct.c, coll_adapt2_direct_allreduce.c); what it runs is
// decided here, from plan_call, so the tree or the exchanges are the ones
// the engine's path would use and every rank, planning alike, takes the
// same path. So does a blocking allgather that its plan runs by
// Bruck's exchanges (allgather_plan.h: recursive doubling where p is a power
// of two, which takes as many exchanges with no rotation), and a small
// blocking reduce_scatter_block of a commutative op that its plan runs by
// recursive halving (halving_plan.h).
#include <algorithm>
#include <climits>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "../adapt2_bridge.h"
#include "allgather_plan.h"
#include "comm.h"
#include "detach.h"
#include "halving_plan.h"
#include "plan_call.h"
#include "recdoubling_plan.h"
#include "segments.h"
#include "trace.h"

namespace adapt2 {
CallShape shape_of(const Comm &comm);

namespace {

// What the direct allreduce and reduce take (the C layer keeps scratch
// buffers of the message's size: two, or one per child and one). Measured at np 2 (perf/compare.py, recursive
// doubling forced up to 1 MiB): the direct exchanges took 0.8-0.9x the
// engine's time at 4-64 KiB, where a call's software cost still shows, but
// 3x from 256 KiB on, for a reason not found yet (the same PML calls; a
// pre-touched scratch made it worse, not better). It comes with the shared
// memory BTL's single copy: forced to 4 MiB, the direct exchanges took
// 3.5-6.5x tuned's time at 128-512 KiB (np 2), 3.3-3.7x their own with
// btl_vader_single_copy_mechanism=none (the engine sends 64 KiB segments;
// docs/measurements.md). Its gain is the per-call cost, which only small
// messages feel.
constexpr size_t kDirectMaxBytes = size_t{16} << 10;

// Up to here a send is eager on every transport adapt2 meets (shared memory's
// eager limit is 4 KiB, networks' are larger): posted, its data reaches the
// peer without the sender's help. Above it, a send left behind reaches its
// peer only where the receiver pulls the data itself: inside one node with
// single copy (measured: 8 KiB-64 KiB arrived while the sender slept;
// docs/measurements.md, "Sends left behind").
constexpr size_t kEagerBytes = 4096;

// Up to here a send completes without its receiver's help on shared memory
// too (measured, np 2, pml ob1, btl vader: an MPI_Send of 256 B to a rank
// sleeping 50 ms returned at once, of 512 B-4 KiB after the 50 ms;
// docs/measurements.md, "Sends left behind"), so a rank may send to its
// children one after another with blocking sends and none waits for another.
constexpr size_t kCompletesAtOnceBytes = 256;

// The most a call that may detach sends on the direct path, its sends left
// behind (coll_adapt2_direct_detach_max): equal on every rank.
// Whether every receiver pulls a rendezvous's data itself: one node with
// single copy (equal on every rank).
bool receiver_pulls(const Comm &comm, const adapt2_tree_settings_t &s) { return comm.nodes() == 1 && s.single_copy; }

size_t leave_behind_max(const Comm &comm, const adapt2_tree_settings_t &s) {
    return receiver_pulls(comm, s) ? s.direct_detach_max : std::min(s.direct_detach_max, kEagerBytes);
}

// The most a broadcast that may detach sends on the direct path watching
// (coll_adapt2_direct_watch_max): from the message while its peers keep up,
// left behind while they come late, so only where a send left behind reaches
// a late peer at this size (the receiver pulls); 0: none.
size_t watch_max(int collective, const Comm &comm, const adapt2_tree_settings_t &s) {
    return collective == ADAPT2_COLL_BCAST && receiver_pulls(comm, s) ? s.direct_watch_max : 0;
}

// Why the planned call cannot go direct, or nullptr. Only what is equal on
// every rank enters (the plan, the call's facts and size, tracing, the
// communicator's nodes).
const char *not_direct_because(const Comm &comm, const adapt2_call_t &call, const CallPlan &plan) {
    const size_t bytes = call.recv.bytes;
    if (plan.previous) return "handed to the previous component";
    if (!call.facts.blocking) return "non-blocking";
    if (device_planned(call.facts, bytes)) return "planned for GPU buffers (above device_bounce_max)";
    if (bytes == 0) return "empty";
    if (Tracer::get()) return "tracing is on";
    if (call.collective == ADAPT2_COLL_ALLREDUCE) {
        if (plan.algorithm != ADAPT2_ALLREDUCE_RECDOUBLING) return "not recursive doubling";
        return bytes <= kDirectMaxBytes ? nullptr : "above the direct path's 16 KiB";
    }
    if (call.collective == ADAPT2_COLL_ALLGATHER) {  // bytes: all p blocks
        if (plan.algorithm != ADAPT2_ALLGATHER_BRUCK) return "not Bruck's";
        return bytes <= INT_MAX ? nullptr : "above INT_MAX bytes (the PML's count)";
    }
    if (call.collective == ADAPT2_COLL_REDUCE_SCATTER_BLOCK) {  // bytes: all p blocks
        if (plan.algorithm != ADAPT2_REDUCE_SCATTER_HALVING) return "not recursive halving";
        // the direct halving folds in the order its exchanges bring the data
        if (!call.reduction.commutative) return "non-commutative op (the engine folds in rank order)";
        if (call.settings.reproducible) return "reproducible (the engine's order)";
        return bytes <= kDirectMaxBytes ? nullptr : "above the direct path's 16 KiB";
    }
    if (call.collective == ADAPT2_COLL_REDUCE) {
        // the direct reduce combines in its own fixed order
        if (!call.reduction.commutative) return "non-commutative op (the engine combines in rank order)";
        if (call.settings.reproducible) return "reproducible (the engine's order)";
        if (bytes > kDirectMaxBytes) return "above the direct path's 16 KiB";
    } else if (call.collective != ADAPT2_COLL_BCAST) {
        return "not a broadcast, reduce, allreduce, allgather or reduce_scatter_block";
    }
    if (Segments(bytes, plan.tree.segment_bytes).count() != 1) return "more than one segment";
    const adapt2_tree_settings_t &tree = plan.settings.tree;
    if (may_detach(tree, bytes) && bytes > leave_behind_max(comm, tree) &&
        bytes > watch_max(call.collective, comm, tree)) {
        return "may detach, above direct_detach_max and direct_watch_max (or 4 KiB across nodes or without single "
               "copy): hellos";
    }
    return nullptr;
}

// Bcast sends to the children, reduce to the parent.
void tree_route(Comm &comm, const CallPlan &plan, int collective, int root, size_t bytes,
                adapt2_direct_route_t *route) {
    const auto tree = planned_tree(comm.trees(), plan.tree, root);
    const int rank = comm.rank();
    route->parent = tree->parent(rank);
    route->children = 0;
    int remote_children = 0;
    for (int child : tree->children(rank)) {
        route->child[route->children++] = child;
        remote_children += comm.is_remote(child) ? 1 : 0;
    }
    if (collective == ADAPT2_COLL_REDUCE) {
        route->sends = route->parent >= 0 ? 1 : 0;
        route->remote_sends = route->parent >= 0 && comm.is_remote(route->parent) ? 1 : 0;
    } else {
        route->sends = route->children;
        route->remote_sends = remote_children;
    }
    // a call that may detach leaves its sends behind up to direct_detach_max,
    // and above it (a broadcast: not_direct_because let it through up to
    // direct_watch_max) while its peers come late
    const bool detaches = may_detach(plan.settings.tree, bytes);
    route->leave_behind = detaches && bytes <= leave_behind_max(comm, plan.settings.tree) ? 1 : 0;
    route->watch = detaches && !route->leave_behind ? 1 : 0;
    route->eager = bytes <= kCompletesAtOnceBytes ? 1 : 0;
    snprintf(route->plan, sizeof route->plan, "%s%s (rule: %s)", describe(plan.tree).c_str(),
             route->leave_behind ? ", sends left behind"
             : route->watch      ? ", sends watched (left behind while peers come late)"
                                 : "",
             plan.tree.rule);
}

// The route of exchanges that `plan_steps(push)` pushes (allreduce,
// allgather, reduce_scatter_block), named `name` in the verbose line.
template <class PlanSteps>
void exchanges_route(const Comm &comm, const CallPlan &plan, const char *name, PlanSteps plan_steps,
                     adapt2_direct_route_t *route) {
    route->steps = 0;
    route->leave_behind = 0;
    route->watch = 0;
    route->sends = 0;
    route->remote_sends = 0;
    plan_steps([&](adapt2_direct_step_t x) {
        if (route->steps >= ADAPT2_DIRECT_MAX_STEPS) throw std::length_error(std::string(name) + ": too many steps");
        route->step[route->steps++] = x;
        route->sends += x.send ? 1 : 0;
        route->remote_sends += x.send && comm.is_remote(x.peer) ? 1 : 0;
    });
    snprintf(route->plan, sizeof route->plan, "%s, %d exchanges (rule: %s)", name, route->steps, plan.algorithm_rule);
}

void exchange_route(const Comm &comm, const CallPlan &plan, adapt2_direct_route_t *route) {
    exchanges_route(
        comm, plan, "recursive doubling", [&](auto push) { plan_recdoubling(comm.rank(), comm.size(), push); }, route);
}

void allgather_route(const Comm &comm, const CallPlan &plan, adapt2_direct_route_t *route) {
    route->rotated = allgather_rotates(comm.size()) ? 1 : 0;
    exchanges_route(
        comm, plan, route->rotated ? "Bruck's" : "recursive doubling",
        [&](auto push) { plan_allgather(comm.rank(), comm.size(), push); }, route);
}

void reduce_scatter_route(const Comm &comm, const CallPlan &plan, adapt2_direct_route_t *route) {
    exchanges_route(
        comm, plan, "recursive halving", [&](auto push) { plan_halving_scatter(comm.rank(), comm.size(), push); },
        route);
}

// The bytes the route sends, and of them to other nodes: each message is the
// whole message, but an allgather's or a reduce-scatter's is some of the p
// blocks.
void count_sent_bytes(const Comm &comm, int collective, size_t message_bytes, adapt2_direct_route_t *route) {
    if (collective != ADAPT2_COLL_ALLGATHER && collective != ADAPT2_COLL_REDUCE_SCATTER_BLOCK) {
        route->sent_bytes = message_bytes * static_cast<uint64_t>(route->sends);
        route->remote_sent_bytes = message_bytes * static_cast<uint64_t>(route->remote_sends);
        return;
    }
    const uint64_t block = message_bytes / static_cast<uint64_t>(comm.size());
    route->sent_bytes = route->remote_sent_bytes = 0;
    for (int i = 0; i < route->steps; ++i) {
        const adapt2_direct_step_t &x = route->step[i];
        const uint64_t sent = x.send ? block * static_cast<uint64_t>(x.blocks) : 0;
        route->sent_bytes += sent;
        route->remote_sent_bytes += comm.is_remote(x.peer) ? sent : 0;
    }
}

}  // namespace

}  // namespace adapt2

extern "C" int mca_coll_adapt2_engine_direct_route(adapt2_engine_comm_t *engine_comm, const adapt2_call_t *call,
                                                   adapt2_direct_route_t *route) {
    using namespace adapt2;
    auto *comm = reinterpret_cast<Comm *>(engine_comm);
    try {
        const CallPlan plan = plan_call(*call, shape_of(*comm));
        if (const char *why = not_direct_because(*comm, *call, plan)) {
            snprintf(route->plan, sizeof route->plan, "not direct: %s", why);
            return 0;
        }
        if (call->collective == ADAPT2_COLL_ALLREDUCE) {
            exchange_route(*comm, plan, route);
        } else if (call->collective == ADAPT2_COLL_ALLGATHER) {
            allgather_route(*comm, plan, route);
        } else if (call->collective == ADAPT2_COLL_REDUCE_SCATTER_BLOCK) {
            reduce_scatter_route(*comm, plan, route);
        } else {
            tree_route(*comm, plan, call->collective, call->root, call->recv.bytes, route);
        }
        count_sent_bytes(*comm, call->collective, call->recv.bytes, route);
        return 1;
    } catch (...) {
        snprintf(route->plan, sizeof route->plan, "not direct: no memory to plan it");
        return 0;
    }
}

extern "C" void mca_coll_adapt2_engine_direct_done(adapt2_engine_comm_t *engine_comm, int collective,
                                                   const adapt2_direct_route_t *route) {
    using namespace adapt2;
    count(static_cast<Counter>(collective), 1);  // a collective's calls counter has its number
    count(Counter::direct_calls, 1);
    if (route->sends > 0) {
        count(Counter::segments_sent, static_cast<uint64_t>(route->sends));
        count(Counter::bytes_sent, route->sent_bytes);
    }
    if (route->remote_sends > 0) {
        reinterpret_cast<Comm *>(engine_comm)
            ->count_internode(static_cast<uint64_t>(route->remote_sends), route->remote_sent_bytes);
    }
}

extern "C" void mca_coll_adapt2_engine_direct_left_behind(size_t copied, int in_flight, int waited) {
    using namespace adapt2;
    count(Counter::detach_bytes, copied);
    if (in_flight) count(Counter::detached_calls, 1);
    if (waited) count(Counter::detach_waits, 1);
}
