// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Reduce and the tree allreduce: build the flows, start the schedule.
#include "bcast_flow.h"
#include "collectives.h"
#include "counters.h"
#include "decision.h"
#include "detach.h"
#include "halving_flow.h"
#include "recdoubling_flow.h"
#include "reduce_flow.h"
#include "ring_flow.h"
#include "schedule.h"
#include "two_tree.h"

namespace adapt2 {
namespace {

ReduceArgs reduce_args(const Comm &comm, const adapt2_buffer_t &own, const adapt2_buffer_t &result, bool in_place,
                       const adapt2_reduction_t &op, int tag, const adapt2_tree_settings_t &tree, size_t segment_bytes,
                       bool reproducible) {
    ReduceArgs a;
    a.rank = comm.rank();
    a.tag = tag;
    a.own = own;
    a.result = result;
    a.in_place = in_place;
    a.op = op;
    a.segment_bytes = segment_bytes;
    a.recv_window = tree.recv_window;
    a.send_window = tree.send_window;
    a.fixed_order = !op.commutative || reproducible;
    return a;
}

static_assert(ADAPT2_DEVICE_OP_MAXLOC - 1 == static_cast<int>(DeviceOp::maxloc), "op numbering");
static_assert(ADAPT2_DEVICE_TYPE_SHORT_INT - 1 == static_cast<int>(DeviceType::short_int), "type numbering");

// Combine on the GPU where this rank's data is there, it combines children's
// data, the op has a kernel for the type and any arrival order will do (a
// fixed order combines on the host); the root's result must be on the GPU too.
void plan_gpu_combine(Comm &comm, ReduceArgs *a, const Tree &tree, int root) {
    const adapt2_buffer_t &mine = a->in_place ? a->result : a->own;
    if (!mine.on_device || a->op.device_op == 0 || a->op.device_type == 0 || a->fixed_order) return;
    if (tree.children(comm.rank()).size() == 0 || (comm.rank() == root && !a->result.on_device)) return;
    int error = 0;
    DeviceState *device = comm.device(&error);
    const auto dop = static_cast<DeviceOp>(a->op.device_op - 1);
    const auto type = static_cast<DeviceType>(a->op.device_type - 1);
    if (!device || !device->queue().backend().can_reduce(dop, type)) return;
    a->gpu_combine = true;
    a->device_pool = &device->device_pool();
}

}  // namespace

int tags_of_reduce(const Comm &, const adapt2_call_t &call, const CallPlan &plan) {
    const size_t bytes = own_data(call).bytes, unit = call.reduction.unit_bytes;
    const adapt2_tree_settings_t &s = call.settings.tree;
    if (unit == 0) return 1;  // refused by start_reduce
    if (const size_t cut = two_tree_cut(plan.tree, bytes, unit)) {
        return half_tags(s, plan.tree, cut, unit) + half_tags(s, plan.tree, bytes - cut, unit);
    }
    return half_tags(s, plan.tree, bytes, unit);
}

namespace {

// The flow of `own` (the contribution, or one half of it) up `tree` into
// `result` (the same part of it), its tags counting down from `tag`.
ReduceArgs flow_args(Comm &comm, const adapt2_call_t &call, const BcastPlan &plan, const adapt2_buffer_t &own,
                     const adapt2_buffer_t &result, const Tree &tree, bool on_device, int tag, bool grace) {
    const adapt2_reduction_t &op = call.reduction;
    const int root = call.root;
    const bool in_place = call.in_place != 0;
    const adapt2_tree_settings_t &tree_settings = call.settings.tree;
    ReduceArgs args = reduce_args(comm, own, result, in_place && comm.rank() == root, op, tag, tree_settings,
                                  plan.segment_bytes, call.settings.reproducible != 0);
    args.tag_block = flow_tags(tree_settings, Segments(own.bytes, plan.segment_bytes, op.unit_bytes), own.bytes);
    args.hello = may_detach(tree_settings, own.bytes);
    args.hello_tag = tag - args.tag_block;
    const bool leaf = tree.children(comm.rank()).size() == 0;
    const bool contig = in_place ? result.contig : own.contig;
    // Every non-root rank passes its data on: each may detach (not from
    // device data; its hellos still match its peers'). A blocking leaf of
    // the root from watch_min_bytes below await_min_bytes copies only while
    // the root has been late lately (late_peers.h), as a broadcast root does.
    const bool passes_on = comm.rank() != root && args.hello && !on_device;
    const bool blocking_leaf_of_root =
        grace && tree_settings.blocking && contig && leaf && tree.parent(comm.rank()) == root;
    if (passes_on && !(blocking_leaf_of_root && watches(comm, tree_settings, own.bytes, &args))) {
        args.copy = borrow_detach_copy(comm, tree_settings, own.bytes);
        args.copy_pool = &comm.detach_pool();
    }
    // A blocking non-root copies only if, when the grace period ends, its
    // own data is not all combined (interior ranks) or its parent has not
    // said hello (leaves). A leaf may trust a hello only from a parent that
    // stays in the call until it has pulled the data: the root. An interior
    // parent may detach and go computing before a late leaf arrives, and
    // that leaf would then wait for its next MPI call (measured: noise
    // amplification of a 1 MiB reduce at np 4 went from 0.9-1.0 to 1.7-2.2).
    plan_gpu_combine(comm, &args, tree, root);
    // Below await_min_bytes a leaf's copy costs less than waiting for the
    // hello, as a broadcast root's does (docs/design.md, "Choosing the
    // defaults"). Not an interior rank's: what it has not combined when it
    // detaches waits for its next MPI call, and the root with it.
    args.await = grace && tree_settings.blocking && args.copy && contig &&
                 (!leaf || (tree.parent(comm.rank()) == root && own.bytes >= tree_settings.await_min_bytes));
    return args;
}

}  // namespace

int start_reduce(Comm &comm, const adapt2_call_t &call, const CallPlan &planned, int tag) {
    const adapt2_buffer_t &own = own_data(call), &result = call.recv;
    const bool in_place = call.in_place != 0;
    const adapt2_reduction_t &op = call.reduction;
    const int root = call.root;
    const BcastPlan &plan = planned.tree;
    Grace **grace = reinterpret_cast<Grace **>(call.grace);
    if (root < 0 || root >= comm.size() || op.unit_bytes == 0) return ADAPT2_STATUS_BAD_PARAM;
    const bool on_device =
        (in_place && comm.rank() == root ? result : own).on_device || (comm.rank() == root && result.on_device);
    int error = 0;
    BufferPool *pool = staging_pool(comm, on_device, &error);
    if (!pool) return ADAPT2_STATUS_DEVICE_ERROR;
    ScheduleHandle schedule = new_schedule(comm, call.done, call.ctx, call.finished);
    schedule->set_trace(TraceColl::reduce, comm.id(), comm.next_call(), own.bytes, root);
    if (const size_t cut = two_tree_cut(plan, own.bytes, op.unit_bytes)) {
        // each half up its own tree (no detaching: plan_reduce_call); a
        // non-root's result buffer is not used, its parts neither
        auto first = half_tree(comm, plan, root, 0), second = half_tree(comm, plan, root, 1);
        const size_t rest = own.bytes - cut;
        const ReduceArgs a =
            flow_args(comm, call, plan, part_of(own, 0, cut), part_of(result, 0, cut), *first, on_device, tag, false);
        const int second_tag = tag - half_tags(call.settings.tree, plan, cut, op.unit_bytes);
        const ReduceArgs b = flow_args(comm, call, plan, part_of(own, cut, rest), part_of(result, cut, rest), *second,
                                       on_device, second_tag, false);
        if (comm.logs(20)) {
            comm.log(20, plan_line(comm.id(), "reduce", own.bytes, root,
                                   describe(plan) + halves_text(cut, own.bytes, "up the two trees"), plan.rule));
        }
        if (grace) *grace = nullptr;
        schedule->add_flow<ReduceFlow>(a, std::move(first), *pool);
        schedule->add_flow<ReduceFlow>(b, std::move(second), *pool);
    } else {
        auto tree = planned_tree(comm.trees(), plan, root);
        const ReduceArgs args = flow_args(comm, call, plan, own, result, *tree, on_device, tag, grace != nullptr);
        if (comm.logs(20)) {
            comm.log(20, plan_line(comm.id(), "reduce", own.bytes, root,
                                   describe(plan) + (args.gpu_combine ? ", combined on the GPU" : "") +
                                       (args.hello ? "; may detach" : "") +
                                       (args.watch ? ", sends from the user's buffer (no parent late lately)" : ""),
                                   plan.rule));
        }
        if (grace) *grace = args.await || args.watch ? schedule->add_grace() : nullptr;
        schedule->add_flow<ReduceFlow>(args, std::move(tree), *pool);
    }
    count(Counter::reduce_calls, 1);
    schedule.release()->start();
    return 0;
}

namespace {
// Tags of one fused tree: its reduction up, then its broadcast down.
int fused_tree_tags(int window) { return ReduceFlow::tags_needed(window) + BcastFlow::tags_needed(window); }
}  // namespace

// Two tag blocks: the reduction up the tree, then the broadcast down it (the
// ring and recursive doubling use the first); twice that on two trees.
int tags_of_allreduce(const Comm &, const adapt2_call_t &call, const CallPlan &plan) {
    if (plan.algorithm == ADAPT2_ALLREDUCE_RABENSEIFNER) return HalvingFlow::tags_needed(true);
    const int pair = fused_tree_tags(call.settings.tree.send_window);
    const bool halves = plan.algorithm == ADAPT2_ALLREDUCE_TREE &&
                        two_tree_cut(plan.tree, call.recv.bytes, call.reduction.unit_bytes) != 0;
    return halves ? 2 * pair : pair;
}

// The fused tree allreduce: a reduction to rank 0 whose finished segments
// are broadcast down the same tree at once, while later segments are still
// being reduced.
namespace {

// The ring works in the result buffer where it is contiguous, else in a
// pool buffer that it fills from the user's data and delivers from. Its two
// phases, reduce-scatter then allgather, run in one flow.
void add_ring(Schedule &schedule, Comm &comm, const adapt2_buffer_t &own, const adapt2_buffer_t &result, bool in_place,
              const adapt2_reduction_t &op, int tag, const adapt2_allreduce_settings_t &s) {
    RingArgs a;
    a.rank = comm.rank();
    a.size = comm.size();
    a.tag = tag;
    a.bytes = result.bytes;
    a.unit = op.unit_bytes;
    a.op = op;
    a.work = result.contig;
    if (!a.work && a.bytes > 0) {
        a.work = comm.pool().borrow_one(a.bytes);
        a.work_borrowed = true;
        a.deliver = true;
        a.deliver_to = {result, 0, 0, a.bytes};
    }
    a.fill = !(in_place && a.work == result.contig);
    a.fill_from = {in_place ? result : own, 0, 0, a.bytes};
    // auto on one node: one message per block, measured fastest there
    // (docs/design.md); a forced ring, and any ring across nodes, pipelines
    // blocks in segments of the allreduce segment size (measured on the
    // emulated cluster: choose_allreduce).
    const bool segmented = s.algorithm == ADAPT2_ALLREDUCE_RING || s.tree.topology;
    a.segment_bytes = segmented ? s.tree.segment_size : 0;
    a.recv_window = s.tree.recv_window;
    a.send_window = s.tree.send_window;
    schedule.add_flow<RingFlow>(a, comm.pool());
}

// The fused tree allreduce of `mine` (the contribution, or a part of it)
// into the same part of `result`: a reduction to rank 0 whose finished
// segments go down the same tree at once. Tags count down from `tag`.
void add_fused_tree(Schedule &schedule, Comm &comm, const adapt2_call_t &call, const BcastPlan &plan,
                    std::shared_ptr<const Tree> tree, const adapt2_buffer_t &mine, const adapt2_buffer_t &result,
                    int tag, BufferPool &pool) {
    const int root = 0;
    const adapt2_allreduce_settings_t &settings = call.settings;
    const bool in_place = call.in_place != 0;
    ReduceArgs up = reduce_args(comm, mine, result, in_place, call.reduction, tag, settings.tree, plan.segment_bytes,
                                settings.reproducible != 0);
    up.in_place = in_place && comm.rank() == root;
    plan_gpu_combine(comm, &up, *tree, root);
    auto &reduce = schedule.add_flow<ReduceFlow>(up, tree, pool);
    BcastArgs down;
    down.rank = comm.rank();
    down.tag = tag - ReduceFlow::tags_needed(settings.tree.send_window);
    down.data = result;
    down.segment_bytes = plan.segment_bytes;
    down.unit = call.reduction.unit_bytes;
    level_groups(plan, Segments(result.bytes, plan.segment_bytes, down.unit).count(), down.groups);
    down.recv_window = settings.tree.recv_window;
    down.send_window = settings.tree.send_window;
    down.supplied = true;
    auto &bcast = schedule.add_flow<BcastFlow>(down, std::move(tree), pool);
    if (comm.rank() == root) reduce.feed(&bcast);
}

// Recursive doubling in the result buffer where both are contiguous, else
// staged through the pool.
void add_recdoubling(Schedule &schedule, Comm &comm, const adapt2_buffer_t &own, const adapt2_buffer_t &result,
                     bool in_place, const adapt2_reduction_t &op, int tag) {
    RecDoublingArgs a{comm.rank(), comm.size(), tag, in_place ? nullptr : own.contig, result.contig, result.bytes,
                      op,          {},          {}};
    if (!result.contig || (!in_place && !own.contig)) {
        a.own = a.result = nullptr;
        a.stage_in = {in_place ? result : own, 0, 0, result.bytes};
        a.stage_out = {result, 0, 0, result.bytes};
    }
    schedule.add_flow<RecDoublingFlow>(a, comm.pool());
}

// Rabenseifner's: recursive halving then doubling, in the result buffer (or
// a pool buffer where that is not contiguous host memory).
void add_rabenseifner(Schedule &schedule, Comm &comm, const adapt2_buffer_t &own, const adapt2_buffer_t &result,
                      bool in_place, const adapt2_reduction_t &op, int tag) {
    HalvingArgs a;
    a.rank = comm.rank();
    a.size = comm.size();
    a.tag = tag;
    a.bytes = result.bytes;
    a.allreduce = true;
    a.op = op;
    a.input = {in_place ? result : own, 0, 0, result.bytes};
    a.output = {result, 0, 0, result.bytes};
    schedule.add_flow<HalvingFlow>(a, comm.pool());
}

const char *allreduce_name(adapt2_allreduce_algorithm_t algorithm) {
    switch (algorithm) {
    case ADAPT2_ALLREDUCE_RING: return "ring";
    case ADAPT2_ALLREDUCE_RABENSEIFNER: return "Rabenseifner (recursive halving, then doubling)";
    default: return "recursive doubling";
    }
}

}  // namespace

int start_allreduce(Comm &comm, const adapt2_call_t &call, const CallPlan &planned, int tag) {
    const adapt2_buffer_t &own = call.send, &result = call.recv;
    const bool in_place = call.in_place != 0;
    const adapt2_reduction_t &op = call.reduction;
    const adapt2_allreduce_settings_t &settings = call.settings;
    const auto algorithm = static_cast<adapt2_allreduce_algorithm_t>(planned.algorithm);
    const char *rule = planned.algorithm_rule;
    const BcastPlan &plan = planned.tree;
    if (op.unit_bytes == 0) return ADAPT2_STATUS_BAD_PARAM;
    // Device buffers take the tree (plan_call makes every rank pick it while
    // device support is on, so that ranks with host buffers agree).
    const bool on_device = result.on_device || (!in_place && own.on_device);
    if (algorithm != ADAPT2_ALLREDUCE_TREE) {
        if (comm.logs(20)) {
            comm.log(20, plan_line(comm.id(), "allreduce", result.bytes, -1, allreduce_name(algorithm), rule));
        }
        ScheduleHandle schedule = new_schedule(comm, call.done, call.ctx, call.finished);
        schedule->set_trace(TraceColl::allreduce, comm.id(), comm.next_call(), result.bytes, -1);
        if (algorithm == ADAPT2_ALLREDUCE_RING) {
            add_ring(*schedule, comm, own, result, in_place, op, tag, settings);
        } else if (algorithm == ADAPT2_ALLREDUCE_RABENSEIFNER) {
            add_rabenseifner(*schedule, comm, own, result, in_place, op, tag);
        } else {
            add_recdoubling(*schedule, comm, own, result, in_place, op, tag);
        }
        count(Counter::allreduce_calls, 1);
        schedule.release()->start();
        return 0;
    }
    const int root = 0;
    int error = 0;
    BufferPool *pool = staging_pool(comm, on_device, &error);
    if (!pool) return ADAPT2_STATUS_DEVICE_ERROR;
    const size_t cut = two_tree_cut(plan, result.bytes, op.unit_bytes);
    if (comm.logs(20)) {
        comm.log(20, plan_line(comm.id(), "allreduce", result.bytes, -1,
                               "fused tree: reduce to rank 0 and broadcast, " + describe(plan) +
                                   (cut ? halves_text(cut, result.bytes, "each up and down its tree") : ""),
                               (std::string(rule) + "; tree: " + plan.rule).c_str()));
    }
    ScheduleHandle schedule = new_schedule(comm, call.done, call.ctx, call.finished);
    schedule->set_trace(TraceColl::allreduce, comm.id(), comm.next_call(), result.bytes, root);
    const adapt2_buffer_t &mine = in_place ? result : own;
    if (cut) {
        // each half reduced up its own tree and broadcast down it
        const size_t rest = result.bytes - cut;
        const int pair = fused_tree_tags(settings.tree.send_window);
        add_fused_tree(*schedule, comm, call, plan, half_tree(comm, plan, root, 0), part_of(mine, 0, cut),
                       part_of(result, 0, cut), tag, *pool);
        add_fused_tree(*schedule, comm, call, plan, half_tree(comm, plan, root, 1), part_of(mine, cut, rest),
                       part_of(result, cut, rest), tag - pair, *pool);
    } else {
        add_fused_tree(*schedule, comm, call, plan, planned_tree(comm.trees(), plan, root), mine, result, tag, *pool);
    }
    count(Counter::allreduce_calls, 1);
    schedule.release()->start();
    return 0;
}

}  // namespace adapt2
