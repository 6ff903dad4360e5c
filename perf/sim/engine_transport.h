// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// The adapt2 engine's Transport over the simulated network: one endpoint per
// simulated rank, each given to that rank's adapt2::Comm. Completions come
// back as network events and go to op->owner->complete(op, 0), as the PML
// transport does from its request callbacks.
#ifndef ADAPT2_SIM_ENGINE_TRANSPORT_H
#define ADAPT2_SIM_ENGINE_TRANSPORT_H

#include <memory>

#include "counters.h"
#include "network.h"
#include "schedule.h"
#include "transport.h"

namespace adapt2::sim {

// Charges the engine's own copies (detach copies, interior ranks' copy-out)
// made while it lives to the CPU of the rank whose handler runs, at the
// machine's copy cost. The engine counts those bytes (detach_bytes); the
// simulator runs one handler at a time, so the difference is this handler's.
// Meters nest (a call started from a completion): the outermost charges.
class CopyMeter {
public:
    explicit CopyMeter(Network &net) : net_(net), before_(counter_value(Counter::detach_bytes)) { ++depth(); }
    ~CopyMeter() {
        if (--depth() > 0) return;
        const uint64_t copied = counter_value(Counter::detach_bytes) - before_;
        const int rank = net_.current();
        if (copied && rank >= 0) net_.memory_work(rank, double(copied) * net_.machine().copy_us_per_byte, copied);
    }
    CopyMeter(const CopyMeter &) = delete;
    CopyMeter &operator=(const CopyMeter &) = delete;

private:
    static int &depth() {
        static thread_local int d = 0;
        return d;
    }
    Network &net_;
    uint64_t before_;
};

// Hands completed engine operations back to their schedules.
class EngineCompleter final : public Completer {
public:
    explicit EngineCompleter(Network &net) : net_(net), id_(net.add_completer(this)) {}
    int id() const { return id_; }
    void completed(int, void *cookie, bool) override {
        CopyMeter meter(net_);
        Op *op = static_cast<Op *>(cookie);
        op->owner->complete(op, 0);
    }

private:
    Network &net_;
    int id_;
};

class EngineEndpoint final : public Transport {
public:
    EngineEndpoint(Network &net, const EngineCompleter &completer, int rank)
        : net_(net), completer_(completer.id()), rank_(rank) {}
    int send(const void *buf, size_t len, int peer, int tag, Op *op) override {
        net_.send(rank_, peer, tag, buf, len, completer_, op);
        return 0;
    }
    int recv(void *buf, size_t len, int peer, int tag, Op *op) override {
        net_.recv(rank_, peer, tag, buf, len, completer_, op);
        return 0;
    }

private:
    Network &net_;
    int completer_;
    int rank_;
};

}  // namespace adapt2::sim

#endif
