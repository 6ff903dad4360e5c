// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
#include "noise_model.h"

#include <cstring>

namespace adapt2::sim {

NoiseModel::NoiseModel() {
    char err[200];
    noise_parse("none", &spec_, err, sizeof err);
}

std::string NoiseModel::parse(const std::string &spec, uint64_t seed) {
    char err[300];
    if (noise_parse(spec.c_str(), &spec_, err, sizeof err) != 0) return err;
    seed_ = seed;
    return "";
}

std::string NoiseModel::describe() const {
    char b[600];
    noise_format(&spec_, b, sizeof b);
    return b;
}

NoiseModel::RankNoise NoiseModel::setup(int rank, int nprocs) const {
    // noise_setup() gives the rank's phase (periodic) and whether it is noisy.
    // Note: frac= costs O(nprocs) per rank in noise.c.
    noise_state_t st;
    noise_setup(&st, &spec_, seed_, rank, nprocs, 0.0);
    RankNoise out;
    out.noisy = st.noisy != 0;
    out.next_due = 1e6 * st.next_due;
    return out;
}

double NoiseModel::next(RankNoise &st, int rank, long iter, double compute_end) const {
    double noise = 0;
    if (spec_.mode == NOISE_RANDOM && st.noisy) {
        noise_state_t s;
        std::memset(&s, 0, sizeof s);
        s.spec = spec_;
        s.seed = seed_;
        s.rank = rank;
        s.noisy = 1;
        noise = noise_random_event(&s, iter);
    } else if (spec_.mode == NOISE_PERIODIC && st.noisy) {
        double end = compute_end;
        while (st.next_due < end) {  // as noise_work(): pending, in the compute, in the noise
            end += spec_.d_us;
            st.next_due += spec_.every_us;
            noise += spec_.d_us;
        }
    }
    st.total += noise;
    return noise;
}

}  // namespace adapt2::sim
