// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// The process's device backend, and every communicator's device state,
// polled from one progress function.
//
// Device buffers need a backend (the CUDA driver, or a test's mock) and,
// per communicator, a DeviceQueue (its streams) and a pool of pinned staging
// buffers. They are made the first time a communicator meets a device
// buffer, so a job that never does pays nothing. device_progress() polls
// every queue and hands each finished operation back to its schedule; the
// C layer calls it from Open MPI's progress loop, tests from their own loop.
#ifndef ADAPT2_ENGINE_DEVICE_DEVICE_REGISTRY_H
#define ADAPT2_ENGINE_DEVICE_DEVICE_REGISTRY_H

#include <memory>

#include "../buffer_pool.h"
#include "device_queue.h"

namespace adapt2 {

// The backend device buffers use: the CUDA driver (CudaBackend::instance())
// unless a test installed another. nullptr puts the CUDA driver back. Call
// before any communicator uses a device buffer.
DeviceBackend &device_backend();
void set_device_backend(DeviceBackend *backend);

// Limits of each communicator's device state (MCA parameters in production).
struct DeviceLimits {
    int streams = 4;                     // copies of segments s and s+1 run on different streams
    int queue_capacity = 1024;           // device operations outstanding per communicator
    size_t pinned_max_bytes = 64 << 20;  // pinned staging buffers per communicator
};
void set_device_limits(const DeviceLimits &limits);
DeviceLimits device_limits();

// One communicator's device state, registered for polling while it lives.
class DeviceState {
public:
    // Returns 0, or why the device cannot be used (the queue's init error).
    static int create(std::unique_ptr<DeviceState> *out);
    ~DeviceState();  // polls until the queue is idle, then unregisters

    DeviceQueue &queue() { return queue_; }
    BufferPool &pinned_pool() { return pinned_; }
    // Device scratch memory of reductions combined on the GPU (same cap).
    BufferPool &device_pool() { return scratch_; }

private:
    DeviceState(DeviceBackend &backend, const DeviceLimits &limits);
    DeviceQueue queue_;
    BufferPool pinned_;
    BufferPool scratch_;
};

// The last error a device operation met (0: none), for verbose output.
void note_device_error(int rc);
int last_device_error();

// Polls every registered queue once; each finished operation completes its
// Op (its token) on the schedule that posted it. Returns how many finished.
int device_progress();

}  // namespace adapt2

#endif
