// Base of every collective schedule: a state machine driven only by operation
// completions.
//
// Completions may arrive on any thread, and even inside the post call that
// started them. They are pushed onto a lock-free inbox; whichever thread finds
// the schedule idle becomes its drainer and runs the handlers one at a time.
// So handlers never run concurrently or re-entrantly, nobody ever waits for a
// lock, and the hot path takes no mutex.
//
// Tags: segment s travels with tag `tag - s % tag_span`. Some transports let a
// send posted from a completion callback overtake an earlier send that is
// still pending (pml ucx does), so two messages in flight to one peer must
// never share a tag. A span of at least the per-peer send window guarantees
// that: when s + span is posted, the send of s has completed.
#ifndef ADAPT2_ENGINE_SCHEDULE_H
#define ADAPT2_ENGINE_SCHEDULE_H

#include <atomic>
#include <vector>

#include "transport.h"

namespace adapt2 {

using DoneFn = void (*)(void *ctx, int status);

class Schedule {
public:
    Schedule(Transport &transport, int tag, int tag_span, DoneFn done, void *done_ctx)
        : transport_(transport), tag_(tag), tag_span_(tag_span < 1 ? 1 : tag_span), done_(done),
          done_ctx_(done_ctx) {}
    virtual ~Schedule() = default;
    Schedule(const Schedule &) = delete;
    Schedule &operator=(const Schedule &) = delete;

    // Runs the first step. After this call the schedule owns itself: it
    // deletes itself once finished, right before reporting to `done`.
    void start();

    // Transport entry point; thread-safe and re-entrant.
    void complete(Op *op, int status);

protected:
    // Handlers; the base class guarantees they run one at a time.
    virtual void on_start() = 0;
    virtual void on_complete(Op &op) = 0;
    // True while this schedule still has work that is not posted yet.
    virtual bool has_pending_work() const = 0;
    // Called once, serialized, right before the schedule reports and dies.
    virtual void on_finish() {}

    // Sized once by the subclass; ops are recycled, never allocated per segment.
    void reserve_ops(int count);
    Op *take_op(Op::Kind kind, int segment, int peer_index, size_t bytes);
    void return_op(Op *op) { free_ops_.push_back(op); }
    int post_send(const void *buf, int peer, Op *op);
    int post_recv(void *buf, int peer, Op *op);

    bool failed() const { return error_ != 0; }
    void set_error(int rc) {
        if (error_ == 0) error_ = rc;
    }
    int tag_of(int segment) const { return tag_ - segment % tag_span_; }

private:
    template <typename Post>
    int post(Op *op, Post transport_call);
    void drain();
    void handle_inbox();
    bool finished() const { return in_flight_ == 0 && (failed() || !has_pending_work()); }
    void finish();

    Transport &transport_;
    int tag_;
    int tag_span_;
    DoneFn done_;
    void *done_ctx_;
    int error_ = 0;
    int in_flight_ = 0;  // posted operations not yet handled
    std::vector<Op> ops_;
    std::vector<Op *> free_ops_;
    std::atomic<Op *> inbox_{nullptr};
    std::atomic<bool> draining_{false};
};

}  // namespace adapt2

#endif
