// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
#include "cuda_backend.h"

#include <dlfcn.h>

#include "kernel_image.h"

namespace adapt2 {

// ---- the driver API, declared here (cuda.h must not be needed to build) ----
// Values from CUDA 13's cuda.h; the driver keeps them stable across versions.
namespace {
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;  // 64-bit builds only
using CUcontext = void *;                // opaque handles (pointers to driver structs)
using CUstream = void *;
using CUevent = void *;
using CUmodule = void *;
using CUfunction = void *;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_NOT_READY = 600;
constexpr unsigned CU_STREAM_DEFAULT = 0x0;
constexpr unsigned CU_EVENT_DISABLE_TIMING = 0x2;
constexpr unsigned CU_MEMHOSTALLOC_PORTABLE = 0x1;  // pinned for every context
constexpr int CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2;
constexpr int CU_POINTER_ATTRIBUTE_IS_MANAGED = 8;
constexpr int CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9;
constexpr unsigned CU_MEMORYTYPE_DEVICE = 0x2;

// Reductions: 256 threads a block; the kernels loop with the grid's stride,
// so capping the grid only bounds the launch, never the count.
constexpr unsigned kThreads = 256;
constexpr unsigned long long kMaxBlocks = 65535;

CUdeviceptr device_ptr(const void *p) { return reinterpret_cast<CUdeviceptr>(p); }
}  // namespace

// X(member, exported symbol, parameters): every entry point adapt2 uses,
// under the versioned names the driver exports for the current ABI.
#define ADAPT2_CUDA_DRIVER(X)                                                                          \
    X(cuInit, "cuInit", (unsigned flags))                                                              \
    X(cuGetErrorString, "cuGetErrorString", (CUresult error, const char **text))                       \
    X(cuDeviceGetCount, "cuDeviceGetCount", (int *count))                                              \
    X(cuDeviceGet, "cuDeviceGet", (CUdevice * device, int ordinal))                                    \
    X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", (CUcontext * ctx, CUdevice device))        \
    X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", (CUdevice device))                    \
    X(cuCtxGetCurrent, "cuCtxGetCurrent", (CUcontext * ctx))                                           \
    X(cuCtxSetCurrent, "cuCtxSetCurrent", (CUcontext ctx))                                             \
    X(cuCtxGetDevice, "cuCtxGetDevice", (CUdevice * device))                                           \
    X(cuCtxPushCurrent, "cuCtxPushCurrent_v2", (CUcontext ctx))                                        \
    X(cuCtxPopCurrent, "cuCtxPopCurrent_v2", (CUcontext * ctx))                                        \
    X(cuPointerGetAttributes, "cuPointerGetAttributes",                                                \
      (unsigned count, int *attributes, void **data, CUdeviceptr ptr))                                 \
    X(cuMemHostAlloc, "cuMemHostAlloc", (void **p, size_t bytes, unsigned flags))                      \
    X(cuMemFreeHost, "cuMemFreeHost", (void *p))                                                       \
    X(cuMemAlloc, "cuMemAlloc_v2", (CUdeviceptr * p, size_t bytes))                                    \
    X(cuMemFree, "cuMemFree_v2", (CUdeviceptr p))                                                      \
    X(cuStreamCreate, "cuStreamCreate", (CUstream * stream, unsigned flags))                           \
    X(cuStreamDestroy, "cuStreamDestroy_v2", (CUstream stream))                                        \
    X(cuMemcpyAsync, "cuMemcpyAsync", (CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s))    \
    X(cuMemcpy, "cuMemcpy", (CUdeviceptr dst, CUdeviceptr src, size_t bytes))                          \
    X(cuEventCreate, "cuEventCreate", (CUevent * event, unsigned flags))                               \
    X(cuEventDestroy, "cuEventDestroy_v2", (CUevent event))                                            \
    X(cuEventRecord, "cuEventRecord", (CUevent event, CUstream stream))                                \
    X(cuEventQuery, "cuEventQuery", (CUevent event))                                                   \
    X(cuModuleLoadData, "cuModuleLoadData", (CUmodule * module, const void *image))                    \
    X(cuModuleUnload, "cuModuleUnload", (CUmodule module))                                             \
    X(cuModuleGetFunction, "cuModuleGetFunction", (CUfunction * f, CUmodule module, const char *name)) \
    X(cuLaunchKernel, "cuLaunchKernel",                                                                \
      (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,     \
       unsigned shared_bytes, CUstream stream, void **params, void **extra))

