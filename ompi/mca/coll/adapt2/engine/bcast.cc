// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
#include "bcast_flow.h"
#include "collectives.h"
#include "counters.h"
#include "decision.h"
#include "detach.h"
#include "schedule.h"
#include "two_tree.h"

namespace adapt2 {

int tags_of_bcast(const Comm &, const adapt2_call_t &call, const CallPlan &plan) {
    const size_t bytes = call.recv.bytes;
    const adapt2_tree_settings_t &s = call.settings.tree;
    if (const size_t cut = two_tree_cut(plan.tree, bytes, 1)) {
        return half_tags(s, plan.tree, cut, 1) + half_tags(s, plan.tree, bytes - cut, 1);
    }
    return half_tags(s, plan.tree, bytes, 1);
}

BufferPool *staging_pool(Comm &comm, bool on_device, int *error) {
    *error = 0;
    if (!on_device) return &comm.pool();
    DeviceState *device = comm.device(error);
    return device ? &device->pinned_pool() : nullptr;
}

namespace {

// The flow of `data` (the message, or one half of it) down `tree`, its tags
// counting down from `tag`.
BcastArgs flow_args(Comm &comm, const adapt2_call_t &call, const BcastPlan &plan, const adapt2_buffer_t &data,
                    const Tree &tree, int tag, bool grace) {
    const adapt2_bcast_settings_t &settings = call.settings.tree;
    BcastArgs args;
    args.rank = comm.rank();
    args.tag = tag;
    args.data = data;
    args.segment_bytes = plan.segment_bytes;
    level_groups(plan, Segments(data.bytes, plan.segment_bytes).count(), args.groups);
    args.recv_window = settings.recv_window;
    args.send_window = settings.send_window;
    args.tag_block = flow_tags(settings, Segments(data.bytes, plan.segment_bytes), data.bytes);
    args.hello = may_detach(settings, data.bytes);
    args.hello_tag = tag - args.tag_block;
    // Only a rank that passes data on has anything to detach from; device
    // data never detaches (its hellos still match its peers').
    const bool passes_on = args.hello && tree.children(comm.rank()).size() > 0 && !data.on_device;
    // A blocking root with a grace period: from await_min_bytes it waits for
    // its children's hellos before copying (below, waiting costs more than
    // a copy: docs/design.md, "Choosing the defaults"); below, it copies at
    // once only while children have been late lately (late_peers.h).
    const bool blocking_root = grace && settings.blocking && comm.rank() == call.root && data.contig;
    if (passes_on && !(blocking_root && watches(comm, settings, data.bytes, &args))) {
        args.copy = borrow_detach_copy(comm, settings, data.bytes);
        args.copy_pool = &comm.detach_pool();
    }
    args.await = blocking_root && args.copy && data.bytes >= settings.await_min_bytes;
    return args;
}

}  // namespace

int start_bcast(Comm &comm, const adapt2_call_t &call, const CallPlan &planned, int tag) {
    const adapt2_buffer_t &data = call.recv;
    const BcastPlan &plan = planned.tree;
    const int root = call.root;
    Grace **grace = reinterpret_cast<Grace **>(call.grace);
    if (root < 0 || root >= comm.size()) return ADAPT2_STATUS_BAD_PARAM;
    int error = 0;
    BufferPool *pool = staging_pool(comm, data.on_device, &error);
    if (!pool) return ADAPT2_STATUS_DEVICE_ERROR;
    ScheduleHandle schedule = new_schedule(comm, call.done, call.ctx, call.finished);
    schedule->set_trace(TraceColl::bcast, comm.id(), comm.next_call(), data.bytes, root);
    if (const size_t cut = two_tree_cut(plan, data.bytes, 1)) {
        // each half down its own tree (no detaching: plan_bcast_call)
        auto first = half_tree(comm, plan, root, 0), second = half_tree(comm, plan, root, 1);
        const BcastArgs a = flow_args(comm, call, plan, part_of(data, 0, cut), *first, tag, false);
        const int second_tag = tag - half_tags(call.settings.tree, plan, cut, 1);
        const BcastArgs b =
            flow_args(comm, call, plan, part_of(data, cut, data.bytes - cut), *second, second_tag, false);
        if (comm.logs(20)) {
            comm.log(20, plan_line(comm.id(), "bcast", data.bytes, root,
                                   describe(plan) + halves_text(cut, data.bytes, "down the two trees"), plan.rule));
        }
        if (grace) *grace = nullptr;
        schedule->add_flow<BcastFlow>(a, std::move(first), *pool);
        schedule->add_flow<BcastFlow>(b, std::move(second), *pool);
    } else {
        auto tree = planned_tree(comm.trees(), plan, root);
        const BcastArgs args = flow_args(comm, call, plan, data, *tree, tag, grace != nullptr);
        if (comm.logs(20)) {
            comm.log(20, plan_line(comm.id(), "bcast", data.bytes, root,
                                   describe(plan) + (args.hello ? "; may detach" : "") +
                                       (args.await ? ", awaits hellos" : "") +
                                       (args.watch ? ", sends from the user's buffer (no child late lately)" : ""),
                                   plan.rule));
        }
        if (grace) *grace = args.await || args.watch ? schedule->add_grace() : nullptr;
        schedule->add_flow<BcastFlow>(args, std::move(tree), *pool);
    }
    count(Counter::bcast_calls, 1);
    schedule.release()->start();  // from here on the schedule owns itself
    return 0;
}

}  // namespace adapt2
