// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// The simulator's clock: a priority queue of timed events, earliest first.
// Events at the same time come out in the order they were pushed (a sequence
// number breaks ties), so a run is deterministic.
#ifndef ADAPT2_SIM_EVENT_QUEUE_H
#define ADAPT2_SIM_EVENT_QUEUE_H

#include <cstdint>
#include <queue>
#include <vector>

namespace adapt2::sim {

struct Event;

// Whoever an event is for: the network (a transfer finished) or a driver
// (a compute phase ended, a grace period ran out).
class EventSink {
public:
    virtual ~EventSink() = default;
    virtual void on_event(const Event &event) = 0;
};

struct Event {
    double time;   // microseconds of simulated time
    uint64_t seq;  // push order, breaks ties
    EventSink *sink;
    void *cookie;  // the sink's own data
    int32_t rank;  // whose CPU handles the event
    int32_t arg;   // the sink's own data
};

class EventQueue {
public:
    void push(double time, EventSink *sink, void *cookie, int rank, int arg = 0) {
        heap_.push(Event{time, seq_++, sink, cookie, rank, arg});
    }
    bool empty() const { return heap_.empty(); }
    Event pop() {
        Event e = heap_.top();
        heap_.pop();
        return e;
    }
    uint64_t pushed() const { return seq_; }

private:
    struct Later {
        bool operator()(const Event &a, const Event &b) const {
            return a.time != b.time ? a.time > b.time : a.seq > b.seq;
        }
    };
    std::priority_queue<Event, std::vector<Event>, Later> heap_;
    uint64_t seq_ = 0;
};

}  // namespace adapt2::sim

#endif
