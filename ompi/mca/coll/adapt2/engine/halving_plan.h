// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// The exchanges of a small blocking Reduce_scatter_block on the direct path,
// for one rank: the plan that direct_route.cc hands to the C layer
// (c/coll_adapt2_direct_reduce_scatter.c). Recursive halving with the
// farthest partner first, on the p blocks in the user's order: each exchange
// halves the range of blocks a rank still reduces, so that rank r ends with
// block r where the blocks already lie, with no reordering.
//
// It folds the partners' data in whatever order the exchanges bring it, so it
// is for commutative ops only (the engine's flow, halving_flow.h, keeps rank
// order for the others, nearest partner first in a bit-reversed layout).
//
// With p not a power of two, the first 2*rem ranks (rem = p - 2^floor(log2 p))
// pair up, as halving_flow.h's do: each even one (a giver) hands its p blocks
// to the odd one after it (a taker), which folds them and stands for both in
// the halving (its virtual block: the giver's block and its own); at the end
// the taker sends the giver its block.
#ifndef ADAPT2_ENGINE_HALVING_PLAN_H
#define ADAPT2_ENGINE_HALVING_PLAN_H

#include "../adapt2_bridge.h"

namespace adapt2 {

// Calls push(adapt2_direct_step_t) for each of `rank`'s exchanges in order:
// `blocks` blocks from `send_block` go to `peer` (if `send`), `recv_blocks`
// arrive from it (if `recv`) and are folded into those from `recv_block`
// (if `fold`), or land there as they are (`into_result`: the giver's block).
template <class Push>
void plan_halving_scatter(int rank, int size, Push push) {
    if (size < 2) return;
    int pof2 = 1;
    while (pof2 * 2 <= size) pof2 *= 2;
    const int rem = size - pof2;
    auto first_block = [rem, size, pof2](int v) { return v >= pof2 ? size : v < rem ? 2 * v : v + rem; };
    auto real = [rem](int v) { return v < rem ? 2 * v + 1 : v + rem; };
    adapt2_direct_step_t x{};
    int vrank = rank - rem;
    if (rank < 2 * rem) {
        x.peer = rank % 2 == 0 ? rank + 1 : rank - 1;
        if (rank % 2 == 0) {  // a giver: its input to the taker, its block back
            x.send = 1, x.send_block = 0, x.blocks = size;
            push(x);
            x = adapt2_direct_step_t{};
            x.peer = rank + 1;
            x.recv = 1, x.into_result = 1, x.recv_block = rank, x.recv_blocks = 1;
            push(x);
            return;
        }
        x.recv = 1, x.fold = 1, x.recv_block = 0, x.recv_blocks = size;
        push(x);
        vrank = rank / 2;
    }
    int lo = 0, hi = pof2;  // the virtual blocks this rank still reduces
    for (int mask = pof2 / 2; mask >= 1; mask /= 2) {
        const int mid = lo + (hi - lo) / 2;
        const bool upper = (vrank & mask) != 0;
        const int keep_lo = upper ? mid : lo, keep_hi = upper ? hi : mid;
        const int give_lo = upper ? lo : mid, give_hi = upper ? mid : hi;
        x = adapt2_direct_step_t{};
        x.peer = real(vrank ^ mask);
        x.send = x.recv = x.fold = 1;
        x.send_block = first_block(give_lo);
        x.blocks = first_block(give_hi) - x.send_block;
        x.recv_block = first_block(keep_lo);
        x.recv_blocks = first_block(keep_hi) - x.recv_block;
        push(x);
        lo = keep_lo, hi = keep_hi;
    }
    if (rank < 2 * rem) {  // a taker: the giver's block
        x = adapt2_direct_step_t{};
        x.peer = rank - 1;
        x.send = 1, x.send_block = rank - 1, x.blocks = 1;
        push(x);
    }
}

}  // namespace adapt2

#endif
