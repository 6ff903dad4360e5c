// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
#include "schedule.h"

#include <cstdarg>
#include <cstdio>

#include "../adapt2_bridge.h"
#include "counters.h"
#include "detach.h"
#include "threads.h"

namespace adapt2 {

// Device layer codes overlap Open MPI's: one error status for the call, the
// code itself kept for the verbose output.
static int device_error(int rc) {
    if (rc == 0) return 0;
    note_device_error(rc);
    return ADAPT2_STATUS_DEVICE_ERROR;
}

static const char *op_name(Op::Kind kind) {
    switch (kind) {
    case Op::kSend: return "send";
    case Op::kRecv: return "receive";
    case Op::kCopy: return "GPU operation";
    default: return "timer";
    }
}

static thread_local const char *reporting_failure = "";
const char *call_failure() { return reporting_failure; }

void Schedule::fail_call(int rc, const char *why, ...) {
    if (error_ != 0) return;
    error_ = rc != 0 ? rc : ADAPT2_STATUS_INTERNAL_ERROR;
    va_list args;
    va_start(args, why);
    vsnprintf(why_, sizeof why_, why, args);
    va_end(args);
}

Schedule::~Schedule() { end_flows(); }

// Every per-call field back to its start; the arena, flows_, ops_ and
// free_ops_ keep their memory.
void Schedule::begin(DoneFn done, void *done_ctx, DoneFn finished) {
    done_ = done;
    finished_ = finished;
    done_ctx_ = done_ctx;
    reported_ = false;
    grace_ = nullptr;
    error_ = 0;
    in_flight_ = 0;
    internode_segments_ = internode_bytes_ = 0;
    device_bytes_ = device_combines_ = 0;
    inbox_.store(nullptr, race_order());
    draining_.store(false, race_order());
    tracer_ = nullptr;
    trace_base_ = TraceEvent{};
    call_bytes_ = 0;
    call_root_ = -1;
    why_[0] = '\0';
}

// The flows live in the arena: destroyed in place, never deleted.
void Schedule::end_flows() {
    for (Flow *f : flows_) f->~Flow();
    flows_.clear();
    arena_.reset();
}

void Schedule::recycle() {
    end_flows();
    comm_.schedules().put(this);
}

std::pmr::memory_resource *Flow::memory() const { return schedule_.memory(); }

ScheduleHandle new_schedule(Comm &comm, DoneFn done, void *done_ctx, DoneFn finished) {
    Schedule *s = comm.schedules().take();
    if (!s) s = new Schedule(comm);
    s->begin(done, done_ctx, finished);
    return ScheduleHandle(s);
}

void Schedule::reserve_ops() {
    int count = 0;
    for (const Flow *f : flows_) count += f->max_ops();
    // take_op() sets every field a call uses; only the owner is fixed. The
    // arrays keep the capacity of earlier calls.
    if (ops_.size() != static_cast<size_t>(count)) ops_.resize(count);
    free_ops_.clear();
    free_ops_.reserve(count);
    for (auto &op : ops_) {
        op.owner = this;
        free_ops_.push_back(&op);
    }
}

// Traces show a hello as segment kHelloTraceSegment (detach.h).
static int traced_segment(const Op &op) { return op.carries == Op::kHello ? kHelloTraceSegment : op.segment; }

// Flows size their windows so that max_ops() covers them; running out is a
// bug in that count, and fails the call instead of overrunning memory.
Op *Schedule::take_op(int flow, Op::Kind kind, int segment, int peer_index, size_t bytes) {
    if (free_ops_.empty()) {
        fail_call(ADAPT2_STATUS_INTERNAL_ERROR,
                  "internal error: flow %d needs more than the %zu operations it reserved (max_ops() "
                  "under-counts), at a %s of segment %d",
                  flow, ops_.size(), op_name(kind), segment);
        return nullptr;
    }
    Op *op = free_ops_.back();
    free_ops_.pop_back();
    op->next = nullptr;
    op->status = 0;
    op->kind = kind;
    op->flow = flow;
    op->segment = segment;
    op->peer_index = peer_index;
    op->bytes = bytes;
    op->carries = Op::kData;
    op->step = 0;
    return op;
}

Op *Schedule::take_hello(int flow, Op::Kind kind, int peer_index) {
    Op *op = take_op(flow, kind, 0, peer_index, 0);
    if (op) op->carries = Op::kHello;
    return op;
}

Op *Schedule::take_copy(int flow, int segment, int step, size_t bytes) {
    Op *op = take_op(flow, Op::kCopy, segment, 0, bytes);
    if (op) op->step = static_cast<uint8_t>(step);
    return op;
}

// Books the operation in flight before posting: it may complete (and be
// queued) before the transport call returns.
template <typename Post>
int Schedule::post(Op *op, Post transport_call) {
    ++in_flight_;
    int rc = transport_call();
    if (rc != 0) {
        --in_flight_;
        fail_call(rc, "posting a %s of %zu bytes (peer %d, segment %d) failed with error %d", op_name(op->kind),
                  op->bytes, op->peer, op->segment, rc);
        return_op(op);
    }
    return rc;
}

int Schedule::post_send(const void *buf, int peer, int tag, Op *op) {
    if (!op) return error_;  // take_op failed the call
    op->peer = peer;
    if (tracer_) trace(TraceKind::post_send, op->flow, traced_segment(*op), peer, op->bytes);
    if (op->bytes > 0 && comm_.is_remote(peer)) {  // hellos carry no data
        ++internode_segments_;
        internode_bytes_ += op->bytes;
    }
    return post(op, [&] { return transport_.send(buf, op->bytes, peer, tag, op); });
}

int Schedule::post_recv(void *buf, int peer, int tag, Op *op) {
    if (!op) return error_;
    op->peer = peer;
    if (tracer_) trace(TraceKind::post_recv, op->flow, traced_segment(*op), peer, op->bytes);
    return post(op, [&] { return transport_.recv(buf, op->bytes, peer, tag, op); });
}

// Flows post device work only in calls that found the communicator's device
// state. A segment's work goes on one stream, so it runs in order.
DeviceQueue &Schedule::device_queue() {
    int error = 0;
    return comm_.device(&error)->queue();
}

int Schedule::post_copy(void *dst, const void *src, Op *op) {
    if (!op) return error_;
    op->peer = -1;
    DeviceQueue &queue = device_queue();
    device_bytes_ += op->bytes;
    return post(op,
                [&] { return device_error(queue.post_copy(dst, src, op->bytes, op->segment % queue.streams(), op)); });
}

int Schedule::post_device_reduce(DeviceOp dop, DeviceType type, const void *in, void *inout, size_t count, Op *op) {
    if (!op) return error_;
    op->peer = -1;
    DeviceQueue &queue = device_queue();
    ++device_combines_;
    return post(op, [&] {
        return device_error(queue.post_reduce(dop, type, in, inout, count, op->segment % queue.streams(), op));
    });
}

void Schedule::set_trace(TraceColl coll, uint32_t comm_id, uint32_t call, size_t bytes, int root) {
    trace_base_.call = call;
    trace_base_.coll = coll;
    trace_base_.comm = comm_id;
    call_bytes_ = bytes;
    call_root_ = root;
    tracer_ = Tracer::get();
    if (!tracer_) return;
    trace(TraceKind::call_start, 0, static_cast<int>(bytes & 0x7fffffff), root, bytes);
}

void Schedule::trace(TraceKind kind, int flow, int segment, int peer, size_t bytes) {
    TraceEvent e = trace_base_;
    e.t_ns = Tracer::now_ns();
    e.kind = kind;
    e.flow = static_cast<uint16_t>(flow);  // traces name flows modulo 65536
    e.segment = segment;
    e.peer = peer;
    e.bytes = static_cast<uint32_t>(bytes);
    tracer_->record(e);
}

Grace::Grace(Schedule *schedule) {
    op_.owner = schedule;
    op_.kind = Op::kTimer;
}

void Grace::fire() {
    if (!fired_.exchange(true)) op_.owner->complete(&op_, 0);
}

void Grace::release() {
    if (refs_.fetch_sub(1) == 1) delete this;
}

// The grace op counts as in flight until it fires, so the schedule outlives
// it and a waiter may fire it at any time before letting go.
Grace *Schedule::add_grace() {
    grace_ = new Grace(this);
    ++in_flight_;
    return grace_;
}

void Schedule::start() {
    reserve_ops();
    draining_.store(true, race_order());
    for (Flow *f : flows_) f->start();
    drain();
}

void Schedule::complete(Op *op, int status) {
    op->status = status;
    push_completion(op);
    if (!become_drainer()) return;  // the current drainer will see it
    drain();
}

// The inbox and the drainer's flag. With one thread (threads.h) plain loads
// and stores do what the locked instructions do.
void Schedule::push_completion(Op *op) {
    if (!threads_may_race()) {
        op->next = inbox_.load(std::memory_order_relaxed);
        inbox_.store(op, std::memory_order_relaxed);
        return;
    }
    Op *head = inbox_.load();
    do {
        op->next = head;
    } while (!inbox_.compare_exchange_weak(head, op));
}

bool Schedule::become_drainer() {
    if (threads_may_race()) return !draining_.exchange(true);
    if (draining_.load(std::memory_order_relaxed)) return false;
    draining_.store(true, std::memory_order_relaxed);
    return true;
}

Op *Schedule::take_inbox() {
    if (threads_may_race()) return inbox_.exchange(nullptr);
    Op *list = inbox_.load(std::memory_order_relaxed);
    inbox_.store(nullptr, std::memory_order_relaxed);
    return list;
}

bool Schedule::finished() const {
    if (in_flight_ != 0) return false;
    if (failed()) return true;
    for (const Flow *f : flows_) {
        if (f->has_pending_work()) return false;
    }
    return true;
}

// Called with draining_ held. Handles completions until none is left, then
// lets go; re-checks the inbox because a completion may have been pushed
// between the last look and the release.
void Schedule::drain() {
    for (;;) {
        handle_inbox();
        report_if_locally_done();
        if (finished()) {
            finish();  // keeps draining_ set: nothing can complete any more
            return;
        }
        draining_.store(false, race_order());
        if (inbox_.load() == nullptr || !become_drainer()) return;
    }
}

void Schedule::handle_inbox() {
    while (Op *list = take_inbox()) {
        Op *ordered = nullptr;  // the inbox is LIFO; restore arrival order
        while (list) {
            Op *next = list->next;
            list->next = ordered;
            ordered = list;
            list = next;
        }
        while (ordered) {
            Op *op = ordered;
            ordered = ordered->next;
            --in_flight_;
            if (op->kind == Op::kTimer) {
                for (Flow *f : flows_) f->expire();
                continue;
            }
            if (op->status != 0) note_failed_op(*op);
            if (tracer_) {
                trace(op->kind == Op::kRecv ? TraceKind::arrived : TraceKind::sent, op->flow, traced_segment(*op),
                      op->peer, op->bytes);
            }
            flows_[op->flow]->on_complete(*op);
        }
    }
}

void Schedule::note_failed_op(const Op &op) {
    if (op.kind == Op::kCopy) {
        int rc = device_error(op.status);
        fail_call(rc, "a GPU copy or combine of segment %d failed: %s", op.segment,
                  mca_coll_adapt2_engine_device_last_error());
        return;
    }
    fail_call(op.status, "a %s of %zu bytes (peer %d, segment %d) completed with error %d", op_name(op.kind), op.bytes,
              op.peer, op.segment, op.status);
}

// Detaches: the caller gets its buffers back while the flows go on sending
// from their private copies. A failed call reports at once: receives posted
// ahead (from peers that failed too, or wait on this rank) may never
// complete, and a rank that waited for them would hang instead of saying why.
void Schedule::report_if_locally_done() {
    if (reported_ || in_flight_ == 0) return;  // nothing left: finish() reports
    if (failed()) return report(error_);
    for (const Flow *f : flows_) {
        if (!f->locally_done()) return;
    }
    if (tracer_) trace(TraceKind::call_detached, 0, 0, -1, 0);
    bool data_left = false;
    for (const Flow *f : flows_) data_left |= !f->only_hellos_left();
    if (data_left) count(Counter::detached_calls, 1);
    report(ADAPT2_STATUS_DETACHED);
}

void Schedule::finish() {
    for (Flow *f : flows_) f->finish();
    if (tracer_) trace(TraceKind::call_done, 0, 0, -1, 0);
    if (grace_) grace_->release();
    if (internode_segments_ > 0) comm_.count_internode(internode_segments_, internode_bytes_);
    if (device_bytes_ > 0) count(Counter::device_bytes, device_bytes_);
    if (device_combines_ > 0) count(Counter::device_combines, device_combines_);
    DoneFn done = reported_ ? nullptr : done_;
    DoneFn finished = finished_;
    void *ctx = done_ctx_;
    int status = error_;
    char failure[400] = "";
    describe_failure(failure, sizeof failure);
    recycle();  // `this` may serve another call from here on
    reporting_failure = failure;
    if (done) done(ctx, status);
    if (finished) finished(ctx, status);
    reporting_failure = "";
}

// The failure's text (empty if none), as the done function reads it.
void Schedule::describe_failure(char *text, size_t size) const {
    if (error_ == 0) return;
    snprintf(text, size, "rank %d of %d, %s #%u of %zu bytes (root %d): %s", comm_.rank(), comm_.size(),
             trace_coll_name(trace_base_.coll), trace_base_.call, call_bytes_, call_root_, why_);
}

// Reports the call to `done` before it finishes (its operations still in flight).
void Schedule::report(int status) {
    reported_ = true;
    char failure[400] = "";
    describe_failure(failure, sizeof failure);
    reporting_failure = failure;
    done_(done_ctx_, status);
    reporting_failure = "";
}

}  // namespace adapt2
