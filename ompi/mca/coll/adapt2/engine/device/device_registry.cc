// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
#include "device_registry.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

#include "../schedule.h"
#include "cuda_backend.h"

namespace adapt2 {
namespace {

std::mutex registry_lock;  // guards the globals below (device_progress holds it while handlers run)
// Read lock-free: a failing handler names the error through the backend.
std::atomic<DeviceBackend *> installed_backend{nullptr};
DeviceLimits limits;
std::vector<DeviceState *> states;
std::atomic<int> last_error{0};

// A finished device operation is a completion like any other.
void complete_op(void *, void *token, int status) {
    Op *op = static_cast<Op *>(token);
    op->owner->complete(op, status);
}

}  // namespace

DeviceBackend &device_backend() {
    DeviceBackend *installed = installed_backend.load();
    return installed ? *installed : CudaBackend::instance();
}

void set_device_backend(DeviceBackend *backend) { installed_backend.store(backend); }

void set_device_limits(const DeviceLimits &l) {
    std::lock_guard<std::mutex> guard(registry_lock);
    limits = l;
}

DeviceLimits device_limits() {
    std::lock_guard<std::mutex> guard(registry_lock);
    return limits;
}

DeviceState::DeviceState(DeviceBackend &backend, const DeviceLimits &l)
    : queue_(backend, l.streams, l.queue_capacity),
      pinned_(l.pinned_max_bytes, pinned_allocator(backend)),
      scratch_(l.pinned_max_bytes, device_allocator(backend)) {}

int DeviceState::create(std::unique_ptr<DeviceState> *out) {
    std::unique_ptr<DeviceState> state(new DeviceState(device_backend(), device_limits()));
    int rc = state->queue_.init();
    if (rc != 0) return rc;
    std::lock_guard<std::mutex> guard(registry_lock);
    states.push_back(state.get());
    *out = std::move(state);
    return 0;
}

// A communicator is freed only when no collective runs on it, so its queue
// is idle already; polling is a safeguard against freeing buffers under the
// device.
DeviceState::~DeviceState() {
    while (!queue_.idle()) queue_.poll(complete_op, nullptr);
    std::lock_guard<std::mutex> guard(registry_lock);
    states.erase(std::remove(states.begin(), states.end(), this), states.end());
}

// The registry lock is held while polling, so a state cannot go away under
// the poll; completions run flow handlers, which post (queue lock only).
void note_device_error(int rc) { last_error.store(rc, std::memory_order_relaxed); }
int last_device_error() { return last_error.load(std::memory_order_relaxed); }

int device_progress() {
    std::unique_lock<std::mutex> guard(registry_lock, std::try_to_lock);
    if (!guard.owns_lock()) return 0;  // another thread is polling
    int finished = 0;
    for (DeviceState *state : states) finished += state->queue().poll(complete_op, nullptr);
    return finished;
}

}  // namespace adapt2
