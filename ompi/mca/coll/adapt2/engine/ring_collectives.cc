// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Allgather and Reduce_scatter_block: one phase of the ring (ring_flow.h)
// each; small allgathers take Bruck's algorithm (bruck_flow.h), those across
// nodes the multi-level one (node_allgather_flow.h), small or
// non-commutative reduce-scatters recursive halving (halving_flow.h). The
// ring works in one contiguous buffer of p blocks: the user's receive buffer
// where it can (a contiguous allgather), else a buffer from the
// communicator's pool that the flow fills from the user's data and delivers
// from as the result becomes final.
#include "bruck_flow.h"
#include "collectives.h"
#include "counters.h"
#include "decision.h"
#include "halving_flow.h"
#include "node_allgather_flow.h"
#include "ring_flow.h"
#include "schedule.h"

namespace adapt2 {
namespace {

bool host_contiguous(const adapt2_buffer_t &b) { return b.contig && !b.on_device; }

RingArgs ring_args(const Comm &comm, const adapt2_call_t &call, int tag, size_t block_bytes) {
    RingArgs a;
    a.rank = comm.rank();
    a.size = comm.size();
    a.tag = tag;
    a.bytes = block_bytes * static_cast<size_t>(comm.size());
    a.block_bytes = block_bytes;
    a.segment_bytes = call.settings.tree.segment_size;
    a.recv_window = call.settings.tree.recv_window;
    a.send_window = call.settings.tree.send_window;
    return a;
}

// A working buffer from the pool (the flow gives it back).
void borrow_work(Comm &comm, RingArgs *a) {
    if (a->bytes == 0) return;
    a->work = comm.pool().borrow_one(a->bytes);
    a->work_borrowed = true;
}

// A schedule of one flow (a RingFlow or a BruckFlow), started.
template <typename F, typename Args>
int start_one_flow(Comm &comm, const adapt2_call_t &call, const Args &args, size_t bytes, TraceColl trace,
                   Counter calls) {
    ScheduleHandle schedule = new_schedule(comm, call.done, call.ctx, call.finished);
    schedule->set_trace(trace, comm.id(), comm.next_call(), bytes, -1);
    schedule->add_flow<F>(args, comm.pool());
    count(calls, 1);
    schedule.release()->start();
    return 0;
}

}  // namespace

int tags_of_allgather(const Comm &comm, const adapt2_call_t &call, const CallPlan &plan) {
    if (plan.algorithm == ADAPT2_ALLGATHER_BRUCK || plan.algorithm == ADAPT2_ALLGATHER_LINEAR) {
        return BruckFlow::tags_needed(comm.size(), plan.algorithm == ADAPT2_ALLGATHER_LINEAR);
    }
    if (plan.algorithm == ADAPT2_ALLGATHER_MULTI_LEVEL) {
        return NodeAllgatherFlow::tags_needed(comm.nodes());
    }
    return RingFlow::tags_needed(call.settings.tree.send_window);
}

namespace {

int start_bruck(Comm &comm, const adapt2_call_t &call, int tag, size_t block, bool linear) {
    const size_t mine = block * static_cast<size_t>(comm.rank());
    BruckArgs a;
    a.rank = comm.rank();
    a.size = comm.size();
    a.tag = tag;
    a.block_bytes = block;
    a.own = call.in_place ? UserRange{call.recv, mine, 0, block} : UserRange{call.send, 0, 0, block};
    a.in_place = call.in_place != 0;
    a.result = call.recv;
    a.linear = linear;
    return start_one_flow<BruckFlow>(comm, call, a, call.recv.bytes, TraceColl::allgather, Counter::allgather_calls);
}

int start_node_allgather(Comm &comm, const adapt2_call_t &call, const CallPlan &plan, int tag, size_t block) {
    const size_t mine = block * static_cast<size_t>(comm.rank());
    NodeAllgatherArgs a;
    a.rank = comm.rank();
    a.tag = tag;
    a.block_bytes = block;
    a.order = &comm.trees().node_order();
    a.own = call.in_place ? UserRange{call.recv, mine, 0, block} : UserRange{call.send, 0, 0, block};
    a.result = call.recv;
    a.whole_down = plan.whole_down;
    return start_one_flow<NodeAllgatherFlow>(comm, call, a, call.recv.bytes, TraceColl::allgather,
                                             Counter::allgather_calls);
}

const char *allgather_name(const CallPlan &plan) {
    if (plan.algorithm == ADAPT2_ALLGATHER_BRUCK) return "Bruck";
    if (plan.algorithm == ADAPT2_ALLGATHER_LINEAR) return "linear (every block to every rank at once)";
    if (plan.algorithm != ADAPT2_ALLGATHER_MULTI_LEVEL) return "ring";
    return plan.whole_down ? "multi-level (node bundles between leaders, the result down in one message)"
                           : "multi-level (node bundles between leaders, each down as it lands)";
}

}  // namespace

int start_allgather(Comm &comm, const adapt2_call_t &call, const CallPlan &plan, int tag) {
    const size_t block = call.recv.bytes / static_cast<size_t>(comm.size());
    const int algorithm = plan.algorithm;
    if (comm.logs(20)) {
        comm.log(20, plan_line(comm.id(), "allgather", call.recv.bytes, -1, allgather_name(plan), plan.algorithm_rule));
    }
    if (algorithm == ADAPT2_ALLGATHER_BRUCK || algorithm == ADAPT2_ALLGATHER_LINEAR) {
        return start_bruck(comm, call, tag, block, algorithm == ADAPT2_ALLGATHER_LINEAR);
    }
    if (algorithm == ADAPT2_ALLGATHER_MULTI_LEVEL) {
        return start_node_allgather(comm, call, plan, tag, block);
    }
    const size_t mine = block * static_cast<size_t>(comm.rank());
    RingArgs a = ring_args(comm, call, tag, block);
    a.reduce_scatter = false;
    a.unit = 1;
    if (host_contiguous(call.recv)) {
        a.work = call.recv.contig;
    } else {
        borrow_work(comm, &a);
        a.deliver = true;
        a.deliver_to = {call.recv, 0, 0, a.bytes};
    }
    // This rank's block: from the send buffer, or in place from the receive
    // buffer (nothing to copy when that is the working buffer).
    a.fill = !(call.in_place && a.work == call.recv.contig);
    a.fill_from = call.in_place ? UserRange{call.recv, mine, mine, block} : UserRange{call.send, 0, mine, block};
    return start_one_flow<RingFlow>(comm, call, a, a.bytes, TraceColl::allgather, Counter::allgather_calls);
}

namespace {

int start_halving(Comm &comm, const adapt2_call_t &call, int tag, size_t block) {
    HalvingArgs a;
    a.rank = comm.rank();
    a.size = comm.size();
    a.tag = tag;
    a.bytes = block * static_cast<size_t>(comm.size());
    a.op = call.reduction;
    a.input = {own_data(call), 0, 0, block * static_cast<size_t>(comm.size())};
    a.output = {call.recv, 0, 0, block};
    return start_one_flow<HalvingFlow>(comm, call, a, a.input.bytes, TraceColl::reduce_scatter_block,
                                       Counter::reduce_scatter_block_calls);
}

}  // namespace

int tags_of_reduce_scatter_block(const Comm &, const adapt2_call_t &call, const CallPlan &plan) {
    if (plan.algorithm == ADAPT2_REDUCE_SCATTER_HALVING) return HalvingFlow::tags_needed();
    return RingFlow::tags_needed(call.settings.tree.send_window);
}

int start_reduce_scatter_block(Comm &comm, const adapt2_call_t &call, const CallPlan &plan, int tag) {
    if (call.reduction.unit_bytes == 0) return ADAPT2_STATUS_BAD_PARAM;
    const adapt2_buffer_t &input = own_data(call);
    const size_t block = input.bytes / static_cast<size_t>(comm.size());
    const int algorithm = plan.algorithm;
    if (comm.logs(20)) {
        comm.log(20, plan_line(comm.id(), "reduce_scatter_block", input.bytes, -1,
                               algorithm == ADAPT2_REDUCE_SCATTER_HALVING ? "recursive halving" : "ring",
                               plan.algorithm_rule));
    }
    if (algorithm == ADAPT2_REDUCE_SCATTER_HALVING) return start_halving(comm, call, tag, block);
    RingArgs a = ring_args(comm, call, tag, block);
    a.allgather = false;
    a.op = call.reduction;
    a.unit = call.reduction.unit_bytes;
    borrow_work(comm, &a);
    a.fill = true;
    a.fill_from = {input, 0, 0, a.bytes};
    a.deliver = true;
    a.deliver_to = {call.recv, 0, block * static_cast<size_t>(comm.rank()), block};
    return start_one_flow<RingFlow>(comm, call, a, a.bytes, TraceColl::reduce_scatter_block,
                                    Counter::reduce_scatter_block_calls);
}

}  // namespace adapt2
