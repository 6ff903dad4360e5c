// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
#include "counters.h"

#include "../adapt2_bridge.h"

namespace adapt2 {
// (a collective's calls counter also has the collective's number: direct_route.cc)
#define ADAPT2_COLLECTIVE(name, NAME)                                                       \
    static_assert(static_cast<int>(Counter::name##_calls) == ADAPT2_COUNTER_##NAME##_CALLS, \
                  "counter numbering of " #name);                                           \
    static_assert(static_cast<int>(Counter::name##_calls) == ADAPT2_COLL_##NAME, "counter of " #name);
#include "../collectives.def"
#undef ADAPT2_COLLECTIVE
static_assert(static_cast<int>(Counter::direct_calls) == ADAPT2_COUNTER_DIRECT_CALLS, "counter numbering");
static_assert(static_cast<int>(Counter::count_) == ADAPT2_COUNTER_COUNT, "counter numbering");

}  // namespace adapt2
