// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// A communicator's device work: copies and reductions posted on its own
// streams, each tagged with a caller's token and reported once finished.
//
// Nothing here ever waits for the device. post_*() queue the work and return;
// poll(), called from the progress engine, asks each stream's oldest event
// whether it has passed and reports the tokens that are done. So copies of
// one segment overlap the network transfers of others, and a callback never
// blocks.
//
// Guarantees, relied on by the flows:
// - Every token that a post accepted (returned kDeviceOk) is reported exactly
//   once, with status 0 or an error. A backend error, at post or at query,
//   is such a report, never a lost token or a hang.
// - Work on one stream runs in post order, and its tokens are reported in
//   post order. Tokens of different streams are reported in any order.
// - At most `capacity` operations are outstanding; beyond, posts return
//   kDeviceBusy and queue nothing: retry after the next report.
//
// Threads: posts may come from one thread (flow handlers) while another polls
// (the progress engine). A mutex guards the lists for the length of a backend
// call; callbacks run outside it, so a callback may post. Only one thread
// polls at a time: a concurrent poll() returns 0 at once.
#ifndef ADAPT2_ENGINE_DEVICE_DEVICE_QUEUE_H
#define ADAPT2_ENGINE_DEVICE_DEVICE_QUEUE_H

#include <atomic>
#include <cstddef>
#include <mutex>
#include <vector>

#include "device.h"

namespace adapt2 {

// status: 0, or the error that the operation met (error_string() names it).
using DeviceDoneFn = void (*)(void *ctx, void *token, int status);

class DeviceQueue {
public:
    // Nothing is created until init().
    DeviceQueue(DeviceBackend &backend, int streams, int capacity);
    // Frees streams and events. The caller must poll until idle() first:
    // work still queued would write into buffers the caller is about to free.
    ~DeviceQueue();
    DeviceQueue(const DeviceQueue &) = delete;
    DeviceQueue &operator=(const DeviceQueue &) = delete;

    // Creates the streams and one event per slot. 0 or the backend's error
    // (the queue is then unusable and every post fails with it).
    int init();

    // dst <- src (bytes), after the stream's earlier work.
    int post_copy(void *dst, const void *src, size_t bytes, int stream, void *token);
    // inout <- in op inout on the device. kDeviceNoKernel (nothing queued,
    // the token will not be reported): reduce on the host instead.
    int post_reduce(DeviceOp op, DeviceType type, const void *in, void *inout, size_t count, int stream, void *token);

    // Reports finished tokens through done(ctx, token, status); returns how
    // many. Never blocks on the device.
    int poll(DeviceDoneFn done, void *ctx);

    size_t outstanding() const;
    bool idle() const { return outstanding() == 0; }
    int streams() const { return static_cast<int>(streams_.size()); }
    int capacity() const { return static_cast<int>(slots_.size()); }
    DeviceBackend &backend() { return backend_; }

private:
    struct Slot {
        void *token = nullptr;
        DeviceEvent event = nullptr;
        int status = 0;        // an error met at post: reported without a query
        Slot *next = nullptr;  // in its stream's FIFO, or in the free list
    };
    struct Fifo {
        DeviceStream stream = nullptr;
        Slot *head = nullptr;
        Slot *tail = nullptr;
    };
    struct Report {
        void *token;
        int status;
    };

    template <typename Issue>
    int post(int stream, void *token, Issue issue);
    int collect_finished();  // under lock_: moves finished slots into reports_
    void push_free(Slot *slot);

    DeviceBackend &backend_;
    int init_error_ = kDeviceUnavailable;  // until init() succeeds
    mutable std::mutex lock_;
    std::vector<Fifo> streams_;
    std::vector<Slot> slots_;
    Slot *free_ = nullptr;
    size_t outstanding_ = 0;
    std::atomic<bool> polling_{false};
    std::vector<Report> reports_;  // the poller's scratch, sized to capacity
};

}  // namespace adapt2

#endif
