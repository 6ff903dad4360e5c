// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
#include "schedule_cache.h"

#include "schedule.h"
#include "threads.h"

namespace adapt2 {

ScheduleCache::~ScheduleCache() {
    for (Schedule *s : kept_) delete s;
}

void ScheduleCache::set_max(int max) {
    std::vector<Schedule *> extra;
    {
        RaceGuard guard(lock_);
        max_ = max > 0 ? static_cast<size_t>(max) : 0;
        kept_.reserve(max_);
        while (kept_.size() > max_) extra.push_back(kept_.back()), kept_.pop_back();
    }
    for (Schedule *s : extra) delete s;
}

Schedule *ScheduleCache::take() {
    RaceGuard guard(lock_);
    if (kept_.empty()) return nullptr;
    Schedule *s = kept_.back();
    kept_.pop_back();
    return s;
}

void ScheduleCache::put(Schedule *schedule) {
    {
        RaceGuard guard(lock_);
        if (kept_.size() < max_) {
            kept_.push_back(schedule);
            return;
        }
    }
    delete schedule;
}

int ScheduleCache::kept() const {
    RaceGuard guard(lock_);
    return static_cast<int>(kept_.size());
}

}  // namespace adapt2
