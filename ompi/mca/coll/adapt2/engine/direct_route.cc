// The direct path (the latency path's last step, docs/design.md): a blocking
// broadcast that its plan sends as one whole message with no hellos needs
// none of a schedule's machinery (segments, windows, staging, detaching):
// each rank receives the message from its parent in the plan's tree and
// sends it to its children. The C layer runs that with the PML's own calls
// and the user's datatype (coll_adapt2_direct.c); what it runs is decided
// here, from plan_call, so the tree is the one the engine's path would use
// and every rank, planning alike, takes the same path.
#include <cstdio>
#include <string>

#include "../adapt2_bridge.h"
#include "comm.h"
#include "detach.h"
#include "plan_call.h"
#include "segments.h"
#include "trace.h"

namespace adapt2 {
CallShape shape_of(const Comm &comm);

namespace {

// Why the planned call cannot go direct, or nullptr. Only what is equal on
// every rank enters (the plan, the call's facts and size, tracing).
const char *not_direct_because(const adapt2_call_t &call, const CallPlan &plan) {
    const size_t bytes = call.recv.bytes;
    if (plan.previous) return "handed to the previous component";
    if (call.collective != ADAPT2_COLL_BCAST) return "not a broadcast";
    if (!call.facts.blocking) return "non-blocking";
    if (call.facts.device_support) return "device support is on";
    if (bytes == 0) return "empty";
    if (Segments(bytes, plan.tree.segment_bytes).count() != 1) return "more than one segment";
    if (may_detach(plan.settings.tree, bytes)) return "may detach (hellos)";
    if (Tracer::get()) return "tracing is on";
    return nullptr;
}

}  // namespace

}  // namespace adapt2

extern "C" int mca_coll_adapt2_engine_direct_route(adapt2_engine_comm_t *engine_comm, const adapt2_call_t *call,
                                                   adapt2_direct_route_t *route) {
    using namespace adapt2;
    auto *comm = reinterpret_cast<Comm *>(engine_comm);
    try {
        const CallPlan plan = plan_call(*call, shape_of(*comm));
        if (const char *why = not_direct_because(*call, plan)) {
            snprintf(route->plan, sizeof route->plan, "not direct: %s", why);
            return 0;
        }
        const auto tree = planned_tree(comm->trees(), plan.tree, call->root);
        const int rank = comm->rank();
        route->parent = tree->parent(rank);
        route->children = 0;
        route->remote_children = 0;
        for (int child : tree->children(rank)) {
            route->child[route->children++] = child;
            route->remote_children += comm->is_remote(child) ? 1 : 0;
        }
        snprintf(route->plan, sizeof route->plan, "%s (rule: %s)", describe(plan.tree).c_str(), plan.tree.rule);
        return 1;
    } catch (...) {
        snprintf(route->plan, sizeof route->plan, "not direct: no memory to plan it");
        return 0;
    }
}

extern "C" void mca_coll_adapt2_engine_direct_done(adapt2_engine_comm_t *engine_comm, size_t message_bytes,
                                                  const adapt2_direct_route_t *route) {
    using namespace adapt2;
    auto *comm = reinterpret_cast<Comm *>(engine_comm);
    const uint64_t bytes = message_bytes;
    count(Counter::bcast_calls, 1);
    count(Counter::direct_calls, 1);
    if (route->children > 0) {
        count(Counter::segments_sent, static_cast<uint64_t>(route->children));
        count(Counter::bytes_sent, bytes * static_cast<uint64_t>(route->children));
    }
    if (route->remote_children > 0) {
        comm->count_internode(static_cast<uint64_t>(route->remote_children), bytes * route->remote_children);
    }
}
