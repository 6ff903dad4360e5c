// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// The exchanges of a blocking allgather on the direct path, for one rank: the
// plan that direct_route.cc hands to the C layer
// (c/coll_adapt2_direct_allgather.c). Both kinds take ceil(log2 p)
// exchanges, as the engine's Bruck flow does (bruck_flow.h):
//
// - p a power of two: recursive doubling in rank order. Exchange k pairs
//   rank r with r ^ 2^k; each sends the 2^k blocks it holds (its aligned
//   group's) and receives the partner's group next to them. The blocks lie
//   where the result wants them, so a contiguous result buffer is the
//   working buffer itself: no scratch, no final copy.
// - any other p: Bruck's. The working buffer holds the blocks rotated (slot
//   i: rank (r + i) % p's block); exchange k sends slots [0, n) to rank
//   r - 2^k and receives slots [2^k, 2^k + n) from rank r + 2^k, with
//   n = min(2^k, p - 2^k); the rotation is undone when the result is
//   delivered.
//
// Either way the first exchange sends only the rank's own block (the direct
// path sends it from the user's send buffer while it copies it into place).
//
// The linear exchange (plan_allgather_linear) is p - 1 exchanges that carry
// only the rank's own block, so none waits for another: exchange k sends it to
// rank r + k and receives rank r - k's into its place, in rank order.
#ifndef ADAPT2_ENGINE_ALLGATHER_PLAN_H
#define ADAPT2_ENGINE_ALLGATHER_PLAN_H

#include <algorithm>

#include "../adapt2_bridge.h"

namespace adapt2 {

inline bool allgather_rotates(int size) { return size > 1 && (size & (size - 1)) != 0; }

// Calls push(adapt2_direct_step_t) for each of `rank`'s exchanges in order.
template <class Push>
void plan_allgather(int rank, int size, Push push) {
    const bool rotated = allgather_rotates(size);
    for (int distance = 1; distance < size; distance *= 2) {
        adapt2_direct_step_t x{};
        x.send = x.recv = 1;
        if (rotated) {
            x.peer = (rank - distance + size) % size;
            x.from = (rank + distance) % size;
            x.blocks = std::min(distance, size - distance);
            x.send_block = 0;
            x.recv_block = distance;
        } else {
            x.peer = x.from = rank ^ distance;
            x.blocks = distance;
            x.send_block = rank & ~(distance - 1);
            x.recv_block = x.peer & ~(distance - 1);
        }
        push(x);
    }
}

// The linear exchange: push(adapt2_direct_step_t) for each of `rank`'s p - 1
// exchanges; every one sends the own block, so all may go at once.
template <class Push>
void plan_allgather_linear(int rank, int size, Push push) {
    for (int k = 1; k < size; ++k) {
        adapt2_direct_step_t x{};
        x.send = x.recv = 1;
        x.peer = (rank + k) % size;
        x.from = (rank - k + size) % size;
        x.blocks = 1;
        x.send_block = rank;
        x.recv_block = x.from;
        push(x);
    }
}

}  // namespace adapt2

#endif
