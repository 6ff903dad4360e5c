// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Process-wide statistics, read through MPI_T performance variables. Updated
// once per collective call (never per segment), with no locked add where no
// second thread can count (threads.h; counters.cc says why).
#ifndef ADAPT2_ENGINE_COUNTERS_H
#define ADAPT2_ENGINE_COUNTERS_H

#include <atomic>
#include <cstdint>

#include "threads.h"

namespace adapt2 {

// Same order as adapt2_counter_t in adapt2_bridge.h (counters.cc checks).
enum class Counter : int {
#define ADAPT2_COLLECTIVE(name, NAME) name##_calls,
#include "../collectives.def"
#undef ADAPT2_COLLECTIVE
    segments_sent,
    bytes_sent,
    fallbacks,
    pool_overdrafts,
    detached_calls,
    detach_bytes,
    detach_refused,
    detach_waits,
    internode_segments,
    internode_bytes,
    device_bytes,
    device_combines,
    direct_calls,
    count_
};

// (inline: the direct path adds to four of them in every call)
inline std::atomic<uint64_t> g_counters[static_cast<int>(Counter::count_)];

// With one thread (threads.h) a plain load and store: a locked add drains the
// store buffer, which on the direct path holds the message just written into
// the shared-memory queue (measured, perf/overhead_bench, np 2, 64 B
// broadcast root: four locked adds per call were half the root's time in the
// call). With threads that may race, a locked add, as Open MPI's own counters.
inline void count(Counter which, uint64_t amount) {
    std::atomic<uint64_t> &v = g_counters[static_cast<int>(which)];
    if (threads_may_race()) {
        v.fetch_add(amount, std::memory_order_relaxed);
    } else {
        v.store(v.load(std::memory_order_relaxed) + amount, std::memory_order_relaxed);
    }
}

inline uint64_t counter_value(Counter which) {
    return g_counters[static_cast<int>(which)].load(std::memory_order_relaxed);
}

}  // namespace adapt2

#endif
