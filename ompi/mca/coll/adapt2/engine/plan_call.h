// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// The one function that plans a call: from the call's facts (what the C
// layer knows: blocking, user op, device support, the user's `previous`),
// its sizes, op and settings, and the communicator's shape, it decides
// whether adapt2 takes the call, with which effective settings (detaching,
// grace period), and what the collective runs: the algorithm, or the tree,
// segments and levels (each collective's part is plan_<name>_call in
// decision.cc). The collective's start builds what the plan says; what
// depends on this rank's place in the tree (awaiting hellos, combining on
// the GPU) it derives there from the plan. The C layer decides nothing.
#ifndef ADAPT2_ENGINE_PLAN_CALL_H
#define ADAPT2_ENGINE_PLAN_CALL_H

#include "../adapt2_bridge.h"
#include "decision.h"

namespace adapt2 {

// A reduction's own contribution: in the result buffer when in place.
inline const adapt2_buffer_t &own_data(const adapt2_call_t &c) { return c.in_place ? c.recv : c.send; }

// What a plan knows of the communicator: the same on every rank.
struct CallShape {
    int size = 1;                 // ranks
    int nodes = 1;                // nodes it spans (multi-level plans)
    bool nodes_in_blocks = true;  // each node's ranks are consecutive (block placement)
};

struct CallPlan {
    bool previous = false;              // hand the call to the previous component
    adapt2_call_settings_t settings{};  // what the call runs with
    bool grace = false;                 // a blocking bcast/reduce: a grace period before copying
    const char *rule = "";              // the call-level rule that applied (why, when previous)
    // The collective's part (plan_<name>_call):
    int algorithm = 0;                // allreduce, allgather, reduce_scatter_block: never auto
    const char *algorithm_rule = "";  // the rule that chose it
    BcastPlan tree{};                 // bcast, reduce and the tree allreduce: tree, segments, levels
    bool whole_down = false;          // multi-level allgather: leaders send the result down in one message
};

// Every rank plans alike: nothing here may depend on one rank's buffers
// (their layout or memory), as ranks may describe one call's data with
// different datatypes.
CallPlan plan_call(const adapt2_call_t &call, const CallShape &shape);

// The rule by which plan_call hands the call to the previous component, or
// nullptr. It reads only the call's facts, settings and message size (not
// its buffers), so the C layer asks it before it describes any buffer: a
// handed-on call then costs almost nothing.
const char *hand_on_rule(const adapt2_call_t &call, const CallShape &shape);

// Whether the call is bounced (GPU support on, blocking, at most
// device_bounce_max bytes: planned as a host call; each rank whose buffers
// are GPU memory copies them whole through host memory), and whether it is
// planned for GPU buffers (support on, not bounced). `bytes`: the message
// size as message_bytes() counts it; equal on every rank.
bool device_bounces(const adapt2_call_facts_t &facts, uint64_t bytes);
inline bool device_planned(const adapt2_call_facts_t &facts, uint64_t bytes) {
    return facts.device_support && !device_bounces(facts, bytes);
}

// Each collective's part of the plan, from the call-level settings in
// *plan (decision.cc; declared from collectives.def).
#define ADAPT2_COLLECTIVE(name, NAME) \
    void plan_##name##_call(const adapt2_call_t &call, const CallShape &shape, CallPlan *plan);
#include "../collectives.def"
#undef ADAPT2_COLLECTIVE

// The rule of a call whose settings stay as the C layer gave them.
const char *call_rule_as_set();

// Every call-level rule's name, for the test that each is reachable and named.
extern const char *const kCallRules[];
extern const int kCallRuleCount;

}  // namespace adapt2

#endif
