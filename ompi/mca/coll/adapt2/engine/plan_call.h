// The one function that plans a call: from the call's facts (what the C
// layer knows: blocking, user op, device support, the user's `previous`),
// its buffers, op and settings, it decides whether adapt2 takes the call and
// with which effective settings (detaching, grace period, algorithm). The
// collectives' own planners (decision.h: the tree and segments of a bcast or
// reduce, the allreduce and allgather algorithms) then run inside the
// collective's start with those settings. The C layer decides nothing.
#ifndef ADAPT2_ENGINE_PLAN_CALL_H
#define ADAPT2_ENGINE_PLAN_CALL_H

#include "../adapt2_bridge.h"

namespace adapt2 {

struct CallPlan {
    bool previous = false;          // hand the call to the previous component
    adapt2_call_settings_t settings{};  // what the call runs with
    bool grace = false;             // a blocking bcast/reduce: a grace period before copying
    const char *rule = "";          // the call-level rule that applied (why, when previous)
};

CallPlan plan_call(const adapt2_call_t &call);

// The rule of a call whose settings stay as the C layer gave them.
const char *call_rule_as_set();

// Every call-level rule's name, for the test that each is reachable and named.
extern const char *const kCallRules[];
extern const int kCallRuleCount;

}  // namespace adapt2

#endif
