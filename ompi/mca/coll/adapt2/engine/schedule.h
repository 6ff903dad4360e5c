// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// A collective call on one rank: one or more flows driven only by operation
// completions.
//
// Completions may arrive on any thread, and even inside the post call that
// started them. They are pushed onto a lock-free inbox; whichever thread finds
// the schedule idle becomes its drainer and runs the flows' handlers one at a
// time. So handlers never run concurrently or re-entrantly, nobody ever waits
// for a lock, and the hot path takes no mutex. Where no second thread can
// run the engine (threads.h) the inbox takes no locked instruction either.
//
// Completion: `done` fires once, when every flow says this rank's part is
// over (Flow::locally_done(): a detached flow only still sends from private
// copies) or at the end; `finished` fires once at the end.
//
// Tags: each flow owns a block of tags, and its segment s travels with tag
// `block_base - s % block_size`. Some transports let a send posted from a
// completion callback overtake an earlier send that is still pending (pml ucx
// does), so two messages in flight to one peer must never share a tag. Blocks
// of at least the per-peer send window guarantee that: when s + window is
// posted, the send of s has completed.
#ifndef ADAPT2_ENGINE_SCHEDULE_H
#define ADAPT2_ENGINE_SCHEDULE_H

#include <atomic>
#include <memory>
#include <memory_resource>
#include <new>
#include <vector>

#include "call_arena.h"
#include "comm.h"
#include "flow.h"
#include "trace.h"
#include "transport.h"

namespace adapt2 {

using DoneFn = void (*)(void *ctx, int status);

class Schedule;

// A blocking call's grace period (detach.h). The waiting thread fires it when
// the period is over; the schedule fires it itself once nothing waits for it
// any more. Either way the schedule sees it once, as a completion. Shared by
// the schedule and the waiter; the last one to let go frees it.
class Grace {
public:
    explicit Grace(Schedule *schedule);
    void fire();     // any thread, any number of times
    void release();  // drops one of the two references
    Op &op() { return op_; }

private:
    std::atomic<int> refs_{2};
    std::atomic<bool> fired_{false};
    Op op_;
};

class Schedule final {
public:
    explicit Schedule(Comm &comm) : comm_(comm), transport_(comm.transport()) {}
    ~Schedule();
    Schedule(const Schedule &) = delete;
    Schedule &operator=(const Schedule &) = delete;

    // Before anything else, for each call (a schedule serves one call at a
    // time, and is reused by the next: new_schedule()).
    void begin(DoneFn done, void *done_ctx, DoneFn finished = nullptr);

    // The call's memory: flows live in it, and their containers take it as
    // their std::pmr allocator. Valid until the call is over.
    std::pmr::memory_resource *memory() { return &arena_; }

    // Flows are added before start(); their index is their id.
    template <typename F, typename... Args>
    F &add_flow(Args &&...args) {
        void *at = arena_.allocate(sizeof(F), alignof(F));
        F *flow = new (at) F(*this, static_cast<int>(flows_.size()), std::forward<Args>(args)...);
        flows_.push_back(flow);
        return *flow;
    }

    // A schedule that is not started (its call failed to start) goes back to
    // its communicator's cache; a started one does so itself when finished.
    void recycle();

    // Runs the first steps. After this call the schedule owns itself: it
    // recycles itself once finished, right before reporting to `done`.
    void start();

    // Before start(): give the call a grace period; the caller fires the
    // returned Grace when it is over, and releases it after the call is done.
    Grace *add_grace();
    bool has_grace() const { return grace_ != nullptr; }
    // For flows: nothing waits for the grace period any more.
    void grace_not_needed() {
        if (grace_) grace_->fire();
    }

    // Transport entry point; thread-safe and re-entrant.
    void complete(Op *op, int status);

