// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// The CUDA backend. Without a driver (our build machines) it must load, say
// why it cannot be used, and see every pointer as host memory, so the
// component behaves as if there were no GPU. With the toolkit's stub driver
// (present, but no GPU) likewise. With a GPU: device memory is recognised,
// copies round-trip through the queue, and a kernel reduces where the
// component was built with kernels.
#include "cmocka_cxx.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "device/cuda_backend.h"
#include "device/device_queue.h"

using namespace adapt2;

namespace {

void assert_host(DeviceBackend &b, const void *p) {
    int ordinal = -2;
    assert_int_equal(int(b.memory_type(p, &ordinal)), int(MemoryType::host));
    assert_int_equal(ordinal, -1);
}

// What every unusable backend must do: host memory everywhere, refusals
// with a reason, never a crash.
void check_unusable(CudaBackend &cuda) {
    assert_false(cuda.available());
    assert_true(std::strlen(cuda.reason()) > 0);
    int on_stack = 0;
    std::vector<char> heap(64);
    void *raw = std::malloc(64);
    assert_host(cuda, &on_stack);
    assert_host(cuda, heap.data());
    assert_host(cuda, raw);
    assert_host(cuda, nullptr);
    std::free(raw);
    void *p = &on_stack;
    assert_int_not_equal(cuda.alloc_pinned(64, &p), kDeviceOk);
    assert_null(p);
    assert_int_not_equal(cuda.alloc_device(64, &p), kDeviceOk);
    assert_null(p);
    assert_false(cuda.can_reduce(DeviceOp::sum, DeviceType::float32));
    DeviceQueue queue(cuda, 2, 4);
    assert_int_not_equal(queue.init(), kDeviceOk);
    assert_int_not_equal(queue.post_copy(heap.data(), heap.data() + 32, 32, 0, nullptr), kDeviceOk);
    assert_true(queue.idle());
    // A pinned pool cannot lend: the caller must not stage without a device.
    BufferPool pool(1 << 20, pinned_allocator(cuda));
    bool threw = false;
    try {
        pool.borrow(4096, 1);
    } catch (const std::bad_alloc &) {
        threw = true;
    }
    assert_true(threw);
    assert_string_equal(cuda.error_string(kDeviceUnavailable), "device unavailable");
}

void test_process_backend_without_gpu(void **state) {
    CudaBackend &cuda = CudaBackend::instance();
    assert_ptr_equal(&cuda, &CudaBackend::instance());
    if (cuda.available()) skip();  // test_gpu covers it
    print_message("CUDA backend unavailable, as expected here: %s\n", cuda.reason());
    check_unusable(cuda);
}

// The toolkit's stub libcuda has every entry point but no GPU behind them.
// Not loaded next to a real driver (it shares the real one's soname).
void test_stub_driver(void **) {
    if (CudaBackend::instance().loaded()) skip();
    const char *home = std::getenv("CUDA_HOME");
    std::string stub = std::string(home ? home : "/usr/local/cuda") + "/lib64/stubs/libcuda.so";
    CudaBackend cuda(stub.c_str());
    if (!cuda.loaded()) {
        print_message("no stub driver: %s\n", cuda.reason());
        skip();
    }
    print_message("stub driver: %s\n", cuda.reason());
    assert_true(std::string(cuda.reason()).find("CUDA driver: error") == 0);
    check_unusable(cuda);
}

// A missing library names itself in the reason.
void test_missing_library(void **) {
    CudaBackend cuda("libadapt2-no-such-driver.so");
    assert_false(cuda.loaded());
    assert_true(std::string(cuda.reason()).find("libadapt2-no-such-driver.so") != std::string::npos);
    check_unusable(cuda);
}

// ---- on a GPU -----------------------------------------------------------------

struct Counter {
    int reports = 0;
    int errors = 0;
};
void on_done(void *ctx, void *, int status) {
    auto *c = static_cast<Counter *>(ctx);
    ++c->reports;
    c->errors += status != kDeviceOk;
}

void drain(DeviceQueue &queue, Counter &counter) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!queue.idle()) {
        if (std::chrono::steady_clock::now() > deadline) fail_msg("device work not done after 20 s");
        queue.poll(on_done, &counter);
    }
}

void *alloc(CudaBackend &cuda, bool device, size_t bytes) {
    void *p = nullptr;
    int rc = device ? cuda.alloc_device(bytes, &p) : cuda.alloc_pinned(bytes, &p);
    if (rc != kDeviceOk) fail_msg("allocation: %s", cuda.error_string(rc));
    return p;
}

// Pinned -> device -> device -> pinned on one stream, posted at once.
void round_trip(CudaBackend &cuda, DeviceQueue &queue, size_t n) {
    auto *in = static_cast<float *>(alloc(cuda, false, n * sizeof(float)));
    auto *out = static_cast<float *>(alloc(cuda, false, n * sizeof(float)));
    void *d1 = alloc(cuda, true, n * sizeof(float)), *d2 = alloc(cuda, true, n * sizeof(float));
    int ordinal = -1;
    assert_int_equal(int(cuda.memory_type(d1, &ordinal)), int(MemoryType::device));
    assert_int_equal(ordinal, cuda.device());
    assert_int_equal(int(cuda.memory_type(static_cast<char *>(d2) + 4)), int(MemoryType::device));
    assert_host(cuda, in);  // pinned is host memory
    for (size_t i = 0; i < n; ++i) in[i] = float(i), out[i] = -1.f;
    Counter counter;
    assert_int_equal(queue.post_copy(d1, in, n * sizeof(float), 0, &counter), kDeviceOk);
    assert_int_equal(queue.post_copy(d2, d1, n * sizeof(float), 0, &counter), kDeviceOk);
    if (cuda.can_reduce(DeviceOp::sum, DeviceType::float32)) {
        assert_int_equal(queue.post_reduce(DeviceOp::sum, DeviceType::float32, d1, d2, n, 0, &counter), kDeviceOk);
    } else {
        print_message("no kernels: %s\n", cuda.kernel_status().c_str());
    }
    assert_int_equal(queue.post_copy(out, d2, n * sizeof(float), 0, &counter), kDeviceOk);
    drain(queue, counter);
    assert_int_equal(counter.errors, 0);
    float factor = counter.reports == 4 ? 2.f : 1.f;
    for (size_t i = 0; i < n; ++i)
        if (out[i] != factor * float(i)) fail_msg("out[%zu] = %g", i, double(out[i]));
    cuda.free_device(d1);
    cuda.free_device(d2);
    cuda.free_pinned(in);
    cuda.free_pinned(out);
}

void test_gpu(void **) {
    CudaBackend &cuda = CudaBackend::instance();
    if (!cuda.available()) skip();
    DeviceQueue queue(cuda, 2, 16);
    int rc = queue.init();
    if (rc != kDeviceOk) fail_msg("queue: %s (%s)", cuda.error_string(rc), cuda.reason());
    int on_stack = 0;
    assert_host(cuda, &on_stack);
    round_trip(cuda, queue, 1);
    round_trip(cuda, queue, 1 << 20);
    round_trip(cuda, queue, (size_t(65535) * 256) + 77);  // more elements than the grid has threads
    print_message("GPU %d: kernels %s\n", cuda.device(), cuda.kernel_status().c_str());
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_process_backend_without_gpu),
        cmocka_unit_test(test_stub_driver),
        cmocka_unit_test(test_missing_library),
        cmocka_unit_test(test_gpu),
    };
    return cmocka_run_group_tests_name("cuda_backend", tests, nullptr, nullptr);
}
