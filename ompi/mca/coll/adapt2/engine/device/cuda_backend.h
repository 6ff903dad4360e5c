// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// The CUDA backend: the driver API, loaded at run time with dlopen, so the
// component neither links against CUDA nor needs it installed. Without
// libcuda, or without a device, available() is false, every pointer is host
// memory and adapt2 behaves as if there were no GPU.
//
// Cost is paid as late as possible, so that a process that never touches
// CUDA pays only the dlopen:
// - memory_type() asks the driver directly. Before anyone has called cuInit
//   the driver answers "not initialized": the process owns no device memory,
//   so the pointer is host memory.
// - available() calls cuInit and counts the devices (once).
// - The first call that needs a context (allocations, streams, events,
//   copies, reductions) retains the primary context (the CUDA runtime's) of
//   the device current on that thread, device 0 if none, once. Every later
//   call makes that context current around itself where the thread has
//   another one (push/pop), or sets it where the thread has none.
// - The kernels (kernel_image.h) are loaded at the first reduction, and each
//   (op, type) looked up once; a miss is kDeviceNoKernel.
//
// Thread-safe: loading and initialisation run once (std::call_once); the
// driver's own calls are thread-safe.
#ifndef ADAPT2_ENGINE_DEVICE_CUDA_BACKEND_H
#define ADAPT2_ENGINE_DEVICE_CUDA_BACKEND_H

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "device.h"

namespace adapt2 {

struct CudaDriver;  // the entry points (cuda_backend.cc)

class CudaBackend final : public DeviceBackend {
public:
    // The process's backend over libcuda.so.1. Never destroyed: the driver
    // may be gone by the time static destructors run.
    static CudaBackend &instance();

    // Over another library (tests: the toolkit's stub libcuda).
    explicit CudaBackend(const char *library);
    ~CudaBackend() override;

    bool available() const override;
    const char *reason() const override;
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

    bool loaded() const { return driver_ != nullptr; }  // the library and every entry point
    int device() const { return device_; }              // bound device; -1 before the first context call
    std::string kernel_status();                        // whether the kernels loaded, or why not (verbose)

private:
    class Current;
    void load(const char *library);
    void start() const;  // cuInit, device count
    int bind();          // the primary context, once
    template <typename Call>
    int in_context(Call call);
    bool load_module();
    void *kernel(DeviceOp op, DeviceType type);  // CUfunction, nullptr on a miss
    std::string describe(int rc) const;          // "error 100 (no CUDA-capable device...)"

    void *library_ = nullptr;
    std::unique_ptr<CudaDriver> driver_;
    mutable std::once_flag started_;
    mutable bool available_ = false;
    mutable std::string reason_;  // why not available; written by load() and start() only
    std::once_flag bound_;
    int bind_error_ = kDeviceUnavailable;
    std::string bind_reason_;  // why bind() failed; published by bind_failed_
    std::atomic<bool> bind_failed_{false};
    int device_ = -1;
    void *context_ = nullptr;  // CUcontext
    std::mutex kernels_lock_;
    bool module_tried_ = false;
    void *module_ = nullptr;  // CUmodule
    std::string kernel_status_;
    void *kernels_[static_cast<int>(DeviceOp::count_)][static_cast<int>(DeviceType::count_)] = {};
    bool looked_up_[static_cast<int>(DeviceOp::count_)][static_cast<int>(DeviceType::count_)] = {};
};

}  // namespace adapt2

#endif
