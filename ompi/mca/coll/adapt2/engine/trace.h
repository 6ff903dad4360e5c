// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Optional per-process trace of what each collective's segments did: when a
// transfer was posted, when it completed (arrived / sent), when a segment
// was combined, and when each call started and finished. Off unless
// coll_adapt2_trace names a file prefix; then events go to a preallocated
// array (lock-free append, bounded) and are written out at MPI_Finalize.
// contrib/adapt2-trace merges the ranks' files into a timeline.
#ifndef ADAPT2_ENGINE_TRACE_H
#define ADAPT2_ENGINE_TRACE_H

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace adapt2 {

enum class TraceKind : uint8_t {
    call_start,  // segment: message bytes (low 31 bits), peer: root
    post_recv,
    post_send,
    arrived,   // a receive completed
    sent,      // a send completed
    combined,  // a segment folded into the accumulator
    call_done,
    call_detached,  // the call completed for the caller; its sends go on (then call_done)
};

// One per collective (collectives.def), named by trace_coll_name().
enum class TraceColl : uint8_t {
#define ADAPT2_COLLECTIVE(name, NAME) name,
#include "../collectives.def"
#undef ADAPT2_COLLECTIVE
};

struct TraceEvent {
    uint64_t t_ns;  // CLOCK_MONOTONIC: comparable between ranks of one host
    uint32_t call;  // the call's number on its communicator (same on all ranks)
    uint32_t comm;  // communicator id (Open MPI's context id)
    uint32_t bytes;
    int32_t segment;
    int32_t peer;  // communicator rank
    TraceKind kind;
    TraceColl coll;
    uint16_t flow;
};

class Tracer {
public:
    // Turns tracing on for this process (idempotent); the first caller wins.
    static void enable(size_t max_events, int world_rank);
    // The process tracer, or null when tracing is off: check before recording.
    static Tracer *get() { return instance_.load(std::memory_order_acquire); }

    void record(const TraceEvent &e);
    // Writes `<prefix>.<world rank>.csv`; returns 0 or an errno.
    int write(const std::string &prefix) const;
    size_t recorded() const;
    size_t dropped() const { return dropped_.load(); }

    static uint64_t now_ns();

private:
    explicit Tracer(size_t max_events, int world_rank);
    std::unique_ptr<TraceEvent[]> events_;
    size_t capacity_;
    int world_rank_;
    std::atomic<size_t> next_{0};
    std::atomic<size_t> dropped_{0};
    static std::atomic<Tracer *> instance_;
};

const char *trace_kind_name(TraceKind kind);
const char *trace_coll_name(TraceColl coll);

}  // namespace adapt2

#endif
