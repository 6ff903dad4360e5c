#include "counters.h"

#include <atomic>

namespace adapt2 {
namespace {
std::atomic<uint64_t> g_counters[static_cast<int>(Counter::count_)];
}

void count(Counter which, uint64_t amount) {
    g_counters[static_cast<int>(which)].fetch_add(amount, std::memory_order_relaxed);
}

uint64_t counter_value(Counter which) {
    return g_counters[static_cast<int>(which)].load(std::memory_order_relaxed);
}

}  // namespace adapt2
