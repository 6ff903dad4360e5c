// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// What the loop driver runs on every simulated rank: the real adapt2 engine
// (adapt2_collective.h) or a lock-step baseline (lockstep.h).
#ifndef ADAPT2_SIM_COLLECTIVE_H
#define ADAPT2_SIM_COLLECTIVE_H

#include <functional>
#include <memory>
#include <string>

#include "network.h"

namespace adapt2::sim {

// Told when a rank's call returns (`done`: the application may go on) and
// when all of its work is over (`finished`; later than done for a call that
// completed early, see docs/design.md, "Decoupled completion").
class CallListener {
public:
    virtual ~CallListener() = default;
    virtual void call_done(int rank) = 0;
    virtual void call_finished(int rank) = 0;
};

class Collective {
public:
    virtual ~Collective() = default;
    // Starts `rank`'s next call, from inside a handler on that rank's CPU.
    virtual void start(int rank) = 0;
};

using CollectiveFactory = std::function<std::unique_ptr<Collective>(Network &, CallListener &)>;

}  // namespace adapt2::sim

#endif
