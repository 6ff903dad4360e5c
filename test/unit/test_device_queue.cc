// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// The device staging state machine (DeviceQueue) over the mock backend:
// every accepted token is reported exactly once, with its status, whatever
// the completion order (immediate, late, random across streams, many seeds);
// a stream's work runs and is reported in post order; data is there only
// after the report (and stale before: the mock is honest); backend errors at
// post or at query become error reports, never lost tokens or hangs; the cap
// pushes back with kDeviceBusy; pinned and device pools obey BufferPool's cap
// and overdraft rules.
#include "cmocka_cxx.h"

#include <atomic>
#include <cstring>
#include <new>
#include <random>
#include <thread>
#include <vector>

#include "device/device_queue.h"
#include "device/mock_backend.h"

using namespace adapt2;
using Policy = MockBackend::Policy;

namespace {

constexpr int kHangPolls = 100000;  // a queue that needs more polls than this hangs

// One posted operation and what it must have produced when reported.
struct Item {
    int id = 0;
    int stream = 0;
    std::vector<char> expect;  // dst's bytes once done (empty: not checked)
    char *dst = nullptr;
};

// A queue over a gpu, and everything reported so far.
struct Harness {
    MockBackend gpu;
    DeviceQueue queue;
    std::vector<Item> items;
    std::vector<int> times_reported;
    std::vector<int> status;
    std::vector<std::vector<int>> by_stream;  // ids in report order
    std::vector<int> order;                   // ids in report order, all streams

