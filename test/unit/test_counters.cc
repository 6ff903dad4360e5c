// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// The process-wide counters (counters.h): while threads may race (threads.h)
// every count of every thread is in the sum, also from threads that have
// ended, while other threads keep counting; with one thread, plain adds count
// every call too.
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "cmocka_cxx.h"
#include "counters.h"
#include "threads.h"

using namespace adapt2;

namespace {

constexpr int kCounts = 200000;

// `threads` threads, all started before any counts (so more than the
// per-thread blocks are alive at once), each counting `amount` kCounts times.
void count_in_threads(int threads, Counter which, uint64_t amount) {
    std::atomic<int> ready{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&] {
            ready.fetch_add(1);
            while (ready.load() < threads) std::this_thread::yield();
            for (int i = 0; i < kCounts; ++i) count(which, amount);
        });
    }
    for (auto &t : pool) t.join();
}

void test_one_thread_counts_every_call(void **) {
    const uint64_t before = counter_value(Counter::bytes_sent);
    for (int i = 0; i < kCounts; ++i) count(Counter::bytes_sent, 3);
    assert_int_equal(counter_value(Counter::bytes_sent) - before, uint64_t{3} * kCounts);
}

// One thread (threads.h): the plain adds count every call as well.
void test_one_thread_mode_counts_every_call(void **) {
    g_threads_may_race.store(false);
    const uint64_t before = counter_value(Counter::fallbacks);
    for (int i = 0; i < kCounts; ++i) count(Counter::fallbacks, 5);
    g_threads_may_race.store(true);
    assert_int_equal(counter_value(Counter::fallbacks) - before, uint64_t{5} * kCounts);
}

// Many threads at once, counting the same counter: none lost.
void test_many_threads_lose_no_count(void **) {
    const uint64_t before = counter_value(Counter::segments_sent);
    const uint64_t other = counter_value(Counter::detach_bytes);
    count_in_threads(100, Counter::segments_sent, 7);
    assert_int_equal(counter_value(Counter::segments_sent) - before, uint64_t{7} * kCounts * 100);
    assert_int_equal(counter_value(Counter::detach_bytes), other);  // counters stay apart
    // threads that ended keep their counts, and new threads add to them
    count_in_threads(10, Counter::segments_sent, 1);
    assert_int_equal(counter_value(Counter::segments_sent) - before, uint64_t{7} * kCounts * 100 + kCounts * 10);
}

// Reading while threads count: sums only grow, and end exact.
void test_reads_while_counting(void **) {
    const uint64_t before = counter_value(Counter::direct_calls);
    std::atomic<bool> done{false};
    bool shrank = false;  // (cmocka asserts only on the main thread)
    std::thread reader([&] {
        uint64_t last = before;
        while (!done.load()) {
            const uint64_t now = counter_value(Counter::direct_calls);
            shrank |= now < last;
            last = now;
        }
    });
    count_in_threads(8, Counter::direct_calls, 1);
    done.store(true);
    reader.join();
    assert_false(shrank);
    assert_int_equal(counter_value(Counter::direct_calls) - before, uint64_t{8} * kCounts);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_thread_counts_every_call),
        cmocka_unit_test(test_one_thread_mode_counts_every_call),
        cmocka_unit_test(test_many_threads_lose_no_count),
        cmocka_unit_test(test_reads_while_counting),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