    // For flows, from inside their handlers.
    Op *take_op(int flow, Op::Kind kind, int segment, int peer_index, size_t bytes);
    // A hello to or from the peer at `peer_index` (detach.h), and a device
    // copy of a segment (`step`: which of the flow's copies, the flow's enum).
    Op *take_hello(int flow, Op::Kind kind, int peer_index);
    Op *take_copy(int flow, int segment, int step, size_t bytes);
    void return_op(Op *op) { free_ops_.push_back(op); }
    int post_send(const void *buf, int peer, int tag, Op *op);
    int post_recv(void *buf, int peer, int tag, Op *op);
    // A copy between host and device memory on the communicator's device
    // queue (a flow handling device data has made sure it exists), on the
    // stream of op->segment: a segment's copies run in order.
    int post_copy(void *dst, const void *src, Op *op);
    // inout <- in op inout on the device (op->bytes of inout), on the
    // stream of op->segment, after that segment's earlier copies.
    int post_device_reduce(DeviceOp dop, DeviceType type, const void *in, void *inout, size_t count, Op *op);
    bool failed() const { return error_ != 0; }
    // Fails the call: the first error wins, with why it happened (a printf
    // format). The schedule adds the rank and the call when it reports.
    void fail_call(int rc, const char *why, ...) __attribute__((format(printf, 3, 4)));
    // The reduction operation failed on `elements` elements of a segment.
    void fail_combine(int rc, int segment, size_t elements) {
        fail_call(rc, "the reduction operation failed on %zu elements of segment %d (error %d)", elements, segment, rc);
    }
    // A datatype conversion of stream bytes [offset, offset+bytes) failed;
    // `what` says which, e.g. "packing into a staging buffer".
    void fail_conversion(int rc, const char *what, size_t offset, size_t bytes) {
        fail_call(rc, "%s of packed bytes [%zu, %zu) of the user's datatype failed (Open MPI's convertor)", what,
                  offset, offset + bytes);
    }

    // Tracing (no-ops unless coll_adapt2_trace is on): what the call is,
    // then a flow's combine of one segment.
    void set_trace(TraceColl coll, uint32_t comm_id, uint32_t call, size_t bytes, int root);
    void trace_combined(int flow, int segment, size_t bytes) {
        if (tracer_) trace(TraceKind::combined, flow, segment, -1, bytes);
    }

private:
    template <typename Post>
    int post(Op *op, Post transport_call);
    void trace(TraceKind kind, int flow, int segment, int peer, size_t bytes);
    DeviceQueue &device_queue();
    void reserve_ops();
    void note_failed_op(const Op &op);
    void drain();
    void handle_inbox();
    void push_completion(Op *op);
    bool become_drainer();
    Op *take_inbox();
    bool finished() const;
    void report_if_locally_done();
    void report(int status);
    void describe_failure(char *text, size_t size) const;
    void finish();
    void end_flows();

    Comm &comm_;
    Transport &transport_;
    DoneFn done_ = nullptr;
    DoneFn finished_ = nullptr;
    void *done_ctx_ = nullptr;
    bool reported_ = false;  // done_ has been called
    Grace *grace_ = nullptr;
    int error_ = 0;
    int in_flight_ = 0;                // posted operations not yet handled
    uint64_t internode_segments_ = 0;  // sent to other nodes, counted once at the end
    uint64_t internode_bytes_ = 0;
    uint64_t device_bytes_ = 0;     // copied to or from GPU buffers, counted once at the end
    uint64_t device_combines_ = 0;  // segments combined on the GPU
    CallArena arena_;               // the flows and their arrays, kept across calls
    std::vector<Flow *> flows_;     // in arena_; the vectors keep their capacity across calls
    std::vector<Op> ops_;
    std::vector<Op *> free_ops_;
    std::atomic<Op *> inbox_{nullptr};
    std::atomic<bool> draining_{false};
    Tracer *tracer_ = nullptr;
    TraceEvent trace_base_{};  // call, coll, comm of this schedule's events
    size_t call_bytes_ = 0;    // what the call is, for error messages
    int call_root_ = -1;
    char why_[240] = "";  // the first error's reason (no allocation on failure)
};

// A schedule for a new call on `comm`: a kept one (schedule_cache.h) or a
// new one. The handle gives it back if the call fails to start; start()
// takes it over: schedule.release()->start().
struct ScheduleRecycler {
    void operator()(Schedule *s) const { s->recycle(); }
};
using ScheduleHandle = std::unique_ptr<Schedule, ScheduleRecycler>;
ScheduleHandle new_schedule(Comm &comm, DoneFn done, void *done_ctx, DoneFn finished = nullptr);

// While a failed call reports (its done or finished function runs, on this
// thread): what failed, on which rank and why, as one line. Empty otherwise.
const char *call_failure();

// The tag of segment s in a flow whose block starts at `base` and holds
// `size` tags (tags count down, as Open MPI's collective tags do).
inline int segment_tag(int base, int size, int segment) { return base - segment % size; }

}  // namespace adapt2

#endif