    Harness(const MockBackend::Config &config, int streams, int capacity, int max_items)
        : gpu(config),
          queue(gpu, streams, capacity),
          times_reported(max_items),
          status(max_items, -100),
          by_stream(streams) {
        items.reserve(max_items);  // tokens point into it
        assert_int_equal(queue.init(), kDeviceOk);
    }
    Item &add(int stream) {
        items.emplace_back();
        items.back().id = static_cast<int>(items.size()) - 1;
        items.back().stream = stream;
        return items.back();
    }
    bool all_reported_once() const {
        for (size_t i = 0; i < items.size(); ++i)
            if (times_reported[i] != 1) return false;
        return true;
    }
};

// The callback checks data at report time: a successful copy's destination
// must hold its bytes now, no later.
void on_done(void *ctx, void *token, int st) {
    auto *h = static_cast<Harness *>(ctx);
    auto *item = static_cast<Item *>(token);
    ++h->times_reported[item->id];
    h->status[item->id] = st;
    h->by_stream[item->stream].push_back(item->id);
    h->order.push_back(item->id);
    if (st == kDeviceOk && !item->expect.empty() && std::memcmp(item->dst, item->expect.data(), item->expect.size()))
        fail_msg("item %d reported done before its data arrived", item->id);
}

void drain(Harness &h) {
    for (int i = 0; !h.queue.idle(); ++i) {
        if (i == kHangPolls) fail_msg("queue still has %zu operations after %d polls", h.queue.outstanding(), i);
        h.queue.poll(on_done, &h);
    }
}

// Posts until accepted, polling between tries: "retry after the next report".
template <typename Post>
void post_retrying(Harness &h, Post post) {
    for (int i = 0;; ++i) {
        int rc = post();
        if (rc == kDeviceOk) return;
        if (rc != kDeviceBusy) fail_msg("post failed: %s", h.gpu.error_string(rc));
        if (i == kHangPolls) fail_msg("queue stayed busy");
        h.queue.poll(on_done, &h);
    }
}

char *device_alloc(MockBackend &gpu, size_t bytes) {
    void *p = nullptr;
    assert_int_equal(gpu.alloc_device(bytes, &p), kDeviceOk);
    return static_cast<char *>(p);
}

// n copies host -> device of distinct patterns, over random streams.
void post_copies(Harness &h, int n, uint32_t seed, std::vector<std::vector<char>> &sources) {
    std::mt19937 rng(seed);
    sources.resize(n);
    for (int k = 0; k < n; ++k) {
        size_t bytes = 1 + rng() % 300;
        sources[k].resize(bytes);
        for (size_t b = 0; b < bytes; ++b) sources[k][b] = static_cast<char>(k * 7 + b);
        Item &item = h.add(static_cast<int>(rng() % h.queue.streams()));
        item.dst = device_alloc(h.gpu, bytes);
        item.expect = sources[k];
        post_retrying(h, [&] { return h.queue.post_copy(item.dst, sources[k].data(), bytes, item.stream, &item); });
    }
}

void check_stream_order(const Harness &h) {
    for (const auto &ids : h.by_stream) {
        for (size_t i = 1; i < ids.size(); ++i)
            if (ids[i] < ids[i - 1]) fail_msg("stream reported %d before %d", ids[i - 1], ids[i]);
    }
}

void free_items(Harness &h) {
    for (Item &item : h.items) h.gpu.free_device(item.dst);
    assert_int_equal(h.gpu.device_bytes(), 0);
    assert_int_equal(h.gpu.bad_frees(), 0);
}

// ---- completion orders ------------------------------------------------------

void run_copies(const MockBackend::Config &config, int streams, int capacity, int n, bool *reordered) {
    Harness h(config, streams, capacity, n);
    std::vector<std::vector<char>> sources;
    post_copies(h, n, config.seed, sources);
    drain(h);
    if (!h.all_reported_once()) fail_msg("seed %u: a token was lost or reported twice", config.seed);
    for (int k = 0; k < n; ++k) assert_int_equal(h.status[k], kDeviceOk);
    check_stream_order(h);
    for (int k = 1; k < n; ++k) *reordered |= h.order[k] < h.order[k - 1];
    assert_int_equal(h.gpu.queued_ops(), 0);
    free_items(h);
}

void test_every_token_once_immediate(void **) {
    bool reordered = false;
    MockBackend::Config c;
    run_copies(c, 3, 16, 200, &reordered);
    run_copies(c, 1, 1, 50, &reordered);  // one slot: every post waits for a report
}

void test_every_token_once_late(void **) {
    bool reordered = false;
    for (int late : {1, 3, 10}) {
        MockBackend::Config c;
        c.policy = Policy::late;
        c.late_polls = late;
        run_copies(c, 4, 8, 200, &reordered);
    }
}

// Random completion across streams, 300 seeds: reports leave post order
// (the test would prove nothing otherwise), streams never do.
void test_every_token_once_random(void **) {
    bool reordered = false;
    for (uint32_t seed = 1; seed <= 300; ++seed) {
        MockBackend::Config c;
        c.policy = Policy::random;
        c.seed = seed;
        run_copies(c, 1 + seed % 4, 1 + seed % 32, 120, &reordered);
    }
    assert_true(reordered);
}

// ---- honest data ------------------------------------------------------------

// A copy's destination is stale until its report, and a copy reads its source
// when it runs: reusing the source before the report changes what arrives.
void test_stale_until_reported(void **) {
    MockBackend::Config c;
    c.policy = Policy::late;
    c.late_polls = 2;
    Harness h(c, 1, 4, 2);
    std::vector<char> src(64, 'a');
    Item &item = h.add(0);
    item.dst = device_alloc(h.gpu, 64);
    std::memset(item.dst, 0, 64);
    assert_int_equal(h.queue.post_copy(item.dst, src.data(), 64, 0, &item), kDeviceOk);
    assert_int_equal(h.queue.poll(on_done, &h), 0);
    assert_int_equal(item.dst[0], 0);  // not run yet
    src.assign(64, 'b');               // the caller's bug: reuse before the report
    item.expect = src;
    drain(h);
    assert_int_equal(h.times_reported[0], 1);
    assert_int_equal(item.dst[63], 'b');  // the copy ran late and saw the new source
    free_items(h);
}

// The combine of a reduce on the device: H2D of a child's segment, reduce
// into the accumulator, D2H of the result, all posted at once on one stream.
// Only stream order makes the result right; checked under random policies.
void test_stream_chain_reduce(void **) {
    constexpr int n = 1000;
    for (uint32_t seed = 1; seed <= 50; ++seed) {
        MockBackend::Config c;
        c.policy = Policy::random;
        c.seed = seed;
        Harness h(c, 2, 8, 3);
        std::vector<float> child(n), result(n, -1.f);
        for (int i = 0; i < n; ++i) child[i] = float(i);
        auto *acc = reinterpret_cast<float *>(device_alloc(h.gpu, n * sizeof(float)));
        auto *scratch = reinterpret_cast<float *>(device_alloc(h.gpu, n * sizeof(float)));
        for (int i = 0; i < n; ++i) acc[i] = 0.5f;  // this rank's own data, already on the device
        Item &up = h.add(1), &combine = h.add(1), &down = h.add(1);
        assert_int_equal(h.queue.post_copy(scratch, child.data(), n * sizeof(float), 1, &up), kDeviceOk);
        assert_int_equal(h.queue.post_reduce(DeviceOp::sum, DeviceType::float32, scratch, acc, n, 1, &combine),
                         kDeviceOk);
        assert_int_equal(h.queue.post_copy(result.data(), acc, n * sizeof(float), 1, &down), kDeviceOk);
        assert_true(result[n - 1] == -1.f);  // nothing ran at post time
        drain(h);
        assert_true(h.all_reported_once());
        for (int i = 0; i < n; ++i)
            if (result[i] != float(i) + 0.5f) fail_msg("seed %u: result[%d] = %g", seed, i, double(result[i]));
        assert_int_equal(h.by_stream[1][0], up.id);
        assert_int_equal(h.by_stream[1][2], down.id);
        h.gpu.free_device(acc);
        h.gpu.free_device(scratch);
    }
}

// ---- errors -----------------------------------------------------------------

// The k-th copy fails when posted: accepted anyway, reported once with the
// error; the others complete. Every k, under a random policy.
void test_error_on_post(void **) {
    constexpr int n = 40;
    for (int k = 1; k <= n; ++k) {
        MockBackend::Config c;
        c.policy = Policy::random;
        c.seed = static_cast<uint32_t>(k);
        c.fail_post = k;
        Harness h(c, 3, 8, n);
        std::vector<std::vector<char>> sources;
        post_copies(h, n, c.seed, sources);
        drain(h);
        assert_true(h.all_reported_once());
        check_stream_order(h);
        for (int i = 0; i < n; ++i) assert_int_equal(h.status[i], i == k - 1 ? MockBackend::kInjectedError : kDeviceOk);
        free_items(h);
    }
}

// The k-th event query fails: that token is reported with the error (its
// copy never ran); every token is still reported once; nothing hangs.
void test_error_on_query(void **) {
    constexpr int n = 40;
    for (int k = 1; k <= n; ++k) {  // every report takes a query at least: k is reached
        MockBackend::Config c;
        c.policy = k % 2 ? Policy::random : Policy::late;
        c.seed = static_cast<uint32_t>(k);
        c.fail_query = k;
        Harness h(c, 3, 8, n);
        std::vector<std::vector<char>> sources;
        post_copies(h, n, c.seed, sources);
        drain(h);
        assert_true(h.all_reported_once());
        check_stream_order(h);
        int errors = 0;
        for (int i = 0; i < n; ++i) errors += h.status[i] == MockBackend::kInjectedError;
        assert_int_equal(errors, 1);
        assert_string_equal(h.gpu.error_string(MockBackend::kInjectedError), "mock backend: injected failure");
        free_items(h);
    }
}

// No device: init fails, posts are refused (not accepted, never reported),
// and every pointer is host memory.
void test_unavailable_backend(void **) {
    MockBackend::Config c;
    c.available = false;
    MockBackend gpu(c);
    DeviceQueue queue(gpu, 2, 4);
    assert_int_equal(queue.init(), kDeviceUnavailable);
    char buf[8];
    assert_int_equal(queue.post_copy(buf, buf + 4, 4, 0, nullptr), kDeviceUnavailable);
    assert_int_equal(queue.outstanding(), 0);
    void *p = nullptr;
    assert_int_equal(gpu.alloc_device(16, &p), kDeviceUnavailable);
    assert_int_equal(int(gpu.memory_type(buf)), int(MemoryType::host));
    assert_string_equal(gpu.reason(), "mock backend: no device");
}

// ---- capacity and fallbacks -------------------------------------------------

// Full: kDeviceBusy, nothing queued, the token never reported; a slot freed
// by a report takes the retry.
void test_capacity_pushes_back(void **) {
    MockBackend::Config c;
    c.policy = Policy::late;
    c.late_polls = 1;
    Harness h(c, 2, 4, 5);
    char *dst = device_alloc(h.gpu, 5);
    char src[5] = {1, 2, 3, 4, 5};
    for (int k = 0; k < 4; ++k) {
        Item &item = h.add(k % 2);
        assert_int_equal(h.queue.post_copy(dst + k, src + k, 1, item.stream, &item), kDeviceOk);
    }
    Item &fifth = h.add(0);
    assert_int_equal(h.queue.post_copy(dst + 4, src + 4, 1, 0, &fifth), kDeviceBusy);
    assert_int_equal(h.gpu.queued_ops(), 4);
    assert_int_equal(h.queue.outstanding(), 4);
    assert_int_equal(h.queue.poll(on_done, &h), 0);  // late: pending once
    assert_int_equal(h.queue.poll(on_done, &h), 2);  // the head of each stream
    assert_int_equal(h.queue.post_copy(dst + 4, src + 4, 1, 0, &fifth), kDeviceOk);
    drain(h);
    assert_true(h.all_reported_once());
    assert_memory_equal(dst, src, 5);
    assert_int_equal(h.queue.post_copy(dst, src, 1, 2, &fifth), kDeviceInvalid);  // no stream 2
    h.gpu.free_device(dst);
}

// A pipeline: each report posts the next segment from inside the callback
// (the lock is not held there), one slot only.
struct Chain {
    DeviceQueue *queue;
    char *dst;
    const char *src;
    int next = 0, reported = 0, segments = 0;
};
void on_chain(void *ctx, void *, int st) {
    auto *c = static_cast<Chain *>(ctx);
    assert_int_equal(st, kDeviceOk);
    ++c->reported;
    if (c->next < c->segments) {
        assert_int_equal(c->queue->post_copy(c->dst + c->next, c->src + c->next, 1, 0, c), kDeviceOk);
        ++c->next;
    }
}

void test_post_from_callback(void **) {
    MockBackend::Config c;
    c.policy = Policy::late;
    MockBackend gpu(c);
    DeviceQueue queue(gpu, 1, 1);
    assert_int_equal(queue.init(), kDeviceOk);
    std::vector<char> src(100), dst(100, 0);
    for (int i = 0; i < 100; ++i) src[i] = static_cast<char>(i + 1);
    Chain chain{&queue, dst.data(), src.data(), 1, 0, 100};
    assert_int_equal(queue.post_copy(dst.data(), src.data(), 1, 0, &chain), kDeviceOk);
    for (int i = 0; !queue.idle() && i < kHangPolls; ++i) queue.poll(on_chain, &chain);
    assert_int_equal(chain.reported, 100);
    assert_memory_equal(dst.data(), src.data(), 100);
}

// No kernel (disabled, or an op the type does not support): refused at
// once, nothing queued, nothing reported: the caller reduces on the host.
void test_no_kernel_is_refused(void **) {
    MockBackend::Config c;
    c.kernels = false;
    MockBackend gpu(c);
    DeviceQueue queue(gpu, 1, 2);
    assert_int_equal(queue.init(), kDeviceOk);
    void *a = nullptr, *b = nullptr;
    assert_int_equal(gpu.alloc_device(64, &a), kDeviceOk);
    assert_int_equal(gpu.alloc_device(64, &b), kDeviceOk);
    assert_false(gpu.can_reduce(DeviceOp::sum, DeviceType::int32));
    assert_int_equal(queue.post_reduce(DeviceOp::sum, DeviceType::int32, a, b, 16, 0, a), kDeviceNoKernel);
    MockBackend with_kernels;
    DeviceQueue q2(with_kernels, 1, 2);
    assert_int_equal(q2.init(), kDeviceOk);
    assert_true(with_kernels.can_reduce(DeviceOp::maxloc, DeviceType::double_int));
    assert_false(with_kernels.can_reduce(DeviceOp::minloc, DeviceType::float32));
    assert_int_equal(q2.post_reduce(DeviceOp::minloc, DeviceType::float32, a, b, 16, 0, a), kDeviceNoKernel);
    assert_int_equal(queue.outstanding() + q2.outstanding(), 0);
    assert_int_equal(queue.poll(nullptr, nullptr), 0);  // nothing to report: the callback is never called
    gpu.free_device(a);
    gpu.free_device(b);
}

// ---- threads ----------------------------------------------------------------

// Posts from one thread, polls from another: every token once.
void test_post_and_poll_threads(void **) {
    constexpr int n = 5000;
    MockBackend::Config c;
    c.policy = Policy::random;
    c.seed = 7;
    Harness h(c, 3, 16, n);
    std::vector<char> src(n), dst(n, 0);
    for (int k = 0; k < n; ++k) {
        src[k] = static_cast<char>(k);
        h.add(k % 3);
    }
    std::atomic<bool> posted{false};
    std::thread poller([&] {
        while (!posted.load() || !h.queue.idle()) h.queue.poll(on_done, &h);
    });
    for (int k = 0; k < n; ++k) {
        while (h.queue.post_copy(&dst[k], &src[k], 1, k % 3, &h.items[k]) == kDeviceBusy) std::this_thread::yield();
    }
    posted = true;
    poller.join();
    assert_true(h.all_reported_once());
    check_stream_order(h);
    assert_memory_equal(dst.data(), src.data(), n);
}

// ---- memory -----------------------------------------------------------------

void test_memory_types(void **) {
    MockBackend gpu;
    void *dev = nullptr, *managed = nullptr, *pinned = nullptr;
    assert_int_equal(gpu.alloc_device(100, &dev), kDeviceOk);
    assert_int_equal(gpu.alloc_managed(100, &managed), kDeviceOk);
    assert_int_equal(gpu.alloc_pinned(100, &pinned), kDeviceOk);
    int ordinal = -2;
    assert_int_equal(int(gpu.memory_type(dev, &ordinal)), int(MemoryType::device));
    assert_int_equal(ordinal, 0);
    assert_int_equal(int(gpu.memory_type(static_cast<char *>(dev) + 99)), int(MemoryType::device));
    assert_int_equal(int(gpu.memory_type(managed)), int(MemoryType::managed));
    assert_int_equal(int(gpu.memory_type(pinned, &ordinal)), int(MemoryType::host));
    assert_int_equal(ordinal, -1);
    int on_stack = 0;
    std::vector<char> heap(10);
    assert_int_equal(int(gpu.memory_type(&on_stack)), int(MemoryType::host));
    assert_int_equal(int(gpu.memory_type(heap.data())), int(MemoryType::host));
    assert_string_equal(memory_type_name(MemoryType::managed), "managed");
    // A copy that runs past the end of a device allocation is refused.
    DeviceStream s = nullptr;
    assert_int_equal(gpu.create_stream(&s), kDeviceOk);
    assert_int_equal(gpu.copy_async(static_cast<char *>(dev) + 50, heap.data(), 51, s), kDeviceInvalid);
    gpu.destroy_stream(s);
    // A synchronous copy (a bounced buffer) is over when it returns, within bounds.
    std::memset(pinned, 7, 100);
    assert_int_equal(gpu.copy(dev, pinned, 100), kDeviceOk);
    assert_int_equal(static_cast<unsigned char *>(dev)[99], 7);
    assert_int_equal(gpu.copy(static_cast<char *>(dev) + 50, pinned, 51), kDeviceInvalid);
    gpu.free_device(dev);
    gpu.free_managed(managed);
    gpu.free_pinned(pinned);
    gpu.free_pinned(heap.data());  // not pinned: counted, not freed
    assert_int_equal(gpu.bad_frees(), 1);
    assert_int_equal(gpu.pinned_bytes() + gpu.device_bytes(), 0);
}

// A pinned staging pool: as many buffers as the cap allows, `must` past it
// (an overdraft), all pinned, all freed with the pool.
void test_pinned_pool_cap(void **) {
    MockBackend gpu;
    {
        BufferPool pool(3 * 4096, pinned_allocator(gpu));
        auto a = pool.borrow(4096, 5);
        assert_int_equal(a.size(), 3);
        assert_int_equal(gpu.pinned_bytes(), 3 * 4096);
        auto b = pool.borrow(4096, 2);  // the cap is reached: one overdraft
        assert_int_equal(b.size(), 1);
        assert_int_equal(pool.overdrafts(), 1);
        pool.give_back(4096, b);  // an overdraft is not kept
        assert_int_equal(gpu.pinned_bytes(), 3 * 4096);
        pool.give_back(4096, a);
        auto c = pool.borrow(4096, 3);  // cached: no new allocation
        assert_int_equal(c.size(), 3);
        assert_int_equal(gpu.pinned_bytes(), 3 * 4096);
        pool.give_back(4096, c);
    }
    assert_int_equal(gpu.pinned_bytes(), 0);
    assert_int_equal(gpu.bad_frees(), 0);
}

// The allocator running out acts as the cap; below `must` the pool throws
// and lends nothing. A device scratch pool hands out device memory.
void test_pool_allocator_exhausted(void **) {
    MockBackend::Config c;
    c.fail_alloc = 3;
    MockBackend gpu(c);
    {
        BufferPool pinned(1 << 20, pinned_allocator(gpu));
        auto a = pinned.borrow(1024, 4);  // the third allocation fails
        assert_int_equal(a.size(), 2);
        pinned.give_back(1024, a);
        BufferPool scratch(1 << 20, device_allocator(gpu));
        auto d = scratch.borrow(1024, 2, 2);
        assert_int_equal(d.size(), 2);
        assert_int_equal(int(gpu.memory_type(d[1])), int(MemoryType::device));
        scratch.give_back(1024, d);
    }
    MockBackend::Config c2;
    c2.fail_alloc = 2;
    MockBackend gpu2(c2);
    {
        BufferPool pool(1 << 20, device_allocator(gpu2));
        bool threw = false;
        try {
            pool.borrow(1024, 3, 3);
        } catch (const std::bad_alloc &) {
            threw = true;
        }
        assert_true(threw);
        assert_int_equal(pool.bytes_lent(), 0);
        auto again = pool.borrow(1024, 1);  // the undone buffer is reused
        assert_int_equal(again.size(), 1);
        pool.give_back(1024, again);
    }
    assert_int_equal(gpu.pinned_bytes() + gpu.device_bytes() + gpu2.device_bytes(), 0);
    assert_int_equal(gpu.bad_frees() + gpu2.bad_frees(), 0);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_token_once_immediate),
        cmocka_unit_test(test_every_token_once_late),
        cmocka_unit_test(test_every_token_once_random),
        cmocka_unit_test(test_stale_until_reported),
        cmocka_unit_test(test_stream_chain_reduce),
        cmocka_unit_test(test_error_on_post),
        cmocka_unit_test(test_error_on_query),
        cmocka_unit_test(test_unavailable_backend),
        cmocka_unit_test(test_capacity_pushes_back),
        cmocka_unit_test(test_post_from_callback),
        cmocka_unit_test(test_no_kernel_is_refused),
        cmocka_unit_test(test_post_and_poll_threads),
        cmocka_unit_test(test_memory_types),
        cmocka_unit_test(test_pinned_pool_cap),
        cmocka_unit_test(test_pool_allocator_exhausted),
    };
    return cmocka_run_group_tests_name("device_queue", tests, nullptr, nullptr);
}
