// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// The exchanges of recursive doubling, for one rank: the one plan that the
// engine's flow (recdoubling_flow.cc) and the direct path
// (direct_route.cc) both follow, so that either computes the same bits.
//
// With p not a power of two, the first 2*rem ranks (rem = p - 2^floor(log2 p))
// pair up first: each even one hands its data to the odd one after it and
// gets the result back at the end. In every exchange the two partners fold
// the lower ranks' data on the left (the result is the left-to-right order
// of ranks, so non-commutative ops work).
#ifndef ADAPT2_ENGINE_RECDOUBLING_PLAN_H
#define ADAPT2_ENGINE_RECDOUBLING_PLAN_H

#include "../adapt2_bridge.h"

namespace adapt2 {

inline adapt2_direct_step_t exchange_step(int peer, int send, int recv, int fold, int into_result) {
    adapt2_direct_step_t x{};  // (the allgather's fields stay 0)
    x.peer = peer;
    x.send = send;
    x.recv = recv;
    x.fold = fold;
    x.into_result = into_result;
    return x;
}

// Calls push(adapt2_direct_step_t) for each of `rank`'s exchanges in order.
template <class Push>
void plan_recdoubling(int rank, int size, Push push) {
    if (size < 2) return;
    int pof2 = 1;
    while (pof2 <= size / 2) pof2 *= 2;
    const int rem = size - pof2;
    auto real = [rem](int v) { return v < rem ? v * 2 + 1 : v + rem; };
    int vrank = rank - rem;
    if (rank < 2 * rem) {
        if (rank % 2 == 0) {  // hand our data to the next rank, get the result back
            push(exchange_step(rank + 1, 1, 0, 0, 0));
            push(exchange_step(rank + 1, 0, 1, 0, 1));
            return;
        }
        push(exchange_step(rank - 1, 0, 1, 1, 0));
        vrank = rank / 2;
    }
    for (int mask = 1; mask < pof2; mask <<= 1) push(exchange_step(real(vrank ^ mask), 1, 1, 1, 0));
    if (rank < 2 * rem) push(exchange_step(rank - 1, 1, 0, 0, 0));
}

}  // namespace adapt2

#endif
