// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// adapt2_kernel_image() of a --with-cuda build: the fatbin nvcc built, placed
// in .rodata by the assembler's .incbin. No generated source and no nvcc on
// host code: the bytes go in as they are. The path is relative to the top of
// the build tree, where make runs every compile (cuda.inc makes this object
// depend on the fatbin).
#include "../engine/device/kernel_image.h"

// 16-byte aligned: the CUDA driver reads the fatbin header in place.
__asm__(
    ".pushsection .rodata.adapt2_kernels, \"a\", @progbits\n"
    ".balign 16\n"
    ".globl adapt2_kernel_fatbin_begin\n"
    ".globl adapt2_kernel_fatbin_end\n"
    ".hidden adapt2_kernel_fatbin_begin\n"
    ".hidden adapt2_kernel_fatbin_end\n"
    "adapt2_kernel_fatbin_begin:\n"
    ".incbin \"ompi/mca/coll/adapt2/cuda/adapt2_kernels.fatbin\"\n"
    "adapt2_kernel_fatbin_end:\n"
    ".popsection\n");

extern "C" {
__attribute__((visibility("hidden"))) extern const unsigned char adapt2_kernel_fatbin_begin[];
__attribute__((visibility("hidden"))) extern const unsigned char adapt2_kernel_fatbin_end[];

const void *adapt2_kernel_image(size_t *bytes) {
    if (bytes) *bytes = size_t(adapt2_kernel_fatbin_end - adapt2_kernel_fatbin_begin);
    return adapt2_kernel_fatbin_begin;
}
}
