// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
#include "counters.h"

#include <algorithm>
#include <atomic>

#include "../adapt2_bridge.h"

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
constexpr int kCounters = static_cast<int>(Counter::count_);

// Why not one shared atomic per counter: a locked add drains the store
// buffer, and on the direct path that buffer holds the message just written
// into the shared-memory queue, whose line the receiver is reading. Measured
// (perf/overhead_bench, np 2, 64 B broadcast root): four locked adds per
// call were half the root's time in the call (0.36-0.43 us against
// 0.24-0.28 us without them). So each thread counts into a block of its own
// (one writer: relaxed loads and stores, plain moves), and a read sums the
// blocks. Threads take blocks for good (a block outlives its thread, so
// nothing is lost and nothing needs a lock); past kThreadBlocks threads the
// rest share one block with locked adds.
constexpr int kThreadBlocks = 64;

struct alignas(64) Block {  // one cache line apart: no sharing between writers
    std::atomic<uint64_t> value[kCounters];
};

Block g_blocks[kThreadBlocks + 1];  // the last: shared by threads past kThreadBlocks
std::atomic<int> g_blocks_taken{0};

// initial-exec: a load from the thread pointer, not a call to
// __tls_get_addr (the library is dlopened; one pointer fits the static TLS
// glibc keeps for such libraries).
thread_local Block *mine __attribute__((tls_model("initial-exec"))) = nullptr;

Block *this_threads_block() {
    if (!mine) {
        const int taken = g_blocks_taken.fetch_add(1, std::memory_order_relaxed);
        mine = &g_blocks[taken < kThreadBlocks ? taken : kThreadBlocks];
    }
    return mine;
}
}  // namespace

void count(Counter which, uint64_t amount) {
    Block *block = this_threads_block();
    std::atomic<uint64_t> &v = block->value[static_cast<int>(which)];
    if (block == &g_blocks[kThreadBlocks]) {
        v.fetch_add(amount, std::memory_order_relaxed);
    } else {
        v.store(v.load(std::memory_order_relaxed) + amount, std::memory_order_relaxed);
    }
}

uint64_t counter_value(Counter which) {
    const int blocks = std::min(g_blocks_taken.load(std::memory_order_relaxed), kThreadBlocks) + 1;
    uint64_t sum = 0;
    for (int b = 0; b < blocks - 1; ++b)
        sum += g_blocks[b].value[static_cast<int>(which)].load(std::memory_order_relaxed);
    return sum + g_blocks[kThreadBlocks].value[static_cast<int>(which)].load(std::memory_order_relaxed);
}

}  // namespace adapt2
