// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// C entry points of the device layer (adapt2_bridge.h, "GPU buffers").
#include <cstdio>
#include <new>
#include <string>

#include "../../adapt2_bridge.h"
#include "../comm.h"
#include "../counters.h"
#include "../plan_call.h"
#include "device_registry.h"
#include "mock_backend.h"

namespace {

// coll_adapt2_device_mock: device operations complete late and out of order,
// from the progress loop, as on a GPU; 1: every user buffer is device memory,
// 2: none is (a rank with host buffers on a GPU machine). Never destroyed
// (queues may outlive static destructors' order).
void install_mock(bool user_buffers_on_device) {
    adapt2::MockBackend::Config config;
    config.policy = adapt2::MockBackend::Policy::random;
    config.foreign_is_device = user_buffers_on_device;
    adapt2::set_device_backend(new adapt2::MockBackend(config));
}

}  // namespace

extern "C" {

int mca_coll_adapt2_engine_device_start(const adapt2_device_settings_t *s, char *reason, size_t reason_len) {
    adapt2::DeviceLimits limits;
    limits.streams = s->streams;
    limits.queue_capacity = s->queue_capacity;
    limits.pinned_max_bytes = s->pinned_max_bytes;
    adapt2::set_device_limits(limits);
    if (s->mock) install_mock(s->mock == 1);
    try {
        adapt2::DeviceBackend &backend = adapt2::device_backend();
        if (backend.available()) return 1;
        if (reason && reason_len) std::snprintf(reason, reason_len, "%s", backend.reason());
    } catch (...) {
        if (reason && reason_len) std::snprintf(reason, reason_len, "the device backend failed to start");
    }
    return 0;
}

int mca_coll_adapt2_engine_memory_type(const void *p) {
    switch (adapt2::device_backend().memory_type(p)) {
    case adapt2::MemoryType::device: return 1;
    case adapt2::MemoryType::managed: return 2;
    default: return 0;
    }
}

int mca_coll_adapt2_engine_device_bounces(const adapt2_call_facts_t *facts, uint64_t bytes) {
    return adapt2::device_bounces(*facts, bytes) ? 1 : 0;
}

// Bounced buffers come from the pinned pool in sizes rounded up to a power of
// two (at least 4 KiB), so a job's varying sizes reuse a few cached buffers.
static size_t bounce_bytes(size_t bytes) {
    size_t rounded = 4096;
    while (rounded < bytes) rounded *= 2;
    return rounded;
}

void *mca_coll_adapt2_engine_bounce_borrow(adapt2_engine_comm_t *engine_comm, size_t bytes) {
    int error = 0;
    adapt2::DeviceState *device = reinterpret_cast<adapt2::Comm *>(engine_comm)->device(&error);
    if (!device) {
        adapt2::note_device_error(error);
        return nullptr;
    }
    try {
        return device->pinned_pool().borrow_one(bounce_bytes(bytes));
    } catch (const std::bad_alloc &) {
        adapt2::note_device_error(adapt2::kDeviceNoMemory);
        return nullptr;
    }
}

void mca_coll_adapt2_engine_bounce_give_back(adapt2_engine_comm_t *engine_comm, void *host, size_t bytes) {
    int error = 0;
    adapt2::DeviceState *device = reinterpret_cast<adapt2::Comm *>(engine_comm)->device(&error);
    if (device) device->pinned_pool().give_back_one(bounce_bytes(bytes), static_cast<char *>(host));
}

int mca_coll_adapt2_engine_device_copy(adapt2_engine_comm_t *engine_comm, void *dst, const void *src, size_t bytes) {
    int error = 0;
    adapt2::DeviceState *device = reinterpret_cast<adapt2::Comm *>(engine_comm)->device(&error);
    const int rc = device ? adapt2::device_backend().copy(dst, src, bytes) : error;
    if (rc != 0) {
        adapt2::note_device_error(rc);
    } else {
        adapt2::count(adapt2::Counter::device_bytes, bytes);
    }
    return rc;
}

int mca_coll_adapt2_engine_device_progress(void) { return adapt2::device_progress(); }

const char *mca_coll_adapt2_engine_device_last_error(void) {
    const int rc = adapt2::last_device_error();
    return rc == 0 ? "" : adapt2::device_backend().error_string(rc);
}

}  // extern "C"