struct CudaDriver {
#define ADAPT2_CU_MEMBER(name, symbol, params) CUresult(*name) params = nullptr;
    ADAPT2_CUDA_DRIVER(ADAPT2_CU_MEMBER)
#undef ADAPT2_CU_MEMBER
};

// Makes the backend's context current for one call, and restores the
// thread's own context after it. A thread with none keeps ours: harmless,
// and the next call finds it already current.
class CudaBackend::Current {
public:
    Current(const CudaDriver &d, CUcontext ctx) : d_(d) {
        CUcontext now = nullptr;
        if (d.cuCtxGetCurrent(&now) != CUDA_SUCCESS || now == ctx) return;
        if (!now) {
            d.cuCtxSetCurrent(ctx);
        } else {
            pushed_ = d.cuCtxPushCurrent(ctx) == CUDA_SUCCESS;
        }
    }
    ~Current() {
        CUcontext popped;
        if (pushed_) d_.cuCtxPopCurrent(&popped);
    }
    Current(const Current &) = delete;
    Current &operator=(const Current &) = delete;

private:
    const CudaDriver &d_;
    bool pushed_ = false;
};

// ---- loading and initialisation -------------------------------------------

CudaBackend &CudaBackend::instance() {
    static CudaBackend *backend = new CudaBackend("libcuda.so.1");
    return *backend;
}

CudaBackend::CudaBackend(const char *library) { load(library); }

CudaBackend::~CudaBackend() {
    if (driver_ && module_) driver_->cuModuleUnload(module_);
    if (driver_ && context_) driver_->cuDevicePrimaryCtxRelease(device_);
    if (library_) dlclose(library_);
}

void CudaBackend::load(const char *library) {
    library_ = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (!library_) {
        const char *why = dlerror();
        reason_ = std::string("cannot load ") + library + ": " + (why ? why : "unknown error");
        return;
    }
    auto d = std::make_unique<CudaDriver>();
    const char *missing = nullptr;
#define ADAPT2_CU_LOAD(name, symbol, params) \
    if (!missing && !(d->name = reinterpret_cast<decltype(d->name)>(dlsym(library_, symbol)))) missing = symbol;
    ADAPT2_CUDA_DRIVER(ADAPT2_CU_LOAD)
#undef ADAPT2_CU_LOAD
    if (missing) {
        reason_ = std::string(library) + " lacks " + missing + " (driver too old?)";
        return;
    }
    driver_ = std::move(d);
}

void CudaBackend::start() const {
    std::call_once(started_, [this] {
        if (!driver_) return;  // load() said why
        int n = 0;
        CUresult rc = driver_->cuInit(0);
        if (rc == CUDA_SUCCESS) rc = driver_->cuDeviceGetCount(&n);
        if (rc != CUDA_SUCCESS) {
            reason_ = "CUDA driver: " + describe(rc);
        } else if (n == 0) {
            reason_ = "no CUDA device";
        } else {
            available_ = true;
        }
    });
}

bool CudaBackend::available() const {
    start();
    return available_;
}

const char *CudaBackend::reason() const {
    start();
    if (available_ && bind_failed_.load(std::memory_order_acquire)) return bind_reason_.c_str();
    return reason_.c_str();
}

int CudaBackend::bind() {
    std::call_once(bound_, [this] {
        if (!available()) return;  // bind_error_ stays kDeviceUnavailable
        const CudaDriver &d = *driver_;
        CUcontext now = nullptr;
        CUdevice dev = 0;
        CUresult rc = CUDA_SUCCESS;
        if (d.cuCtxGetCurrent(&now) != CUDA_SUCCESS || !now || d.cuCtxGetDevice(&dev) != CUDA_SUCCESS)
            rc = d.cuDeviceGet(&dev, 0);
        if (rc == CUDA_SUCCESS) rc = d.cuDevicePrimaryCtxRetain(&context_, dev);
        if (rc != CUDA_SUCCESS) {
            context_ = nullptr;
            bind_reason_ = "cannot retain the primary context: " + describe(rc);
            bind_failed_.store(true, std::memory_order_release);
            bind_error_ = rc;
            return;
        }
        device_ = dev;
        bind_error_ = kDeviceOk;
    });
    return bind_error_;
}

