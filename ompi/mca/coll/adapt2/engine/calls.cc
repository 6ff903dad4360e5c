// The engine's one entry point: a call description (adapt2_bridge.h) is
// checked and planned (plan_call.h), gets its tags and goes to its
// collective's start function. The
// dispatch is generated from collectives.def; each collective provides
//   int tags_of_<name>(const Comm &, const adapt2_call_t &)   tags it uses
//   int start_<name>(Comm &, const adapt2_call_t &, int tag)  starts it
// Broadcast, reduce and allreduce unpack the call here into the functions
// the unit tests and the simulator call directly (collectives.h).
#include <string>

#include "collectives.h"
#include "plan_call.h"
#include "trace.h"

namespace adapt2 {
namespace {

constexpr int kErrBadParam = -5;  // OMPI_ERR_BAD_PARAM

Grace **grace_of(const adapt2_call_t &c) { return reinterpret_cast<Grace **>(c.grace); }

bool valid_root(const Comm &comm, const adapt2_call_t &c) { return c.root >= 0 && c.root < comm.size(); }

adapt2_reduce_settings_t reduce_settings(const adapt2_call_t &c) {
    return {c.settings.tree, c.settings.reproducible};
}

// A reduction's contribution: in the result buffer when in place.
const adapt2_buffer_t &own(const adapt2_call_t &c) { return c.in_place ? c.recv : c.send; }

}  // namespace

int tags_of_bcast(const Comm &comm, const adapt2_call_t &c) {
    return bcast_tags(c.settings.tree, c.recv.bytes, comm.size());
}

int start_bcast(Comm &comm, const adapt2_call_t &c, int tag) {
    if (!valid_root(comm, c)) return kErrBadParam;
    return start_bcast(comm, c.recv, c.root, tag, c.settings.tree, c.done, c.ctx, c.finished, grace_of(c));
}

int tags_of_reduce(const Comm &, const adapt2_call_t &c) {
    if (c.reduction.unit_bytes == 0) return 1;  // refused by start_reduce
    return reduce_tags(reduce_settings(c), own(c).bytes, c.reduction.unit_bytes, c.reduction.commutative != 0);
}

int start_reduce(Comm &comm, const adapt2_call_t &c, int tag) {
    if (!valid_root(comm, c) || c.reduction.unit_bytes == 0) return kErrBadParam;
    return start_reduce(comm, own(c), c.recv, c.in_place != 0, c.reduction, c.root, tag, reduce_settings(c),
                        c.done, c.ctx, c.finished, grace_of(c));
}

int tags_of_allreduce(const Comm &, const adapt2_call_t &c) { return allreduce_tags(c.settings); }

int start_allreduce(Comm &comm, const adapt2_call_t &c, int tag) {
    if (c.reduction.unit_bytes == 0) return kErrBadParam;
    return start_allreduce(comm, own(c), c.recv, c.in_place != 0, c.reduction, tag, c.settings, c.done, c.ctx,
                           c.finished);
}

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

int start_call(Comm &comm, const adapt2_call_t &call, const char **why) {
    if (call.collective < 0 || call.collective >= ADAPT2_COLL_COUNT) return kErrBadParam;
    if (call.grace) *call.grace = nullptr;
    const CallPlan plan = plan_call(call);
    if (plan.previous) {
        if (why) *why = plan.rule;
        return ADAPT2_STATUS_PREVIOUS;
    }
    log_call_rule(comm, call, plan);
    const adapt2_call_t c = planned_call(call, plan);
    switch (c.collective) {
#define ADAPT2_COLLECTIVE(name, NAME) \
    case ADAPT2_COLL_##NAME: return start_##name(comm, c, comm.reserve_tags(tags_of_##name(comm, c)));
#include "../collectives.def"
#undef ADAPT2_COLLECTIVE
    }
    return kErrBadParam;
}

}  // namespace adapt2
