// Process-wide statistics, read through MPI_T performance variables. Updated
// once per collective call (never per segment) to keep atomics off the hot path.
#ifndef ADAPT2_ENGINE_COUNTERS_H
#define ADAPT2_ENGINE_COUNTERS_H

#include <cstdint>

namespace adapt2 {

// Same order as adapt2_counter_t in adapt2_bridge.h.
enum class Counter : int {
    bcast_calls,
    reduce_calls,
    allreduce_calls,
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
    count_
};

void count(Counter which, uint64_t amount);
uint64_t counter_value(Counter which);

}  // namespace adapt2

#endif
