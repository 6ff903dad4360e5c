// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// CMocka from C++: the headers it expects before cmocka.h.
#ifndef ADAPT2_TEST_CMOCKA_CXX_H
#define ADAPT2_TEST_CMOCKA_CXX_H
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
extern "C" {
#include <cmocka.h>
}
#endif
