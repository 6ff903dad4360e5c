// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Finished schedules a communicator keeps for its next calls: a schedule
// keeps its call arena (call_arena.h) and its operation arrays, so a call of
// a shape seen before allocates nothing. At most `max` are kept (MCA
// parameter coll_adapt2_schedule_cache); the rest are freed as they finish.
#ifndef ADAPT2_ENGINE_SCHEDULE_CACHE_H
#define ADAPT2_ENGINE_SCHEDULE_CACHE_H

#include <mutex>
#include <vector>

#include "param_defaults.h"

namespace adapt2 {

class Schedule;

class ScheduleCache {
public:
    ScheduleCache() { set_max(static_cast<int>(defaults::schedule_cache)); }
    ~ScheduleCache();
    ScheduleCache(const ScheduleCache &) = delete;
    ScheduleCache &operator=(const ScheduleCache &) = delete;

    // Before the first call (the engine's own communicators keep the default);
    // shrinking frees kept schedules past the new max.
    void set_max(int max);
    // A kept schedule, or nullptr.
    Schedule *take();
    // A finished schedule, its flows gone: kept, or freed if `max` are kept.
    // Any thread (schedules finish where their last completion arrives).
    void put(Schedule *schedule);
    int kept() const;

private:
    mutable std::mutex lock_;  // per call, never per segment
    size_t max_ = 0;
    std::vector<Schedule *> kept_;  // reserved to max_: put() allocates nothing
};

}  // namespace adapt2

#endif
