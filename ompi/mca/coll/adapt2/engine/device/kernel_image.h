// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// The CUDA reduction kernels (cuda/reduce_kernels.cu), compiled by nvcc into
// one fatbin and embedded in the component, for the device backend to load
// (cuModuleLoadData / cudaLibraryLoadData) and look up by device_kernel_name().
// C linkage so that the C layer may ask too.
#ifndef ADAPT2_ENGINE_DEVICE_KERNEL_IMAGE_H
#define ADAPT2_ENGINE_DEVICE_KERNEL_IMAGE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// The fatbin's bytes and their count; NULL and 0 where adapt2 was built
// without kernels (configure without --with-cuda).
const void *adapt2_kernel_image(size_t *bytes);

#ifdef __cplusplus
}
#endif

#endif
