// The adapt2 engine's Transport over the simulated network: one endpoint per
// simulated rank, each given to that rank's adapt2::Comm. Completions come
// back as network events and go to op->owner->complete(op, 0), as the PML
// transport does from its request callbacks.
#ifndef ADAPT2_SIM_ENGINE_TRANSPORT_H
#define ADAPT2_SIM_ENGINE_TRANSPORT_H

#include <memory>

#include "network.h"
#include "schedule.h"
#include "transport.h"

namespace adapt2::sim {

// Hands completed engine operations back to their schedules.
class EngineCompleter final : public Completer {
public:
    explicit EngineCompleter(Network &net) : id_(net.add_completer(this)) {}
    int id() const { return id_; }
    void completed(int, void *cookie, bool) override {
        Op *op = static_cast<Op *>(cookie);
        op->owner->complete(op, 0);
    }

private:
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
