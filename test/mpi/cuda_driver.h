/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/* The few CUDA driver entry points the GPU test programs use
 * (test/mpi/device_ops_check.c, perf/device_bench.c), loaded at run time so
 * that nothing CUDA is needed to build them. */
#ifndef ADAPT2_TEST_CUDA_DRIVER_H
#define ADAPT2_TEST_CUDA_DRIVER_H

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

typedef struct {
    CUresult (*init)(unsigned);
    CUresult (*device_count)(int *);
    CUresult (*device_get)(int *, int);
    CUresult (*primary_ctx_retain)(void **, int);
    CUresult (*ctx_set_current)(void *);
    CUresult (*mem_alloc)(CUdeviceptr *, size_t);
    CUresult (*mem_alloc_managed)(CUdeviceptr *, size_t, unsigned);
    CUresult (*mem_free)(CUdeviceptr);
    CUresult (*htod)(CUdeviceptr, const void *, size_t);
    CUresult (*dtoh)(void *, CUdeviceptr, size_t);
    CUresult (*host_alloc)(void **, size_t, unsigned);
    CUresult (*free_host)(void *);
    CUresult (*ctx_synchronize)(void);
} cuda_driver_t;

#define CUDA_MEM_ATTACH_GLOBAL 0x1

/* Loads the driver into *cu and makes device `rank` % devices current, with
 * its primary context. 0 on success; else -1 and why in `why`. */
static inline int cuda_driver_load(cuda_driver_t *cu, int rank, char *why, size_t why_size)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!lib) {
        snprintf(why, why_size, "no libcuda.so.1 (%s)", dlerror());
        return -1;
    }
    const struct {
        void **slot;
        const char *name;
    } syms[] = {
        {(void **) &cu->init, "cuInit"},
        {(void **) &cu->device_count, "cuDeviceGetCount"},
        {(void **) &cu->device_get, "cuDeviceGet"},
        {(void **) &cu->primary_ctx_retain, "cuDevicePrimaryCtxRetain"},
        {(void **) &cu->ctx_set_current, "cuCtxSetCurrent"},
        {(void **) &cu->mem_alloc, "cuMemAlloc_v2"},
        {(void **) &cu->mem_alloc_managed, "cuMemAllocManaged"},
        {(void **) &cu->mem_free, "cuMemFree_v2"},
        {(void **) &cu->htod, "cuMemcpyHtoD_v2"},
        {(void **) &cu->dtoh, "cuMemcpyDtoH_v2"},
        {(void **) &cu->host_alloc, "cuMemHostAlloc"},
        {(void **) &cu->free_host, "cuMemFreeHost"},
        {(void **) &cu->ctx_synchronize, "cuCtxSynchronize"},
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; ++i) {
        if (!(*syms[i].slot = dlsym(lib, syms[i].name))) {
            snprintf(why, why_size, "libcuda.so.1 lacks %s", syms[i].name);
            return -1;
        }
    }
    int n = 0, dev = 0;
    void *ctx = NULL;
    CUresult rc = cu->init(0);
    if (rc == 0) rc = cu->device_count(&n);
    if (rc == 0 && n < 1) rc = -1;
    if (rc == 0) rc = cu->device_get(&dev, rank % n);
    if (rc == 0) rc = cu->primary_ctx_retain(&ctx, dev);
    if (rc == 0) rc = cu->ctx_set_current(ctx);
    if (rc != 0) {
        snprintf(why, why_size, "no usable CUDA device (CUDA error %d)", rc);
        return -1;
    }
    return 0;
}

#endif
