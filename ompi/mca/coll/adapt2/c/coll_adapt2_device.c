/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * GPU buffers: MCA parameters, whether a device can be used, which buffers
 * live on it, and the progress callback that polls the device queues.
 *
 * Open MPI here is not CUDA-aware, so the engine stages device data itself
 * (engine/device/). The CUDA driver is loaded at run time at the first
 * collective: a machine without a GPU or driver loads the component and
 * sees only host memory. Pointers are classified once per call and buffer.
 */
#include <pthread.h>

#include "coll_adapt2.h"

#include "opal/runtime/opal_progress.h"

static struct {
    pthread_once_t once;
    bool active;
    bool progress_registered;
} device = {.once = PTHREAD_ONCE_INIT};

static int progress_devices(void)
{
    return mca_coll_adapt2_engine_device_progress();
}

static void start_device(void)
{
    if (!ADAPT2_INT(device)) {
        ADAPT2_VERBOSE(10, "GPU buffers: off (coll_adapt2_device=0)");
        return;
    }
    adapt2_device_settings_t s = {
        .streams = ADAPT2_INT(device_streams),
        .queue_capacity = ADAPT2_INT(device_queue_capacity),
        .pinned_max_bytes = (size_t) ADAPT2_LONG(device_pinned_max_bytes),
        .mock = ADAPT2_INT(device_mock),
    };
    char reason[256] = "";
    device.active = mca_coll_adapt2_engine_device_start(&s, reason, sizeof reason);
    if (!device.active) {
        ADAPT2_VERBOSE(10, "GPU buffers: no usable CUDA device (%s); every buffer is host memory", reason);
        return;
    }
    opal_progress_register(progress_devices);
    device.progress_registered = true;
    ADAPT2_VERBOSE(1,
                   "GPU buffers: %s; device buffers are staged through pinned host memory "
                   "(%d streams, %zu bytes of pinned buffers per communicator)",
                   s.mock ? "mock device (coll_adapt2_device_mock=1)" : "CUDA device found", s.streams,
                   s.pinned_max_bytes);
}

bool mca_coll_adapt2_device_active(void)
{
    pthread_once(&device.once, start_device);
    return device.active;
}

void mca_coll_adapt2_device_close(void)
{
    if (device.progress_registered) {
        opal_progress_unregister(progress_devices);
        device.progress_registered = false;
    }
}

/* A call planned for GPU buffers (not bounced: coll_adapt2_bounce.c) with a
 * non-contiguous datatype goes to the previous component on every rank,
 * whatever memory this rank's buffer is in: a rank with a host buffer must
 * take the same path as its peers with device buffers, which adapt2 cannot
 * pack. */
int mca_coll_adapt2_device_mark(const void *user, adapt2_buffer_t *buf, const adapt2_call_facts_t *facts,
                                size_t message_bytes, const char **why)
{
    if (0 == buf->bytes || NULL == user || MPI_IN_PLACE == user || !facts->device_support ||
        mca_coll_adapt2_engine_device_bounces(facts, message_bytes)) {
        return OMPI_SUCCESS;
    }
    if (NULL == buf->contig) {
        *why =
            "a non-contiguous datatype while GPU support is on (adapt2 stages contiguous device "
            "data only, and every rank must take the same path)";
        return OMPI_ERR_NOT_SUPPORTED;
    }
    buf->on_device = 0 != mca_coll_adapt2_engine_memory_type(buf->contig);
    return OMPI_SUCCESS;
}
