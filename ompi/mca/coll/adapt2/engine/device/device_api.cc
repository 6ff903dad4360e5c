// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// C entry points of the device layer (adapt2_bridge.h, "GPU buffers").
#include <cstdio>
#include <string>

#include "../../adapt2_bridge.h"
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

int mca_coll_adapt2_engine_device_progress(void) { return adapt2::device_progress(); }

const char *mca_coll_adapt2_engine_device_last_error(void) {
    const int rc = adapt2::last_device_error();
    return rc == 0 ? "" : adapt2::device_backend().error_string(rc);
}

}  // extern "C"
