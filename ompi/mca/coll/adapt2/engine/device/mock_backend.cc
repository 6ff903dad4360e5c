// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
#include "mock_backend.h"

#include <cstdlib>
#include <cstring>

#include "reduce_functors.h"

namespace adapt2 {
namespace {

// The mock's "kernels": the host twins of the real ones (reduce_functors.h is
// compiled into both), run element by element when the stream gets there.
void mock_reduce(DeviceOp op, DeviceType type, const void *in, void *inout, size_t count) {
#define ADAPT2_MOCK_KERNEL(o, t, T)                 \
    if (op == DeviceOp::o && type == DeviceType::t) \
        return reduce::reduce_strided<reduce::op_##o>(static_cast<const T *>(in), static_cast<T *>(inout), 0, count, 1);
    ADAPT2_DEVICE_KERNELS(ADAPT2_MOCK_KERNEL)
#undef ADAPT2_MOCK_KERNEL
}

}  // namespace

// A copy or a reduction waiting on its stream, and its place in the stream.
struct MockBackend::Work {
    enum Kind : uint8_t { kCopy, kReduce } kind;
    void *dst;  // copy: destination; reduce: inout
    const void *src;
    size_t bytes;  // copy only
    DeviceOp op;
    DeviceType type;
    size_t count;
    uint64_t seq;
};

struct MockBackend::Stream {
    std::deque<Work> queue;  // not run yet, in post order
    uint64_t next_seq = 1;   // the number the next operation gets
    uint64_t passed = 0;     // every operation numbered up to here has run (or was dropped)
};

// Recorded behind operation `seq - 1` of `stream`: passes once that has run.
struct MockBackend::Event {
    Stream *stream = nullptr;
    uint64_t seq = 0;
    int pending_answers = 0;  // since it was recorded
    int error = 0;            // an injected query failure, until recorded again
};

MockBackend::MockBackend(const Config &config) : config_(config), rng_(config.seed) {}

MockBackend::~MockBackend() {
    for (Stream *s : streams_) delete s;
    for (Event *e : events_) delete e;
    for (auto &a : device_) std::free(reinterpret_cast<void *>(a.first));
    for (auto &p : pinned_) std::free(p.first);
}

// ---- memory ---------------------------------------------------------------

const MockBackend::Allocation *MockBackend::find(const void *p, uintptr_t *start) const {
    auto addr = reinterpret_cast<uintptr_t>(p);
    auto it = device_.upper_bound(addr);
    if (it == device_.begin()) return nullptr;
    --it;
    if (addr >= it->first + it->second.bytes) return nullptr;
    if (start) *start = it->first;
    return &it->second;
}

// Device ranges must lie inside one allocation, as the driver demands.
bool MockBackend::fits(const void *p, size_t bytes) const {
    uintptr_t start;
    const Allocation *a = find(p, &start);
    return !a || reinterpret_cast<uintptr_t>(p) + bytes <= start + a->bytes;
}

MemoryType MockBackend::memory_type(const void *p, int *device_ordinal) {
    std::lock_guard<std::mutex> guard(lock_);
    const Allocation *a = config_.available ? find(p, nullptr) : nullptr;
    const bool foreign_device =
        !a && config_.available && config_.foreign_is_device && !pinned_.count(const_cast<void *>(p));
    if (device_ordinal) *device_ordinal = a || foreign_device ? 0 : -1;
    if (foreign_device) return MemoryType::device;
    return a ? a->type : MemoryType::host;
}

int MockBackend::alloc_registered(size_t bytes, MemoryType type, void **out) {
    std::lock_guard<std::mutex> guard(lock_);
    *out = nullptr;
    if (!config_.available) return kDeviceUnavailable;
    if (fail_nth(allocs_, config_.fail_alloc)) return kDeviceNoMemory;
    void *p = std::malloc(bytes ? bytes : 1);
    if (!p) return kDeviceNoMemory;
    if (type == MemoryType::host) {
        pinned_[p] = bytes;
    } else {
        device_[reinterpret_cast<uintptr_t>(p)] = {bytes ? bytes : 1, type};
    }
    *out = p;
    return kDeviceOk;
}

int MockBackend::alloc_pinned(size_t bytes, void **out) { return alloc_registered(bytes, MemoryType::host, out); }
int MockBackend::alloc_device(size_t bytes, void **out) { return alloc_registered(bytes, MemoryType::device, out); }
int MockBackend::alloc_managed(size_t bytes, void **out) { return alloc_registered(bytes, MemoryType::managed, out); }

void MockBackend::free_pinned(void *p) {
    if (!p) return;
    std::lock_guard<std::mutex> guard(lock_);
    if (pinned_.erase(p) == 0) {
        ++bad_frees_;
        return;
    }
    std::free(p);
}

void MockBackend::free_device(void *p) {
    if (!p) return;
    std::lock_guard<std::mutex> guard(lock_);
    if (device_.erase(reinterpret_cast<uintptr_t>(p)) == 0) {
        ++bad_frees_;
        return;
    }
    std::free(p);
}

size_t MockBackend::pinned_bytes() const {
    std::lock_guard<std::mutex> guard(lock_);
    size_t n = 0;
    for (auto &p : pinned_) n += p.second;
    return n;
}

size_t MockBackend::device_bytes() const {
    std::lock_guard<std::mutex> guard(lock_);
    size_t n = 0;
    for (auto &a : device_) n += a.second.bytes;
    return n;
}

long MockBackend::bad_frees() const {
    std::lock_guard<std::mutex> guard(lock_);
    return bad_frees_;
}

// ---- streams and work -----------------------------------------------------

int MockBackend::create_stream(DeviceStream *out) {
    std::lock_guard<std::mutex> guard(lock_);
    if (!config_.available) return kDeviceUnavailable;
    Stream *s = new Stream;
    streams_.insert(s);
    *out = s;
    return kDeviceOk;
}

void MockBackend::destroy_stream(DeviceStream s) {
    std::lock_guard<std::mutex> guard(lock_);
    if (streams_.erase(static_cast<Stream *>(s))) delete static_cast<Stream *>(s);
}

int MockBackend::enqueue(Stream *stream, const Work &work) {
    if (!config_.available) return kDeviceUnavailable;
    if (!streams_.count(stream)) return kDeviceInvalid;
    if (fail_nth(posts_, config_.fail_post)) return kInjectedError;
    stream->queue.push_back(work);
    stream->queue.back().seq = stream->next_seq++;
    return kDeviceOk;
}

int MockBackend::copy_async(void *dst, const void *src, size_t bytes, DeviceStream s) {
    std::lock_guard<std::mutex> guard(lock_);
    if (!fits(dst, bytes) || !fits(src, bytes)) return kDeviceInvalid;
    return enqueue(static_cast<Stream *>(s), {Work::kCopy, dst, src, bytes, DeviceOp::sum, DeviceType::int8, 0, 0});
}

// At once: the mock's streams run only when polled, and nothing the caller
// posted before this copy touches the same bytes.
int MockBackend::copy(void *dst, const void *src, size_t bytes) {
    std::lock_guard<std::mutex> guard(lock_);
    if (!config_.available) return kDeviceUnavailable;
    if (!fits(dst, bytes) || !fits(src, bytes)) return kDeviceInvalid;
    std::memmove(dst, src, bytes);
    return kDeviceOk;
}

bool MockBackend::can_reduce(DeviceOp op, DeviceType type) {
    return config_.available && config_.kernels && device_op_supported(op, type);
}

int MockBackend::reduce_async(DeviceOp op, DeviceType type, const void *in, void *inout, size_t count, DeviceStream s) {
    if (!can_reduce(op, type)) return config_.available ? kDeviceNoKernel : kDeviceUnavailable;
    std::lock_guard<std::mutex> guard(lock_);
    size_t bytes = count * device_type_size(type);
    if (!fits(in, bytes) || !fits(inout, bytes)) return kDeviceInvalid;
    return enqueue(static_cast<Stream *>(s), {Work::kReduce, inout, in, 0, op, type, count, 0});
}

// Runs (or, after an error, drops) the stream's operations numbered below seq.
void MockBackend::run_until(Stream &stream, uint64_t seq, bool execute) {
    while (!stream.queue.empty() && stream.queue.front().seq < seq) {
        const Work &w = stream.queue.front();
        if (execute && w.kind == Work::kCopy) std::memmove(w.dst, w.src, w.bytes);
        if (execute && w.kind == Work::kReduce) mock_reduce(w.op, w.type, w.src, w.dst, w.count);
        stream.passed = w.seq;
        stream.queue.pop_front();
    }
    if (stream.passed < seq - 1) stream.passed = seq - 1;
}

void MockBackend::run_all() {
    std::lock_guard<std::mutex> guard(lock_);
    for (Stream *s : streams_) run_until(*s, s->next_seq, true);
}

long MockBackend::queued_ops() const {
    std::lock_guard<std::mutex> guard(lock_);
    long n = 0;
    for (Stream *s : streams_) n += static_cast<long>(s->queue.size());
    return n;
}

// ---- events ---------------------------------------------------------------

int MockBackend::create_event(DeviceEvent *out) {
    std::lock_guard<std::mutex> guard(lock_);
    if (!config_.available) return kDeviceUnavailable;
    Event *e = new Event;
    events_.insert(e);
    *out = e;
    return kDeviceOk;
}

void MockBackend::destroy_event(DeviceEvent e) {
    std::lock_guard<std::mutex> guard(lock_);
    if (events_.erase(static_cast<Event *>(e))) delete static_cast<Event *>(e);
}

int MockBackend::record_event(DeviceEvent e, DeviceStream s) {
    std::lock_guard<std::mutex> guard(lock_);
    auto *event = static_cast<Event *>(e);
    auto *stream = static_cast<Stream *>(s);
    if (!events_.count(event) || !streams_.count(stream)) return kDeviceInvalid;
    *event = Event{stream, stream->next_seq, 0, 0};
    return kDeviceOk;
}

bool MockBackend::passes_now(Event &event) {
    switch (config_.policy) {
    case Policy::immediate: return true;
    case Policy::late: return event.pending_answers >= config_.late_polls;
    case Policy::random: return (rng_() & 1) != 0;
    }
    return true;
}

int MockBackend::query_event(DeviceEvent e) {
    std::lock_guard<std::mutex> guard(lock_);
    auto *event = static_cast<Event *>(e);
    if (!events_.count(event) || !event->stream || !streams_.count(event->stream)) return kDeviceInvalid;
    if (event->error) return event->error;
    Stream &stream = *event->stream;
    if (fail_nth(queries_, config_.fail_query)) {
        run_until(stream, event->seq, false);
        return event->error = kInjectedError;
    }
    if (stream.passed + 1 >= event->seq) return kDeviceOk;  // a later event already ran this far
    if (!passes_now(*event)) {
        ++event->pending_answers;
        return kDevicePending;
    }
    run_until(stream, event->seq, true);
    return kDeviceOk;
}

const char *MockBackend::error_string(int rc) const {
    if (const char *name = device_status_name(rc)) return name;
    return rc == kInjectedError ? "mock backend: injected failure" : "mock backend: unknown error";
}

}  // namespace adapt2