template <typename Call>
int CudaBackend::in_context(Call call) {
    int rc = bind();
    if (rc != kDeviceOk) return rc;
    Current current(*driver_, context_);
    return call(*driver_);
}

// ---- memory -----------------------------------------------------------------

// Asked of the driver without a context, and without cuInit: before anyone
// initialised CUDA it answers "not initialised", and there is no device
// memory in the process. Any error means the driver does not know p: host.
MemoryType CudaBackend::memory_type(const void *p, int *device_ordinal) {
    if (device_ordinal) *device_ordinal = -1;
    if (!driver_ || !p) return MemoryType::host;
    unsigned type = 0, managed = 0;  // managed: a bool the driver may write as one byte
    int ordinal = -1;
    int attributes[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                        CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
    void *data[] = {&type, &managed, &ordinal};
    if (driver_->cuPointerGetAttributes(3, attributes, data, device_ptr(p)) != CUDA_SUCCESS) return MemoryType::host;
    if (!managed && type != CU_MEMORYTYPE_DEVICE) return MemoryType::host;  // pageable or pinned host
    if (device_ordinal) *device_ordinal = ordinal;
    return managed ? MemoryType::managed : MemoryType::device;
}

int CudaBackend::alloc_pinned(size_t bytes, void **out) {
    *out = nullptr;
    return in_context(
        [&](const CudaDriver &d) { return d.cuMemHostAlloc(out, bytes ? bytes : 1, CU_MEMHOSTALLOC_PORTABLE); });
}

void CudaBackend::free_pinned(void *p) {
    if (p) in_context([&](const CudaDriver &d) { return d.cuMemFreeHost(p); });
}

int CudaBackend::alloc_device(size_t bytes, void **out) {
    *out = nullptr;
    CUdeviceptr p = 0;
    int rc = in_context([&](const CudaDriver &d) { return d.cuMemAlloc(&p, bytes ? bytes : 1); });
    if (rc == kDeviceOk) *out = reinterpret_cast<void *>(p);
    return rc;
}

void CudaBackend::free_device(void *p) {
    if (p) in_context([&](const CudaDriver &d) { return d.cuMemFree(device_ptr(p)); });
}

// ---- streams, copies, events ------------------------------------------------

// Blocking streams: ordered after the work the process put on the legacy
// default stream before the call, as users of cudaMemcpy expect. A pageable
// cudaMemcpy to the device returns before its DMA lands; on non-blocking
// streams our first copy read the buffer before it (seen on an H100: stale
// bytes in most in-place allreduces and small broadcasts).
int CudaBackend::create_stream(DeviceStream *out) {
    *out = nullptr;
    return in_context([&](const CudaDriver &d) { return d.cuStreamCreate(out, CU_STREAM_DEFAULT); });
}

void CudaBackend::destroy_stream(DeviceStream s) {
    if (s) in_context([&](const CudaDriver &d) { return d.cuStreamDestroy(s); });
}

int CudaBackend::copy_async(void *dst, const void *src, size_t bytes, DeviceStream s) {
    if (bytes == 0) return kDeviceOk;
    return in_context([&](const CudaDriver &d) { return d.cuMemcpyAsync(device_ptr(dst), device_ptr(src), bytes, s); });
}

int CudaBackend::copy(void *dst, const void *src, size_t bytes) {
    if (bytes == 0) return kDeviceOk;
    return in_context([&](const CudaDriver &d) { return d.cuMemcpy(device_ptr(dst), device_ptr(src), bytes); });
}

int CudaBackend::create_event(DeviceEvent *out) {
    *out = nullptr;
    return in_context([&](const CudaDriver &d) { return d.cuEventCreate(out, CU_EVENT_DISABLE_TIMING); });
}

void CudaBackend::destroy_event(DeviceEvent e) {
    if (e) in_context([&](const CudaDriver &d) { return d.cuEventDestroy(e); });
}

int CudaBackend::record_event(DeviceEvent e, DeviceStream s) {
    return in_context([&](const CudaDriver &d) { return d.cuEventRecord(e, s); });
}

int CudaBackend::query_event(DeviceEvent e) {
    int rc = in_context([&](const CudaDriver &d) { return d.cuEventQuery(e); });
    return rc == CUDA_ERROR_NOT_READY ? kDevicePending : rc;
}

// ---- reductions -------------------------------------------------------------

// Under kernels_lock_ and in the context: loads the image at the first use.
bool CudaBackend::load_module() {
    if (module_tried_) return module_ != nullptr;
    module_tried_ = true;
    size_t bytes = 0;
    const void *image = adapt2_kernel_image(&bytes);
    if (!image) {
        kernel_status_ = "no kernel image (built without CUDA kernels)";
        return false;
    }
    CUresult rc = driver_->cuModuleLoadData(&module_, image);
    if (rc != CUDA_SUCCESS) {
        module_ = nullptr;
        kernel_status_ = "cuModuleLoadData: " + describe(rc);
        return false;
    }
    kernel_status_ = "loaded";
    return true;
}

// Each (op, type) is looked up once; nullptr: reduce on the host.
void *CudaBackend::kernel(DeviceOp op, DeviceType type) {
    if (!device_op_supported(op, type)) return nullptr;
    int o = static_cast<int>(op), t = static_cast<int>(type);
    std::lock_guard<std::mutex> guard(kernels_lock_);
    if (!looked_up_[o][t]) {
        looked_up_[o][t] = true;
        char name[64];
        device_kernel_name(op, type, name, sizeof name);
        CUfunction f = nullptr;
        if (load_module() && driver_->cuModuleGetFunction(&f, module_, name) == CUDA_SUCCESS) kernels_[o][t] = f;
    }
    return kernels_[o][t];
}

bool CudaBackend::can_reduce(DeviceOp op, DeviceType type) {
    auto lookup = [&](const CudaDriver &) { return kernel(op, type) ? kDeviceOk : kDeviceNoKernel; };
    return in_context(lookup) == kDeviceOk;
}

std::string CudaBackend::kernel_status() {
    std::lock_guard<std::mutex> guard(kernels_lock_);
    return module_tried_ ? kernel_status_ : "not loaded yet";
}

int CudaBackend::reduce_async(DeviceOp op, DeviceType type, const void *in, void *inout, size_t count, DeviceStream s) {
    return in_context([&](const CudaDriver &d) {
        CUfunction f = kernel(op, type);
        if (!f) return static_cast<int>(kDeviceNoKernel);
        if (count == 0) return static_cast<int>(kDeviceOk);
        CUdeviceptr src = device_ptr(in), dst = device_ptr(inout);
        unsigned long long n = count;
        void *params[] = {&src, &dst, &n};
        unsigned long long blocks = (n + kThreads - 1) / kThreads;
        unsigned grid = static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks);
        return d.cuLaunchKernel(f, grid, 1, 1, kThreads, 1, 1, 0, s, params, nullptr);
    });
}

const char *CudaBackend::error_string(int rc) const {
    if (const char *name = device_status_name(rc)) return name;
    const char *text = nullptr;
    if (driver_ && driver_->cuGetErrorString(rc, &text) == CUDA_SUCCESS && text) return text;
    switch (rc) {  // the driver cannot name these when it is the cause
    case 34: return "CUDA_ERROR_STUB_LIBRARY: the toolkit's stub libcuda, not a driver";
    case 35: return "CUDA_ERROR_INSUFFICIENT_DRIVER: the driver is older than the runtime";
    case 100: return "CUDA_ERROR_NO_DEVICE: no CUDA-capable device";
    default: return "unknown CUDA error";
    }
}

std::string CudaBackend::describe(int rc) const {
    return "error " + std::to_string(rc) + " (" + error_string(rc) + ")";
}

}  // namespace adapt2
