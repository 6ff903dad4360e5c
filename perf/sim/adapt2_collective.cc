// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
#include "adapt2_collective.h"

#include "param_defaults.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "collectives.h"
#include "detach.h"
#include "tree_cache.h"

namespace adapt2::sim {

namespace {
enum Timer : int { kGrace = 0, kRetry = 1 };
constexpr size_t kUnit = sizeof(float);  // reductions are float sums
constexpr int kFirstTag = 1 << 30;
}  // namespace

const char *coll_name(CollKind kind) {
    static const char *const names[] = {
#define ADAPT2_COLLECTIVE(name, NAME) #name,
#include "../../ompi/mca/coll/adapt2/collectives.def"
#undef ADAPT2_COLLECTIVE
    };
    return names[static_cast<int>(kind)];
}

bool coll_from_name(const char *name, CollKind *kind) {
    for (int k = 0; k < ADAPT2_COLL_COUNT; ++k) {
        if (!std::strcmp(name, coll_name(static_cast<CollKind>(k)))) return *kind = static_cast<CollKind>(k), true;
    }
    return false;
}

Adapt2Config default_adapt2_config(CollKind kind, size_t bytes, bool oversubscribed) {
    Adapt2Config c;
    c.kind = kind;
    c.bytes = bytes;
    // The component's defaults (params.def), as a user gets them.
    namespace d = defaults;
    adapt2_tree_settings_t t = d::tree_settings(d::bcast_segment_size);
    t.await_min_bytes = oversubscribed ? 131072 : 0;  // detach_await_min_bytes=-1 (auto)
    t.blocking = 1;
    t.topology = 0;  // set per machine by Adapt2Collective (Adapt2Config::topology)
    c.bcast = t;
    c.reduce.tree = t;
    c.reduce.tree.segment_size = d::reduce_segment_size;
    c.reduce.reproducible = d::reproducible;
    c.allreduce.tree = t;
    c.allreduce.tree.segment_size = d::allreduce_segment_size;
    c.allreduce.algorithm = ADAPT2_ALLREDUCE_AUTO;
    c.allreduce.ring_min_bytes = d::allreduce_ring_min_bytes;
    c.allreduce.ring_max_bytes = d::allreduce_ring_max_bytes;
    c.allreduce.recdoubling_max_bytes = d::allreduce_recdoubling_max_bytes;
    c.allreduce.recdoubling_max_ranks = static_cast<int>(d::allreduce_recdoubling_max_ranks);
    c.allreduce.recdoubling_few_ranks_max_bytes = d::allreduce_recdoubling_few_ranks_max_bytes;
    c.allreduce.rabenseifner_min_bytes = d::allreduce_rabenseifner_min_bytes;
    c.allreduce.rabenseifner_max_bytes = d::allreduce_rabenseifner_max_bytes;
    c.allreduce.reproducible = d::reproducible;
    c.ring_segment_size =
        kind == CollKind::allgather ? d::allgather_segment_size : d::reduce_scatter_block_segment_size;
    return c;
}

void set_topology(Adapt2Config &c, bool on) { c.topology = on; }

void force_sync(Adapt2Config &c) {
    c.bcast.detach_max_message = 0;
    c.reduce.tree.detach_max_message = 0;
    c.allreduce.tree.detach_max_message = 0;
}

void set_segment_size(Adapt2Config &c, size_t segment) {
    c.bcast.segment_size = segment;
    c.reduce.tree.segment_size = segment;
    c.allreduce.tree.segment_size = segment;
    c.ring_segment_size = segment;
    c.bcast.topology_segment_size = c.reduce.tree.topology_segment_size = c.allreduce.tree.topology_segment_size =
        segment;
}

void set_message_cost(Adapt2Config &c, long bytes) {
    c.bcast.node_message_cost = c.reduce.tree.node_message_cost = c.allreduce.tree.node_message_cost =
        static_cast<size_t>(bytes);
}

SharedScratch::~SharedScratch() {
    for (auto &entry : by_size_) std::free(entry.second);
}

void *SharedScratch::alloc(void *self, size_t bytes) {
    void *&buffer = static_cast<SharedScratch *>(self)->by_size_[bytes];
    if (!buffer) {
        const size_t line = 64;  // as the engine's host allocator aligns
        buffer = std::aligned_alloc(line, (std::max<size_t>(bytes, 1) + line - 1) / line * line);
    }
    return buffer;
}

Adapt2Collective::Adapt2Collective(Network &net, CallListener &listener, const Adapt2Config &config)
    : net_(net), listener_(listener), config_(config), completer_(net) {
    const int p = net.ranks();
    // Where the ranks are: nodes of k consecutive ranks, as the C layer
    // reports them to the engine (hostnames). Like Open MPI's multi_level
    // flag, multi-level trees apply only if there is more than one node.
    const Machine &m = net.machine();
    std::shared_ptr<TreeCache> trees;
    if (m.node_of(p - 1) > 0) {
        Topology topo;
        topo.node.resize(p);
        for (int r = 0; r < p; ++r) topo.node[r] = m.node_of(r);
        trees = std::make_shared<TreeCache>(std::move(topo));
    } else {
        trees = std::make_shared<TreeCache>(p);
    }
    // mca_coll_adapt2_topology_settings(): multi-level trees where the
    // communicator spans nodes and coll_adapt2_topology is on.
    const int multi = config_.topology && trees->topology().multi_level();
    config_.bcast.topology = config_.reduce.tree.topology = config_.allreduce.tree.topology = multi;
    // The machine's shared memory with or without single copy, as a user
    // of such a machine sets coll_adapt2_single_copy (its auto says yes).
    config_.bcast.single_copy = config_.reduce.tree.single_copy = config_.allreduce.tree.single_copy = m.intra.get;
    comms_.reserve(p);
    calls_.assign(p, RankCall{this});
    const BufferAllocator buffers = config.move_data ? host_allocator() : scratch_.allocator();
    for (int r = 0; r < p; ++r) {
        comms_.push_back(std::make_unique<Comm>(std::make_unique<EngineEndpoint>(net, completer_, r), r, p,
                                                config.pool_max_bytes, 0, config.detach_max_bytes, nullptr, buffers));
        comms_.back()->share_trees(trees);
        comms_.back()->set_tag_reserver(reserve_tags, &calls_[r]);
    }
    op_ = adapt2_reduction_t{};  // float sums; every other field zero
    op_.unit_bytes = kUnit;
    op_.commutative = 1;
    op_.ctx = this;
    op_.combine = combine;
    op_.combine3 = combine3;
    // Allgather's result, and reduce_scatter_block's input, hold p blocks.
    const bool blocks = config.kind == CollKind::allgather || config.kind == CollKind::reduce_scatter_block;
    const size_t big = config.bytes * (blocks ? size_t(p) : 1);
    if (config.move_data) {
        own_.assign(p, std::vector<char>(config.kind == CollKind::reduce_scatter_block ? big : config.bytes));
        result_.assign(p, std::vector<char>(config.kind == CollKind::allgather ? big : config.bytes));
    } else {
        // Never written by the network; untouched pages cost no memory.
        shared_ = static_cast<char *>(std::calloc(big ? big : 1, 1));
    }
}

// Rank r's call, as the C layer would describe it.
adapt2_call_t Adapt2Collective::describe_call(int rank) {
    const int p = net_.ranks();
    adapt2_call_t call{};
    call.collective = static_cast<int>(config_.kind);
    call.facts.blocking = config_.bcast.blocking;  // the config's trees say (blocking by default)
    call.root = config_.root;
    call.reduction = op_;
    const bool ring = config_.kind == CollKind::allgather || config_.kind == CollKind::reduce_scatter_block;
    call.send.contig = own(rank);
    call.send.bytes = config_.bytes * (config_.kind == CollKind::reduce_scatter_block ? p : 1);
    call.recv.contig = config_.kind == CollKind::bcast ? own(rank) : result(rank);
    call.recv.bytes = config_.bytes * (config_.kind == CollKind::allgather ? p : 1);
    switch (config_.kind) {
    case CollKind::bcast: call.settings.tree = config_.bcast; break;
    case CollKind::reduce:
        call.settings.tree = config_.reduce.tree;
        call.settings.reproducible = config_.reduce.reproducible;
        break;
    default:
        call.settings = config_.allreduce;
        if (ring) call.settings.tree.segment_size = config_.ring_segment_size;
        break;
    }
    return call;
}

Adapt2Collective::~Adapt2Collective() {
    for (RankCall &c : calls_) {
        if (c.grace) c.grace->release();
    }
    comms_.clear();
    std::free(shared_);
}

// The engine reserves each call's tags through its Comm: a fresh block per
// call of each rank, as Open MPI's tag reservation does.
int Adapt2Collective::reserve_tags(void *rank_call, int count) {
    auto *c = static_cast<RankCall *>(rank_call);
    return kFirstTag - int(c->calls++ % 100000) * count;
}

void Adapt2Collective::start(int rank) {
    if (must_wait_for_room(rank)) {
        calls_[rank].waiting_room = true;
        return;
    }
    launch(rank);
}

// What Comm::wait_for_detach_room does in a process: a blocking call that
// would detach waits while the pool is full and earlier calls hold copies.
bool Adapt2Collective::must_wait_for_room(int rank) {
    const adapt2_tree_settings_t &t = config_.kind == CollKind::reduce ? config_.reduce.tree : config_.bcast;
    const bool detaches = config_.kind == CollKind::bcast || config_.kind == CollKind::reduce;
    if (!detaches || !t.blocking || !may_detach(t, config_.bytes)) return false;
    BufferPool &pool = comms_[rank]->detach_pool();
    if (pool.has_room(config_.bytes) || pool.bytes_lent() == 0) return false;
    count(Counter::detach_waits, 1);
    return true;
}

void Adapt2Collective::launch(int rank) {
    RankCall &c = calls_[rank];
    Comm &comm = *comms_[rank];
    Grace *grace = nullptr;
    CopyMeter meter(net_);
    c.launching = true;
    c.done_early = false;
    adapt2_call_t call = describe_call(rank);
    call.done = on_done;
    call.finished = on_finished;
    call.ctx = &c;
    const bool may_grace = config_.kind == CollKind::bcast || config_.kind == CollKind::reduce;
    call.grace = may_grace ? reinterpret_cast<void **>(&grace) : nullptr;
    const int rc = start_call(comm, call);
    c.launching = false;
    if (rc != 0) throw std::runtime_error("adapt2 engine refused a simulated call");
    if (!grace) return;
    if (c.done_early) {  // the call already completed (inside start): nothing waits
        grace->fire();
        grace->release();
        return;
    }
    c.grace = grace;
    net_.at(rank, net_.now(rank) + config_.grace_us, this, nullptr, kGrace | int(c.grace_gen) << 1);
}

void Adapt2Collective::on_event(const Event &e) {
    CopyMeter meter(net_);
    RankCall &c = calls_[e.rank];
    if ((e.arg & 1) == kRetry) {
        c.waiting_room = false;
        start(e.rank);
        return;
    }
    // The waiter's grace period is over (if the call is still waiting).
    if (c.grace && uint32_t(e.arg >> 1) == (c.grace_gen & 0x3fffffff)) c.grace->fire();
}

// The call returned on this rank: the waiter ends the grace period if it is
// still running and lets go of it, as wait_with_grace() does.
void Adapt2Collective::on_done(void *ctx, int) {
    auto *c = static_cast<RankCall *>(ctx);
    const int rank = c->owner->rank_of(c);
    if (c->grace) {
        c->grace->fire();
        c->grace->release();
        c->grace = nullptr;
        c->grace_gen = (c->grace_gen + 1) & 0x3fffffff;
    }
    if (c->launching) c->done_early = true;  // launch() lets go of its grace
    c->owner->listener_.call_done(rank);
}

void Adapt2Collective::on_finished(void *ctx, int) {
    auto *c = static_cast<RankCall *>(ctx);
    Adapt2Collective *self = c->owner;
    const int rank = self->rank_of(c);
    self->listener_.call_finished(rank);
    if (c->waiting_room) self->net_.at(rank, self->net_.now(rank), self, nullptr, kRetry);
}

// Reductions cost CPU time on the rank that combines (float sums when data
// moves; otherwise only the time).
int Adapt2Collective::combine(void *ctx, const void *in, void *inout, size_t units) {
    auto *self = static_cast<Adapt2Collective *>(ctx);
    const int r = self->net_.current();
    const Machine &m = self->net_.machine();
    if (r >= 0) self->net_.memory_work(r, double(units * kUnit) * m.combine_us_per_byte, units * kUnit);
    if (self->config_.move_data) {
        const float *a = static_cast<const float *>(in);
        float *b = static_cast<float *>(inout);
        for (size_t i = 0; i < units; ++i) b[i] += a[i];
    }
    return 0;
}

int Adapt2Collective::combine3(void *ctx, const void *a, const void *b, void *out, size_t units) {
    auto *self = static_cast<Adapt2Collective *>(ctx);
    if (!self->config_.move_data || out == a) return combine(ctx, b, out, units);
    if (out != b) std::memcpy(out, b, units * kUnit);
    return combine(ctx, a, out, units);
}

}  // namespace adapt2::sim
