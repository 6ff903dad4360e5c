// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
#include "device_queue.h"

namespace adapt2 {

DeviceQueue::DeviceQueue(DeviceBackend &backend, int streams, int capacity)
    : backend_(backend),
      streams_(streams > 0 ? streams : 1),
      slots_(capacity > 0 ? capacity : 1),
      reports_(slots_.size()) {}

DeviceQueue::~DeviceQueue() {
    for (Slot &slot : slots_) {
        if (slot.event) backend_.destroy_event(slot.event);
    }
    for (Fifo &f : streams_) {
        if (f.stream) backend_.destroy_stream(f.stream);
    }
}

int DeviceQueue::init() {
    std::lock_guard<std::mutex> guard(lock_);
    if (init_error_ == kDeviceOk) return kDeviceOk;
    int rc = backend_.available() ? kDeviceOk : kDeviceUnavailable;
    for (size_t i = 0; rc == kDeviceOk && i < streams_.size(); ++i) {
        if (!streams_[i].stream) rc = backend_.create_stream(&streams_[i].stream);
    }
    for (size_t i = 0; rc == kDeviceOk && i < slots_.size(); ++i) {
        if (!slots_[i].event) rc = backend_.create_event(&slots_[i].event);
    }
    // What was created is kept and freed by the destructor; a failed queue
    // only refuses posts.
    init_error_ = rc;
    if (rc != kDeviceOk) return rc;
    for (Slot &slot : slots_) push_free(&slot);
    return kDeviceOk;
}

void DeviceQueue::push_free(Slot *slot) {
    slot->token = nullptr;
    slot->next = free_;
    free_ = slot;
}

// Takes a slot, queues the work with `issue(stream)` and records the slot's
// event behind it. Errors of either backend call are kept in the slot and
// reported by the next poll, in stream order, like any completion.
template <typename Issue>
int DeviceQueue::post(int stream, void *token, Issue issue) {
    if (stream < 0 || stream >= streams()) return kDeviceInvalid;
    std::lock_guard<std::mutex> guard(lock_);
    if (init_error_ != kDeviceOk) return init_error_;
    if (!free_) return kDeviceBusy;
    Slot *slot = free_;
    Fifo &fifo = streams_[stream];
    int rc = issue(fifo.stream);
    if (rc == kDeviceNoKernel) return rc;  // nothing queued; the slot stays free
    if (rc == kDeviceOk) rc = backend_.record_event(slot->event, fifo.stream);
    free_ = slot->next;
    slot->token = token;
    slot->status = rc;
    slot->next = nullptr;
    if (fifo.tail) {
        fifo.tail->next = slot;
    } else {
        fifo.head = slot;
    }
    fifo.tail = slot;
    ++outstanding_;
    return kDeviceOk;
}

int DeviceQueue::post_copy(void *dst, const void *src, size_t bytes, int stream, void *token) {
    return post(stream, token, [&](DeviceStream s) { return backend_.copy_async(dst, src, bytes, s); });
}

int DeviceQueue::post_reduce(DeviceOp op, DeviceType type, const void *in, void *inout, size_t count, int stream,
                             void *token) {
    return post(stream, token, [&](DeviceStream s) { return backend_.reduce_async(op, type, in, inout, count, s); });
}

// A stream's events pass in order, so only its oldest pending one is asked:
// one query per busy stream per poll, and reports in post order.
int DeviceQueue::collect_finished() {
    int n = 0;
    for (Fifo &fifo : streams_) {
        while (Slot *slot = fifo.head) {
            int status = slot->status;
            if (status == kDeviceOk) status = backend_.query_event(slot->event);
            if (status == kDevicePending) break;
            fifo.head = slot->next;
            if (!fifo.head) fifo.tail = nullptr;
            reports_[n++] = {slot->token, status};
            push_free(slot);
            --outstanding_;
        }
    }
    return n;
}

int DeviceQueue::poll(DeviceDoneFn done, void *ctx) {
    if (polling_.exchange(true, std::memory_order_acquire)) return 0;
    int n;
    {
        std::lock_guard<std::mutex> guard(lock_);
        n = collect_finished();
    }
    // Slots are free again before the callbacks run: a callback may post.
    for (int i = 0; i < n; ++i) done(ctx, reports_[i].token, reports_[i].status);
    polling_.store(false, std::memory_order_release);
    return n;
}

size_t DeviceQueue::outstanding() const {
    std::lock_guard<std::mutex> guard(lock_);
    return outstanding_;
}

}  // namespace adapt2
