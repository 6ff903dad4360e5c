// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// The benchmark loop of perf/noise_bench.c, simulated: every rank runs
// `iterations` times "compute W + this iteration's noise, then the
// collective", with no barrier, and each rank's loop time runs from 0 to the
// return of its last call. The noise is perf/noise.c's (same spec syntax,
// same events for a seed); a rank's CPU is busy while it computes or is
// noisy, so its pending completions wait, as they would for a process that
// calls into MPI only between computations.
//
// A single collective is the same loop with one iteration, no compute and
// no noise: every rank enters at time 0.
//
// With `barrier`, the loop is perf/adapt2_bench's instead: the ranks start
// each call together, `barrier_us` after the last one returned from the
// previous call (an ideal barrier), and `median_last` is the median over the
// calls of the slowest rank's time in the call (adapt2_bench's
// last_median_us). Background work of a call (decoupled completion) and the
// state of the network (token buckets) carry over from call to call.
#ifndef ADAPT2_SIM_LOOP_H
#define ADAPT2_SIM_LOOP_H

#include <cstdint>
#include <vector>

#include "collective.h"
#include "machine.h"
#include "noise_model.h"

namespace adapt2::sim {

struct LoopConfig {
    int iterations = 1;
    double compute_us = 0;
    NoiseModel noise;  // default: none
    bool barrier = false;
    double barrier_us = 0;
};

struct LoopResult {
    double mean_time = 0;    // mean over ranks of the loop time (us)
    double max_time = 0;     // the last rank's loop time
    double mean_call = 0;    // mean over ranks and calls of one call's time (entry to return)
    double finished = 0;     // when the last call's last work was over, on any rank
    double mean_noise = 0;   // noise injected per rank (us)
    double root_done = 0;    // rank 0's loop time
    double median_last = 0;  // barrier: median over calls of the slowest rank's call time
    uint64_t messages = 0, bytes = 0, inter_bytes = 0, events = 0;
    bool complete = true;  // every rank did every call (else: a deadlock)
};

LoopResult run_loop(int ranks, const Machine &machine, const LoopConfig &config, const CollectiveFactory &make);

// perf/noise_bench.c's definitions: (mean T_noisy - mean T_clean) / mean
// noise per rank, and the same for the last rank's times.
inline double amplification(const LoopResult &clean, const LoopResult &noisy) {
    return noisy.mean_noise > 0 ? (noisy.mean_time - clean.mean_time) / noisy.mean_noise : 0;
}
inline double amplification_last(const LoopResult &clean, const LoopResult &noisy) {
    return noisy.mean_noise > 0 ? (noisy.max_time - clean.max_time) / noisy.mean_noise : 0;
}

}  // namespace adapt2::sim

#endif
