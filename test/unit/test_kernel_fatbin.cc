// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// The fatbin nvcc built (cuda/cuda.inc) holds every kernel that
// device_op_supported() promises, under device_kernel_name()'s name, as
// machine code and as PTX, and no other adapt2_reduce_* kernel; a --with-cuda
// build embeds it byte for byte. Reads the file nvcc wrote (built with
// --no-compress, so names are plain bytes: no cuobjdump needed).
// Exit 77 (skipped) where no fatbin is built: no nvcc, or --without-cuda.
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "device/device_ops.h"
#include "device/kernel_image.h"

using namespace adapt2;

namespace {

int failures = 0;

void fail(const std::string &what) {
    fprintf(stderr, "FAIL: %s\n", what.c_str());
    failures++;
}

std::set<std::string> supported_names() {
    std::set<std::string> names;
    char buf[64];
    for (int o = 0; o < int(DeviceOp::count_); o++)
        for (int t = 0; t < int(DeviceType::count_); t++)
            if (device_op_supported(DeviceOp(o), DeviceType(t))) {
                device_kernel_name(DeviceOp(o), DeviceType(t), buf, sizeof buf);
                names.insert(buf);
            }
    return names;
}

// Every adapt2_reduce_* identifier in the image, PTX parameter names
// ("<kernel>_param_0") folded into their kernel's.
std::set<std::string> names_in(const std::string &image) {
    static const std::string prefix = "adapt2_reduce_", param = "_param_";
    std::set<std::string> found;
    for (size_t at = image.find(prefix); at != std::string::npos; at = image.find(prefix, at + 1)) {
        size_t end = at;
        while (end < image.size() && (isalnum((unsigned char)image[end]) || image[end] == '_')) end++;
        std::string name = image.substr(at, end - at);
        size_t p = name.rfind(param);
        if (p != std::string::npos && name.find_first_not_of("0123456789", p + param.size()) == std::string::npos)
            name.resize(p);
        found.insert(name);
    }
    return found;
}

void check_image(const std::string &image) {
    const unsigned char magic[4] = {0x50, 0xed, 0x55, 0xba};  // fatbin header 0xBA55ED50, little-endian
    if (image.size() < 4 || memcmp(image.data(), magic, 4) != 0) fail("not a fatbin");
    std::set<std::string> want = supported_names(), found = names_in(image);
    for (const std::string &n : want) {
        if (image.find(n + '\0') == std::string::npos) fail(n + ": no machine code symbol");
        if (image.find(".entry " + n + "(") == std::string::npos) fail(n + ": not in the PTX");
    }
    for (const std::string &n : found)
        if (!want.count(n)) fail(n + ": a kernel device_op_supported() does not know");
    printf("%zu kernels expected, %zu found\n", want.size(), found.size());
}

}  // namespace

int main() {
    size_t bytes = 0;
    const void *embedded = adapt2_kernel_image(&bytes);
#ifndef ADAPT2_FATBIN_FILE
    if (embedded || bytes) fail("a build without kernels has a kernel image");
    if (failures) return 1;
    puts("no fatbin in this build (no nvcc, or --without-cuda): skipped");
    return 77;
#else
    std::ifstream f(ADAPT2_FATBIN_FILE, std::ios::binary);
    std::string image((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (!f.good() && !f.eof()) fail("cannot read " ADAPT2_FATBIN_FILE);
    check_image(image);
#ifdef ADAPT2_FATBIN_EMBEDDED
    if (!embedded || bytes != image.size() || memcmp(embedded, image.data(), bytes) != 0)
        fail("the embedded image is not the fatbin");
    if (reinterpret_cast<uintptr_t>(embedded) % 16) fail("the embedded image is not 16-byte aligned");
#else
    if (embedded || bytes) fail("compile-check build: the component should not embed the fatbin");
#endif
    return failures ? 1 : 0;
#endif
}
