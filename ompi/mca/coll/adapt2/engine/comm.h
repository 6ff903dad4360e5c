// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Engine state of one communicator: who we are, how we reach the others, the
// trees we built and the staging pool. Created lazily by the first collective,
// destroyed with the communicator's coll module.
#ifndef ADAPT2_ENGINE_COMM_H
#define ADAPT2_ENGINE_COMM_H

#include <atomic>
#include <memory>
#include <string>

#include "buffer_pool.h"
#include "counters.h"
#include "schedule_cache.h"
#include "device/device_registry.h"
#include "late_peers.h"
#include "transport.h"
#include "tree_cache.h"

namespace adapt2 {

class Comm {
public:
    using ProgressFn = void (*)();

    // `buffers`: where the staging and detach pools get their memory (the
    // simulator's ranks, whose data never moves, share one buffer per size).
    Comm(std::unique_ptr<Transport> transport, int rank, int size, size_t pool_max_bytes, uint32_t id = 0,
         size_t detach_max_bytes = 0, ProgressFn progress = nullptr, BufferAllocator buffers = host_allocator())
        : transport_(std::move(transport)),
          rank_(rank),
          size_(size),
          id_(id),
          trees_(std::make_shared<TreeCache>(size)),
          pool_(pool_max_bytes, buffers),
          detach_pool_(detach_max_bytes, buffers),
          progress_(progress) {}

    int rank() const { return rank_; }
    int size() const { return size_; }
    uint32_t id() const { return id_; }
    // The call's number on this communicator: every rank runs the same
    // sequence, so (id, call) names one collective on all ranks (traces).
    uint32_t next_call() { return calls_.fetch_add(1, std::memory_order_relaxed); }
    Transport &transport() { return *transport_; }
    // Tags for one call: `count` consecutive ones, counting down from the
    // returned first. Through the C layer (Open MPI's per-communicator tags,
    // shared with other components) when it provides a reserver; else from
    // this communicator's own counter (tests, simulator), which every rank
    // advances alike since all run the same calls in the same order.
    // Verbose output through the C layer (none in tests and the simulator).
    using LogLevelFn = int (*)();
    using LogFn = void (*)(int level, const char *message);
    void set_logger(LogLevelFn level, LogFn log) { log_level_ = level, log_ = log; }
    bool logs(int level) const { return log_level_ && log_ && log_level_() >= level; }
    void log(int level, const std::string &message) const {
        if (logs(level)) log_(level, message.c_str());
    }
    using ReserveTagsFn = int (*)(void *ctx, int count);
    void set_tag_reserver(ReserveTagsFn fn, void *ctx) { reserve_fn_ = fn, reserve_ctx_ = ctx; }
    int reserve_tags(int count) {
        if (reserve_fn_) return reserve_fn_(reserve_ctx_, count);
        const int first = next_tag_;
        next_tag_ -= count;
        return first;
    }
    TreeCache &trees() { return *trees_; }
    // Several Comms of one process may share one cache of the same
    // communicator's trees (the simulator runs every rank in one process:
    // a tree per rank would cost memory quadratic in the ranks). Call before
    // the first collective.
    void share_trees(std::shared_ptr<TreeCache> trees) { trees_ = std::move(trees); }
    // Where the ranks are (multi-level trees; inter-node counters). Call
    // before the first collective.
    void set_topology(Topology topology) { trees_ = std::make_shared<TreeCache>(std::move(topology)); }
    const Topology &topology() const { return trees_->topology(); }
    int nodes() const { return trees_->nodes(); }
    bool nodes_in_blocks() const { return trees_->nodes_in_blocks(); }
    bool is_remote(int peer) const { return !topology().same_node(rank_, peer); }

    // Segments and bytes this rank sent to other nodes (added once per call).
    void count_internode(uint64_t segments, uint64_t bytes) {
        internode_segments_.fetch_add(segments, std::memory_order_relaxed);
        internode_bytes_.fetch_add(bytes, std::memory_order_relaxed);
        count(Counter::internode_segments, segments);
        count(Counter::internode_bytes, bytes);
    }
    uint64_t internode_segments() const { return internode_segments_.load(std::memory_order_relaxed); }
    uint64_t internode_bytes() const { return internode_bytes_.load(std::memory_order_relaxed); }
    BufferPool &pool() { return pool_; }
    // Finished schedules kept for the next calls (new_schedule()).
    ScheduleCache &schedules() { return schedules_; }
    // The device queue and pinned staging pool, made at the first device
    // buffer (collectives on one communicator start one at a time, in one
    // order on all ranks, as MPI requires). nullptr if the device cannot be
    // used; *error then says why.
    DeviceState *device(int *error) {
        if (!device_ && device_error_ == 0) device_error_ = DeviceState::create(&device_);
        *error = device_error_;
        return device_.get();
    }
    // Private copies of detached calls; its cap bounds what detaching holds.
    BufferPool &detach_pool() { return detach_pool_; }
    // This rank's memory of late peers (late_peers.h).
    LatePeers &late_peers() { return late_peers_; }
    // Whether a watching rank copies at once in this call (LatePeers::copy_now).
    bool copies_for_late_peers() {
        return late_peers_.copy_now([this] {
            if (progress_) progress_();
        });
    }
    // Advances the transports until `bytes` fit in the detach pool, or while
    // calls that hold its buffers are still in flight (they free room when
    // they finish). Returns whether they fit.
    bool wait_for_detach_room(size_t bytes) {
        if (bytes > detach_pool_.max_bytes()) return false;
        if (detach_pool_.has_room(bytes)) return true;
        count(Counter::detach_waits, 1);
        while (!detach_pool_.has_room(bytes) && progress_ && detach_pool_.bytes_lent() > 0) progress_();
        return detach_pool_.has_room(bytes);
    }

private:
    std::unique_ptr<Transport> transport_;
    int rank_;
    int size_;
    uint32_t id_;  // Open MPI's context id; names the communicator in traces
    std::atomic<uint32_t> calls_{0};
    std::atomic<uint64_t> internode_segments_{0};
    std::atomic<uint64_t> internode_bytes_{0};
    std::shared_ptr<TreeCache> trees_;
    BufferPool pool_;
    BufferPool detach_pool_;
    LatePeers late_peers_;
    ScheduleCache schedules_;
    ProgressFn progress_;
    ReserveTagsFn reserve_fn_ = nullptr;
    LogLevelFn log_level_ = nullptr;
    LogFn log_ = nullptr;
    void *reserve_ctx_ = nullptr;
    int next_tag_ = -1000;  // own tags, below Open MPI's blocking collective tags
    int device_error_ = 0;
    std::unique_ptr<DeviceState> device_;  // last: freed first, while the pools still exist
};

}  // namespace adapt2

#endif
