// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// plan_call: the call-level rules, in the order they are tried. Each is
// equal on every rank (the facts are), so all ranks take the same branch.
#include "plan_call.h"

#include "rules.h"

namespace adapt2 {

namespace rules {
const char *const previous_asked = "the collective's algorithm is `previous`";
const char *const ring_device =
    "device support is on, the call is non-blocking or above device_bounce_max, and the ring collectives do not "
    "stage GPU buffers yet";
const char *const allreduce_couples = "allreduce: every rank needs every contribution, nothing detaches";
const char *const allreduce_device_tree =
    "allreduce planned for GPU buffers (device support on, non-blocking or above device_bounce_max): the tree "
    "(the only algorithm that stages GPU buffers; every rank picks it whatever memory its buffers are in)";
const char *const user_op_coupled =
    "user-defined op: never called after the call returned (its state may live only during the call)";
const char *const as_set = "as set";
}  // namespace rules

const char *const kCallRules[] = {rules::previous_asked,        rules::ring_device,     rules::allreduce_couples,
                                  rules::allreduce_device_tree, rules::user_op_coupled, rules::as_set};
const int kCallRuleCount = sizeof kCallRules / sizeof kCallRules[0];

const char *call_rule_as_set() { return rules::as_set; }

namespace {

CallPlan hand_on(const char *rule) {
    CallPlan plan;
    plan.previous = true;
    plan.rule = rule;
    return plan;
}

bool is_ring_collective(int collective) {
    return collective == ADAPT2_COLL_ALLGATHER || collective == ADAPT2_COLL_REDUCE_SCATTER_BLOCK;
}

// The user's decision table's line for this call (rules.h), if one matches
// and the collective's algorithm is `auto`.
const Rule *table_rule(const adapt2_call_t &call, const CallShape &shape) {
    const RuleTable *table = rule_table();
    if (!table || !table_decides(call.collective, call.settings)) return nullptr;
    return table->match(call.collective, shape, message_bytes(call));
}

// Why the call goes to the previous component, given its table line (or
// nullptr), or nullptr.
const char *hand_on_because(const adapt2_call_t &call, const Rule *from_table) {
    const adapt2_call_facts_t &f = call.facts;
    if (f.previous) return rules::previous_asked;
    if (is_ring_collective(call.collective) && device_planned(f, message_bytes(call))) return rules::ring_device;
    return from_table && from_table->previous ? from_table->where.c_str() : nullptr;
}

// With GPU support on, segments are at least device_segment_size: each one
// costs CUDA operations (copies, events, a kernel) of some microseconds. The
// facts are the same on every rank, so every rank cuts alike. 0 stays 0 (one
// segment); a floor of 0 changes nothing.
void raise_segments_for_device(size_t least, adapt2_tree_settings_t *s) {
    if (least == 0) return;
    for (size_t *bytes : {&s->segment_size, &s->topology_segment_size, &s->node_segment_size, &s->numa_segment_size}) {
        if (*bytes != 0 && *bytes < least) *bytes = least;
    }
    s->node_message_cost = 0;  // the two trees between nodes then take topology_segment_size, raised
}

}  // namespace

bool device_bounces(const adapt2_call_facts_t &f, uint64_t bytes) {
    return f.device_support && f.blocking && f.device_bounce_max > 0 && bytes <= f.device_bounce_max;
}

const char *hand_on_rule(const adapt2_call_t &call, const CallShape &shape) {
    return hand_on_because(call, table_rule(call, shape));
}

CallPlan plan_call(const adapt2_call_t &call, const CallShape &shape) {
    const adapt2_call_facts_t &f = call.facts;
    const Rule *from_table = table_rule(call, shape);
    if (const char *rule = hand_on_because(call, from_table)) return hand_on(rule);

    CallPlan plan;
    plan.settings = call.settings;
    if (from_table) apply_rule(*from_table, call.collective, &plan.settings);
    const bool for_device = device_planned(f, message_bytes(call));
    if (for_device) raise_segments_for_device(f.device_segment_size, &plan.settings.tree);
    plan.settings.tree.blocking = f.blocking != 0;
    plan.rule = rules::as_set;
    switch (call.collective) {
    case ADAPT2_COLL_ALLREDUCE:
        plan.settings.tree.detach_max_message = 0;
        plan.rule = rules::allreduce_couples;
        if (for_device && plan.settings.algorithm != ADAPT2_ALLREDUCE_TREE) {
            plan.settings.algorithm = ADAPT2_ALLREDUCE_TREE;
            plan.rule = rules::allreduce_device_tree;
        }
        break;
    case ADAPT2_COLL_REDUCE:
        if (f.user_op) {
            plan.settings.tree.detach_max_message = 0;
            plan.rule = rules::user_op_coupled;
        }
        plan.grace = f.blocking != 0;
        break;
    case ADAPT2_COLL_BCAST: plan.grace = f.blocking != 0; break;
    default: break;
    }
    switch (call.collective) {
#define ADAPT2_COLLECTIVE(name, NAME)           \
    case ADAPT2_COLL_##NAME:                    \
        plan_##name##_call(call, shape, &plan); \
        break;
#include "../collectives.def"
#undef ADAPT2_COLLECTIVE
    }
    if (from_table) plan.algorithm_rule = plan.tree.rule = from_table->where.c_str();
    return plan;
}

}  // namespace adapt2
