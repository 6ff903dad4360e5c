// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// One state machine inside a schedule: a broadcast down a tree, a reduction
// up a tree, a ring. A schedule drives one or more flows (an allreduce is a
// reduce flow feeding a broadcast flow segment by segment); flows post their
// operations through it and are called back, one at a time, when those
// operations complete.
#ifndef ADAPT2_ENGINE_FLOW_H
#define ADAPT2_ENGINE_FLOW_H

#include <memory_resource>

#include "transport.h"

namespace adapt2 {

class Schedule;

class Flow {
public:
    virtual ~Flow() = default;

    // Most operations this flow ever has in flight at once.
    virtual int max_ops() const = 0;
    virtual void start() = 0;
    virtual void on_complete(Op &op) = 0;
    // True while the flow still has work that is not posted yet.
    virtual bool has_pending_work() const = 0;
    // True once this rank's part no longer needs the caller's buffers (what
    // is left runs from private copies): the call may complete early.
    virtual bool locally_done() const { return false; }
    // Once locally_done(): whether all that is left are hello messages (no
    // data goes out after the call returns: not counted as detached).
    virtual bool only_hellos_left() const { return false; }
    // A blocking call's grace period is over: stop waiting for late peers
    // and detach from them (copy what they still need). Idempotent.
    virtual void expire() {}
    // Hello messages (detach.h): a peer has entered the call.
    virtual void on_hello(int peer_index) { (void)peer_index; }
    // Called once, when the schedule is done: give back buffers, count.
    virtual void finish() {}

protected:
    Flow(Schedule &schedule, int id) : schedule_(schedule), id_(id) {}
    // The call's memory (Schedule::memory()): a flow's containers take it,
    // so a call allocates nothing once its schedule has served one like it.
    std::pmr::memory_resource *memory() const;
    Schedule &schedule_;
    const int id_;  // index of this flow in its schedule, stored in every Op
};

}  // namespace adapt2

#endif
