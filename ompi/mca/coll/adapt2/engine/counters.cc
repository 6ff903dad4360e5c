// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
#include "counters.h"

#include <atomic>

#include "../adapt2_bridge.h"
#include "threads.h"

namespace adapt2 {
// (a collective's calls counter also has the collective's number: direct_route.cc)
#define ADAPT2_COLLECTIVE(name, NAME)                                                       \
    static_assert(static_cast<int>(Counter::name##_calls) == ADAPT2_COUNTER_##NAME##_CALLS, \
                  "counter numbering of " #name);                                           \
    static_assert(static_cast<int>(Counter::name##_calls) == ADAPT2_COLL_##NAME, "counter of " #name);
#include "../collectives.def"
#undef ADAPT2_COLLECTIVE
static_assert(static_cast<int>(Counter::direct_calls) == ADAPT2_COUNTER_DIRECT_CALLS, "counter numbering");
static_assert(static_cast<int>(Counter::count_) == ADAPT2_COUNTER_COUNT, "counter numbering");

namespace {
std::atomic<uint64_t> g_counters[static_cast<int>(Counter::count_)];
}

// With one thread (threads.h) a plain load and store: a locked add drains the
// store buffer, which on the direct path holds the message just written into
// the shared-memory queue (measured, perf/overhead_bench, np 2, 64 B
// broadcast root: four locked adds per call were half the root's time in the
// call). With threads that may race, a locked add, as Open MPI's own counters.
void count(Counter which, uint64_t amount) {
    std::atomic<uint64_t> &v = g_counters[static_cast<int>(which)];
    if (threads_may_race()) {
        v.fetch_add(amount, std::memory_order_relaxed);
    } else {
        v.store(v.load(std::memory_order_relaxed) + amount, std::memory_order_relaxed);
    }
}

uint64_t counter_value(Counter which) { return g_counters[static_cast<int>(which)].load(std::memory_order_relaxed); }

}  // namespace adapt2
