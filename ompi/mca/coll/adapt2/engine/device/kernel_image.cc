// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// adapt2_kernel_image() of a build without CUDA kernels: there is no image.
// (With --with-cuda, cuda/kernel_image_embed.cc replaces this file.)
#include "kernel_image.h"

extern "C" const void *adapt2_kernel_image(size_t *bytes) {
    if (bytes) *bytes = 0;
    return nullptr;
}
