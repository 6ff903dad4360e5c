// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// The engine's one entry point: a call description (adapt2_bridge.h) is
// checked and planned (plan_call.h), gets its tags and goes to its
// collective's start function. The dispatch is generated from
// collectives.def; each collective provides
//   int tags_of_<name>(const Comm &, const adapt2_call_t &, const CallPlan &)
//   int start_<name>(Comm &, const adapt2_call_t &, const CallPlan &, int tag)
// Broadcast, reduce and allreduce can also be described by their parts
// (the unit tests do): those become a call here.
#include <string>

#include "collectives.h"
#include "plan_call.h"
#include "trace.h"

namespace adapt2 {

CallShape shape_of(const Comm &comm) { return {comm.size(), comm.nodes(), comm.nodes_in_blocks()}; }

namespace {

// The call as planned: the plan's settings, and a grace handle only where
// the plan gives the call a grace period.
adapt2_call_t planned_call(const adapt2_call_t &call, const CallPlan &plan) {
    adapt2_call_t c = call;
    c.settings = plan.settings;
    if (!plan.grace) c.grace = nullptr;
    return c;
}

// Logged where a call-level rule changed the settings (the collective's own
// plan line follows); a call handed on is logged with its reason by the C layer.
void log_call_rule(const Comm &comm, const adapt2_call_t &call, const CallPlan &plan) {
    if (!comm.logs(20) || plan.previous || plan.rule == call_rule_as_set()) return;
    comm.log(20, "(cid " + std::to_string(comm.id()) + ") " + trace_coll_name(static_cast<TraceColl>(call.collective)) +
                     ": call rule: " + plan.rule);
}

// Plans the call and starts it with the tag block `tag`, or (tag < 0) the
// one reserved for it.
int plan_and_start(Comm &comm, const adapt2_call_t &call, int tag, const char **why) {
    if (call.collective < 0 || call.collective >= ADAPT2_COLL_COUNT) return ADAPT2_STATUS_BAD_PARAM;
    if (call.grace) *call.grace = nullptr;
    const CallPlan plan = plan_call(call, shape_of(comm));
    if (plan.previous) {
        if (why) *why = plan.rule;
        return ADAPT2_STATUS_PREVIOUS;
    }
    log_call_rule(comm, call, plan);
    const adapt2_call_t c = planned_call(call, plan);
    switch (c.collective) {
#define ADAPT2_COLLECTIVE(name, NAME) \
    case ADAPT2_COLL_##NAME:          \
        return start_##name(comm, c, plan, tag >= 0 ? tag : comm.reserve_tags(tags_of_##name(comm, c, plan)));
#include "../collectives.def"
#undef ADAPT2_COLLECTIVE
    }
    return ADAPT2_STATUS_BAD_PARAM;
}

}  // namespace

int start_call(Comm &comm, const adapt2_call_t &call, const char **why) { return plan_and_start(comm, call, -1, why); }

int start_call_at(Comm &comm, const adapt2_call_t &call, int tag) { return plan_and_start(comm, call, tag, nullptr); }

int start_bcast(Comm &comm, const adapt2_buffer_t &data, int root, int tag, const adapt2_bcast_settings_t &settings,
                DoneFn done, void *done_ctx, DoneFn finished, Grace **grace) {
    adapt2_call_t c{};
    c.collective = ADAPT2_COLL_BCAST;
    c.facts.blocking = settings.blocking;
    c.recv = data;
    c.root = root;
    c.settings.tree = settings;
    c.done = done, c.ctx = done_ctx, c.finished = finished;
    c.grace = reinterpret_cast<void **>(grace);
    return start_call_at(comm, c, tag);
}

int start_reduce(Comm &comm, const adapt2_buffer_t &own, const adapt2_buffer_t &result, bool in_place,
                 const adapt2_reduction_t &op, int root, int tag, const adapt2_reduce_settings_t &settings, DoneFn done,
                 void *done_ctx, DoneFn finished, Grace **grace) {
    adapt2_call_t c{};
    c.collective = ADAPT2_COLL_REDUCE;
    c.facts.blocking = settings.tree.blocking;
    c.send = own;
    c.recv = result;
    c.in_place = in_place && comm.rank() == root;  // MPI_IN_PLACE is the root's only
    c.reduction = op;
    c.root = root;
    c.settings.tree = settings.tree;
    c.settings.reproducible = settings.reproducible;
    c.done = done, c.ctx = done_ctx, c.finished = finished;
    c.grace = reinterpret_cast<void **>(grace);
    return start_call_at(comm, c, tag);
}

int start_allreduce(Comm &comm, const adapt2_buffer_t &own, const adapt2_buffer_t &result, bool in_place,
                    const adapt2_reduction_t &op, int tag, const adapt2_allreduce_settings_t &settings, DoneFn done,
                    void *done_ctx, DoneFn finished) {
    adapt2_call_t c{};
    c.collective = ADAPT2_COLL_ALLREDUCE;
    c.facts.blocking = settings.tree.blocking;
    c.send = own;
    c.recv = result;
    c.in_place = in_place;
    c.reduction = op;
    c.settings = settings;
    c.done = done, c.ctx = done_ctx, c.finished = finished;
    return start_call_at(comm, c, tag);
}

}  // namespace adapt2
