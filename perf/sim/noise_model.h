// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// perf/noise.c's noise, in simulated time: the same spec syntax and, for a
// seed, the same random events (noise_random_event is a pure function of
// seed, rank and iteration). Periodic noise follows noise_work(): events due
// before the end of the compute (or of the noise itself) are added to it.
// Per-rank state is three numbers, not noise.c's whole noise_state_t.
#ifndef ADAPT2_SIM_NOISE_MODEL_H
#define ADAPT2_SIM_NOISE_MODEL_H

#include <cstdint>
#include <string>

extern "C" {
#include "noise.h"
}

namespace adapt2::sim {

class NoiseModel {
public:
    NoiseModel();
    // Parses a noise.h spec ("none", "p=0.1,d=5ms", "periodic:d=1ms,every=10ms").
    // Returns an error message or "".
    std::string parse(const std::string &spec, uint64_t seed);
    bool on() const { return spec_.mode != NOISE_OFF; }
    std::string describe() const;

    struct RankNoise {
        double next_due = 0;  // periodic: when its next event is due (us)
        double total = 0;     // noise injected so far (us)
        bool noisy = false;
    };
    RankNoise setup(int rank, int nprocs) const;
    // The noise (us) of iteration `iter` whose compute ends at `compute_end`.
    double next(RankNoise &st, int rank, long iter, double compute_end) const;

private:
    noise_spec_t spec_;
    uint64_t seed_ = 1;
};

}  // namespace adapt2::sim

#endif
