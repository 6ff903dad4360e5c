// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// What the engine asks of a GPU: where a pointer lives, pinned host and
// device memory, streams, asynchronous copies and reductions, and events that
// say without blocking whether the work before them is done.
//
// Two backends: CudaBackend (the driver API, loaded at run time, so the
// component loads and works where there is no GPU and no driver) and
// MockBackend (host memory posing as device memory; unit tests). The engine
// talks to a DeviceBackend only through DeviceQueue (device_queue.h) and the
// pool allocators below.
//
// Error codes: 0 is success; the negative codes below are the layer's own;
// positive codes are the backend's (CUresult for CUDA). error_string() names
// both, for verbose output.
#ifndef ADAPT2_ENGINE_DEVICE_DEVICE_H
#define ADAPT2_ENGINE_DEVICE_DEVICE_H

#include <cstddef>
#include <cstdint>

#include "../buffer_pool.h"
#include "device_ops.h"

namespace adapt2 {

// managed: CUDA unified memory; the host may read it, but the device may be
// writing it, so it is staged like device memory unless the caller knows better.
enum class MemoryType : uint8_t { host, device, managed };

inline const char *memory_type_name(MemoryType t) {
    static const char *const names[] = {"host", "device", "managed"};
    return names[static_cast<int>(t)];
}

enum DeviceStatus : int {
    kDeviceOk = 0,
    kDevicePending = -1,      // query_event: the work before the event is still running
    kDeviceNoKernel = -2,     // reduce_async: no kernel for (op, type); reduce on the host
    kDeviceUnavailable = -3,  // no driver, no device, or the backend failed to start
    kDeviceBusy = -4,         // DeviceQueue: too many operations outstanding; retry later
    kDeviceInvalid = -5,      // a bad argument (a caller bug: stream index, null pointer)
    kDeviceNoMemory = -6,     // an allocation failed
};

// The layer's own codes; nullptr for backend codes (positive).
inline const char *device_status_name(int rc) {
    switch (rc) {
    case kDeviceOk: return "success";
    case kDevicePending: return "pending";
    case kDeviceNoKernel: return "no device kernel for this op and type";
    case kDeviceUnavailable: return "device unavailable";
    case kDeviceBusy: return "too many device operations outstanding";
    case kDeviceInvalid: return "invalid argument";
    case kDeviceNoMemory: return "out of memory";
    default: return nullptr;
    }
}

using DeviceStream = void *;  // opaque, owned by the backend
using DeviceEvent = void *;

class DeviceBackend {
public:
    virtual ~DeviceBackend() = default;

    // Whether a device can be used. When false, every pointer is host memory
    // and every other call fails with kDeviceUnavailable; reason() says why.
    virtual bool available() const = 0;
    virtual const char *reason() const = 0;

    // Where p points to. Host for anything the backend does not know
    // (malloc, stack, no driver). *device_ordinal (optional) is the device
    // that owns device or managed memory, -1 for host memory.
    virtual MemoryType memory_type(const void *p, int *device_ordinal = nullptr) = 0;

    // Page-locked host memory (fast, truly asynchronous copies) and device
    // memory. free_*(nullptr) does nothing.
    virtual int alloc_pinned(size_t bytes, void **out) = 0;
    virtual void free_pinned(void *p) = 0;
    virtual int alloc_device(size_t bytes, void **out) = 0;
    virtual void free_device(void *p) = 0;

    // Streams run their work in order; different streams run concurrently.
    virtual int create_stream(DeviceStream *out) = 0;
    virtual void destroy_stream(DeviceStream s) = 0;

    // Unified addressing: one call copies host-to-device, device-to-host or
    // device-to-device. Returns once queued; the copy runs later.
    virtual int copy_async(void *dst, const void *src, size_t bytes, DeviceStream s) = 0;
    // The same, returning once the copy is over, ordered after the process's
    // work on the legacy default stream (cudaMemcpy's semantics; one side is
    // pinned host memory, so it is synchronous both ways).
    virtual int copy(void *dst, const void *src, size_t bytes) = 0;
    // inout[i] = in[i] op inout[i], both on the device; kDeviceNoKernel when
    // there is no kernel for (op, type): the caller then reduces on the host.
    virtual bool can_reduce(DeviceOp op, DeviceType type) = 0;
    virtual int reduce_async(DeviceOp op, DeviceType type, const void *in, void *inout, size_t count,
                             DeviceStream s) = 0;

    // An event marks a point in a stream; query_event() never blocks:
    // kDeviceOk once everything before the point has run, kDevicePending
    // before, or an error.
    virtual int create_event(DeviceEvent *out) = 0;
    virtual void destroy_event(DeviceEvent e) = 0;
    virtual int record_event(DeviceEvent e, DeviceStream s) = 0;
    virtual int query_event(DeviceEvent e) = 0;

    // Any code this layer or this backend returns, as text.
    virtual const char *error_string(int rc) const = 0;
};

// Allocators for BufferPool: a pool of pinned staging buffers, and a bounded
// pool of device scratch buffers. The backend must outlive the pool.
namespace device_alloc_detail {
inline void *pinned_alloc(void *ctx, size_t bytes) {
    void *p = nullptr;
    return static_cast<DeviceBackend *>(ctx)->alloc_pinned(bytes, &p) == kDeviceOk ? p : nullptr;
}
inline void pinned_free(void *ctx, void *p) { static_cast<DeviceBackend *>(ctx)->free_pinned(p); }
inline void *device_alloc(void *ctx, size_t bytes) {
    void *p = nullptr;
    return static_cast<DeviceBackend *>(ctx)->alloc_device(bytes, &p) == kDeviceOk ? p : nullptr;
}
inline void device_free(void *ctx, void *p) { static_cast<DeviceBackend *>(ctx)->free_device(p); }
}  // namespace device_alloc_detail

inline BufferAllocator pinned_allocator(DeviceBackend &backend) {
    return {device_alloc_detail::pinned_alloc, device_alloc_detail::pinned_free, &backend};
}
inline BufferAllocator device_allocator(DeviceBackend &backend) {
    return {device_alloc_detail::device_alloc, device_alloc_detail::device_free, &backend};
}

}  // namespace adapt2

#endif
