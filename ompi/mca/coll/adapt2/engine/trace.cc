// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
#include "trace.h"

#include <cerrno>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace adapt2 {

std::atomic<Tracer *> Tracer::instance_{nullptr};

Tracer::Tracer(size_t max_events, int world_rank)
    : events_(new TraceEvent[max_events]), capacity_(max_events), world_rank_(world_rank) {}

void Tracer::enable(size_t max_events, int world_rank) {
    static std::mutex lock;
    std::lock_guard<std::mutex> guard(lock);
    if (instance_.load() || max_events == 0) return;
    instance_.store(new Tracer(max_events, world_rank), std::memory_order_release);  // lives until exit
}

uint64_t Tracer::now_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void Tracer::record(const TraceEvent &e) {
    size_t i = next_.fetch_add(1, std::memory_order_relaxed);
    if (i >= capacity_) {
        dropped_.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    events_[i] = e;
}

size_t Tracer::recorded() const {
    size_t n = next_.load();
    return n < capacity_ ? n : capacity_;
}

int Tracer::write(const std::string &prefix) const {
    std::string path = prefix + "." + std::to_string(world_rank_) + ".csv";
    FILE *f = std::fopen(path.c_str(), "w");
    if (!f) return errno;
    std::fprintf(f, "# adapt2 trace: world rank %d, %zu events, %zu dropped (coll_adapt2_trace_max_events)\n",
                 world_rank_, recorded(), dropped());
    std::fprintf(f, "t_ns,rank,call,coll,comm,event,flow,segment,peer,bytes\n");
    for (size_t i = 0; i < recorded(); ++i) {
        const TraceEvent &e = events_[i];
        std::fprintf(f, "%llu,%d,%u,%s,%u,%s,%u,%d,%d,%u\n", static_cast<unsigned long long>(e.t_ns), world_rank_,
                     e.call, trace_coll_name(e.coll), e.comm, trace_kind_name(e.kind), e.flow, e.segment, e.peer,
                     e.bytes);
    }
    return std::fclose(f) == 0 ? 0 : errno;
}

const char *trace_kind_name(TraceKind kind) {
    switch (kind) {
    case TraceKind::call_start: return "call_start";
    case TraceKind::post_recv: return "post_recv";
    case TraceKind::post_send: return "post_send";
    case TraceKind::arrived: return "arrived";
    case TraceKind::sent: return "sent";
    case TraceKind::combined: return "combined";
    case TraceKind::call_done: return "call_done";
    case TraceKind::call_detached: return "call_detached";
    }
    return "unknown";
}

const char *trace_coll_name(TraceColl coll) {
    static const char *const names[] = {
#define ADAPT2_COLLECTIVE(name, NAME) #name,
#include "../collectives.def"
#undef ADAPT2_COLLECTIVE
    };
    const size_t i = static_cast<size_t>(coll);
    return i < sizeof names / sizeof names[0] ? names[i] : "unknown";
}

}  // namespace adapt2
