// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Process-wide statistics, read through MPI_T performance variables. Updated
// once per collective call (never per segment), with no locked add where no
// second thread can count (threads.h; counters.cc says why).
#ifndef ADAPT2_ENGINE_COUNTERS_H
#define ADAPT2_ENGINE_COUNTERS_H

#include <cstdint>

namespace adapt2 {

// Same order as adapt2_counter_t in adapt2_bridge.h (counters.cc checks).
enum class Counter : int {
#define ADAPT2_COLLECTIVE(name, NAME) name##_calls,
#include "../collectives.def"
#undef ADAPT2_COLLECTIVE
    segments_sent,
    bytes_sent,
    fallbacks,
    pool_overdrafts,
    detached_calls,
    detach_bytes,
    detach_refused,
    detach_waits,
    internode_segments,
    internode_bytes,
    device_bytes,
    device_combines,
    direct_calls,
    count_
};

void count(Counter which, uint64_t amount);
uint64_t counter_value(Counter which);

}  // namespace adapt2

#endif
