// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// The real adapt2 engine on every simulated rank: one adapt2::Comm per rank,
// each with its own endpoint of the simulated network, all sharing ONE tree
// cache (Comm::share_trees; a tree per rank would cost memory quadratic in
// the ranks). Calls are started with the engine's own entry points
// (start_<collective> of collectives.h), so the trees, segments,
// windows, hellos and decoupled completion are exactly those that run inside
// Open MPI.
//
// Blocking calls behave as coll_adapt2_request.c makes them: the waiter
// fires a call's grace period after `grace_us` and releases it once the call
// is done. A blocking call that finds its communicator's detach pool full
// waits until one of its rank's earlier calls finishes (Comm's own wait loop
// would spin on a progress function; the simulator has none, see README).
#ifndef ADAPT2_SIM_ADAPT2_COLLECTIVE_H
#define ADAPT2_SIM_ADAPT2_COLLECTIVE_H

#include <map>
#include <memory>
#include <vector>

#include "../../ompi/mca/coll/adapt2/adapt2_bridge.h"
#include "collective.h"
#include "comm.h"
#include "engine_transport.h"

namespace adapt2::sim {

// One per collective of the registry (collectives.def), in its order.
enum class CollKind {
#define ADAPT2_COLLECTIVE(name, NAME) name,
#include "../../ompi/mca/coll/adapt2/collectives.def"
#undef ADAPT2_COLLECTIVE
};
const char *coll_name(CollKind kind);
bool coll_from_name(const char *name, CollKind *kind);

struct Adapt2Config {
    CollKind kind = CollKind::bcast;
    size_t bytes = 1 << 20;  // allgather, reduce_scatter_block: per rank's block
    int root = 0;
    adapt2_bcast_settings_t bcast{};  // also the reduce tree (reduce.tree)
    adapt2_reduce_settings_t reduce{};
    adapt2_allreduce_settings_t allreduce{};
    size_t ring_segment_size = 0;        // allgather, reduce_scatter_block
    double grace_us = 100;               // coll_adapt2_detach_grace_us
    size_t detach_max_bytes = 8u << 20;  // coll_adapt2_detach_max_bytes
    size_t pool_max_bytes = 32u << 20;   // coll_adapt2_pool_max_bytes
    bool move_data = false;              // real data, per-rank buffers (tests)
    // coll_adapt2_topology: multi-level trees where the machine has more than
    // one node (every Comm knows the nodes either way, as in Open MPI). The
    // settings' own `topology` fields say whether they apply; the collective
    // sets them from this and the machine.
    bool topology = true;
};

// The MCA parameters' defaults (README "Parameters"), for `bytes` on a
// machine with `oversubscribed` nodes (detach_await_min_bytes auto).
Adapt2Config default_adapt2_config(CollKind kind, size_t bytes, bool oversubscribed);
// Multi-level trees (coll_adapt2_topology): off leaves flat trees.
void set_topology(Adapt2Config &c, bool on);
// Synchronization forced on: no decoupled completion (detach_max_message=0).
void force_sync(Adapt2Config &c);
// One segment size for every tree of the call, multi-level ones included
// (0: one segment).
void set_segment_size(Adapt2Config &c, size_t segment);
// coll_adapt2_node_message_cost of every collective.
void set_message_cost(Adapt2Config &c, long bytes);

// Where every rank's staging and detach buffers come from when data does not
// move: one buffer per size, shared by all ranks. The network never writes
// them and nothing reads what they hold, so the engine's copies into and out
// of them cost only their simulated time (CopyMeter). Private buffers would
// give every rank that detaches its own copy of the message, kept by its pool
// for the next call: 1 MiB per node leader of a 1 MiB broadcast, 32 GiB of
// address space at 65,536 ranks in nodes of 2. The pools' accounting (caps,
// overdrafts, waits for room) is unchanged: only the memory is shared, so
// buffers of one size alias, even two lent to one rank (the reduce flow
// skips a copy onto itself; tests that move data get private ones).
class SharedScratch {
public:
    SharedScratch() = default;
    ~SharedScratch();
    SharedScratch(const SharedScratch &) = delete;
    SharedScratch &operator=(const SharedScratch &) = delete;
    BufferAllocator allocator() { return {alloc, keep, this}; }

private:
    static void *alloc(void *self, size_t bytes);
    static void keep(void *, void *) {}  // a pool's release: freed with the scratch
    std::map<size_t, void *> by_size_;
};

class Adapt2Collective final : public Collective, public EventSink {
public:
    Adapt2Collective(Network &net, CallListener &listener, const Adapt2Config &config);
    ~Adapt2Collective() override;

    void start(int rank) override;
    void on_event(const Event &e) override;  // grace timers, retries

    // Tests: rank r's buffers (move_data only).
    char *own(int rank) { return own_.empty() ? shared_ : own_[rank].data(); }
    char *result(int rank) { return result_.empty() ? shared_ : result_[rank].data(); }
    Comm &comm(int rank) { return *comms_[rank]; }

private:
    struct RankCall {
        Adapt2Collective *owner;
        Grace *grace = nullptr;
        uint32_t grace_gen = 0;  // which call a grace timer belongs to
        uint32_t calls = 0;      // calls started (tags)
        bool waiting_room = false;
        bool launching = false;   // inside the engine's start call
        bool done_early = false;  // ... which already completed it
    };
    static void on_done(void *ctx, int status);
    static void on_finished(void *ctx, int status);
    static int combine(void *ctx, const void *in, void *inout, size_t units);
    static int combine3(void *ctx, const void *a, const void *b, void *out, size_t units);
    int rank_of(const RankCall *c) const { return static_cast<int>(c - calls_.data()); }
    bool must_wait_for_room(int rank);
    void launch(int rank);
    static int reserve_tags(void *rank_call, int count);
    adapt2_call_t describe_call(int rank);

    Network &net_;
    CallListener &listener_;
    Adapt2Config config_;
    EngineCompleter completer_;
    SharedScratch scratch_;  // before comms_: their pools hold its buffers
    std::vector<std::unique_ptr<Comm>> comms_;
    std::vector<RankCall> calls_;
    adapt2_reduction_t op_{};
    char *shared_ = nullptr;  // one buffer all ranks use when data is not moved
    std::vector<std::vector<char>> own_, result_;
};

}  // namespace adapt2::sim

#endif
