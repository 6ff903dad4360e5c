// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Whether the engine may run on two threads at once: under
// MPI_THREAD_MULTIPLE, or with adapt2's progress thread. The C layer decides
// once per process, when the first communicator's engine is made, before
// its first call and before the progress thread exists
// (mca_coll_adapt2_engine_set_threads_may_race); until then, and in the
// unit tests and the simulator, the answer is yes.
//
// Without a second thread the engine's lock-free inbox and its mutexes take
// plain loads and stores instead of locked instructions: a locked
// instruction drains the store buffer, and right after a send that buffer
// holds the message written into the shared-memory queue the receiver's
// core is reading (docs/measurements.md, "Counters without locked adds").
// With one thread the program order of that thread is all the order there
// is (MPI_THREAD_SERIALIZED: the application's own synchronisation between
// its threads orders their calls).
#ifndef ADAPT2_ENGINE_THREADS_H
#define ADAPT2_ENGINE_THREADS_H

#include <atomic>
#include <mutex>

namespace adapt2 {

inline std::atomic<bool> g_threads_may_race{true};

inline bool threads_may_race() { return g_threads_may_race.load(std::memory_order_relaxed); }

// The order a plain store of shared state needs: sequentially consistent
// while threads may race, relaxed (a plain move) otherwise.
inline std::memory_order race_order() {
    return threads_may_race() ? std::memory_order_seq_cst : std::memory_order_relaxed;
}

// std::lock_guard's place: takes the mutex only while threads may race.
class RaceGuard {
public:
    explicit RaceGuard(std::mutex &m) : m_(threads_may_race() ? &m : nullptr) {
        if (m_) m_->lock();
    }
    ~RaceGuard() {
        if (m_) m_->unlock();
    }
    RaceGuard(const RaceGuard &) = delete;
    RaceGuard &operator=(const RaceGuard &) = delete;

private:
    std::mutex *m_;
};

}  // namespace adapt2

#endif
