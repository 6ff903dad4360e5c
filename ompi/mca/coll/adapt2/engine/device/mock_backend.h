// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// A device backend made of host memory, for tests (and the simulator): it
// behaves like a GPU where it matters to the staging state machine.
//
// - "Device" and "managed" allocations are malloc'd memory kept in a
//   registry, so memory_type() answers device or managed for them (and for
//   any pointer inside them), host for everything else.
// - Copies and reductions run when an event behind them is seen to pass,
//   not when posted: a caller that reads a destination too early sees stale
//   data, and one that reuses a source too early corrupts the copy, exactly
//   as on a GPU.
// - Work on one stream runs in order; an event passes once everything before
//   it on its stream has run. When an event passes is the policy's choice:
//   at its first query (immediate), after `late_polls` pending answers
//   (late), or by a seeded coin per query (random), so completions come late
//   and out of order across streams.
// - Errors on demand: the k-th copy or reduction fails when posted, the k-th
//   event query fails (the work before it is dropped, never run), the k-th
//   allocation fails.
#ifndef ADAPT2_ENGINE_DEVICE_MOCK_BACKEND_H
#define ADAPT2_ENGINE_DEVICE_MOCK_BACKEND_H

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>

#include "device.h"

namespace adapt2 {

class MockBackend final : public DeviceBackend {
public:
    enum class Policy : uint8_t { immediate, late, random };
    static constexpr int kInjectedError = 999;  // the backend code of injected failures

    struct Config {
        bool available = true;
        bool kernels = true;  // false: every reduce_async is kDeviceNoKernel
        Policy policy = Policy::immediate;
        int late_polls = 3;   // late: pending answers before an event passes
        uint32_t seed = 1;    // random: each query passes with probability 1/2
        long fail_post = 0;   // the k-th copy_async/reduce_async fails (1-based; 0: none)
        long fail_query = 0;  // the k-th query_event fails
        long fail_alloc = 0;  // the k-th alloc_pinned/alloc_device fails
        // Every pointer it did not allocate as pinned is device memory (the
        // component's coll_adapt2_device_mock: MPI tests of device staging
        // on machines without a GPU).
        bool foreign_is_device = false;
    };

    MockBackend() : MockBackend(Config{}) {}
    explicit MockBackend(const Config &config);
    ~MockBackend() override;

    bool available() const override { return config_.available; }
    const char *reason() const override { return config_.available ? "" : "mock backend: no device"; }
    MemoryType memory_type(const void *p, int *device_ordinal = nullptr) override;
    int alloc_pinned(size_t bytes, void **out) override;
    void free_pinned(void *p) override;
    int alloc_device(size_t bytes, void **out) override;
    void free_device(void *p) override;
    int create_stream(DeviceStream *out) override;
    void destroy_stream(DeviceStream s) override;
    int copy_async(void *dst, const void *src, size_t bytes, DeviceStream s) override;
    int copy(void *dst, const void *src, size_t bytes) override;
    bool can_reduce(DeviceOp op, DeviceType type) override;
    int reduce_async(DeviceOp op, DeviceType type, const void *in, void *inout, size_t count, DeviceStream s) override;
    int create_event(DeviceEvent *out) override;
    void destroy_event(DeviceEvent e) override;
    int record_event(DeviceEvent e, DeviceStream s) override;
    int query_event(DeviceEvent e) override;
    const char *error_string(int rc) const override;

    // For tests.
    int alloc_managed(size_t bytes, void **out);
    void free_managed(void *p) { free_device(p); }
    void run_all();               // runs every queued operation now (a device "catching up")
    size_t pinned_bytes() const;  // live pinned allocations
    size_t device_bytes() const;  // live device and managed allocations
    long bad_frees() const;       // frees of pointers that were not allocated as that kind
    long queued_ops() const;      // copies and reductions not run yet

private:
    struct Stream;
    struct Event;
    struct Work;
    struct Allocation {
        size_t bytes;
        MemoryType type;
    };

    int fail_nth(long &counter, long nth) { return ++counter == nth ? kInjectedError : kDeviceOk; }
    int alloc_registered(size_t bytes, MemoryType type, void **out);
    const Allocation *find(const void *p, uintptr_t *start) const;
    bool fits(const void *p, size_t bytes) const;
    int enqueue(Stream *stream, const Work &work);
    bool passes_now(Event &event);
    static void run_until(Stream &stream, uint64_t seq, bool execute);

    Config config_;
    mutable std::mutex lock_;
    std::mt19937 rng_;
    long posts_ = 0, queries_ = 0, allocs_ = 0, bad_frees_ = 0;
    std::map<uintptr_t, Allocation> device_;  // device and managed, by start address
    std::map<void *, size_t> pinned_;
    std::set<Stream *> streams_;
    std::set<Event *> events_;
};

}  // namespace adapt2

#endif
