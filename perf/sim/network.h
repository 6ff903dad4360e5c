// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// A discrete-event LogGP network with one CPU per rank.
//
// Every event is handled on the CPU of one rank: the handler starts when the
// event is due or when that CPU is free, whichever is later, and whatever it
// does (message overheads, combining, compute, noise) moves that rank's clock
// on. So a rank that computes or suffers noise handles its completions late,
// as a real process does that enters MPI only between its computations.
//
// Messages: a send costs the sender o of CPU when posted. Up to the eager
// limit it is injected at once (its port busy max(g, n*G)), lands L + n*G
// later and the send completes when it is injected. Larger messages wait for
// the matching receive (rendezvous: the envelope takes L, then the data is
// pulled: n*G + L) and the send completes when the data has left. A
// receive completes when its data has landed and costs the receiver o.
// On a link with `get` (single copy, see machine.h) the pull is a copy on the
// receiver's CPU instead: it starts once the envelope is matched and that CPU
// is free, takes n*G (slowed where cores are shared) and leaves both ports
// alone; the send completes L after the copy (the FIN message).
// Each rank's port serializes what it sends, and what it receives (so many
// children reporting to one parent queue at its port). Sends and receives of
// one (source, destination, tag) match in posting order, as in MPI.
//
// Nothing completes inside a post call: completions are events, so handlers
// never nest.
#ifndef ADAPT2_SIM_NETWORK_H
#define ADAPT2_SIM_NETWORK_H

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "event_queue.h"
#include "machine.h"

namespace adapt2::sim {

// Who is told that a posted operation completed; `cookie` is what was posted.
class Completer {
public:
    virtual ~Completer() = default;
    virtual void completed(int rank, void *cookie, bool is_recv) = 0;
};

// Tests watch every matched message.
class MessageObserver {
public:
    virtual ~MessageObserver() = default;
    virtual void matched(int src, int dst, int tag, size_t bytes) = 0;
};

class Network final : public EventSink {
public:
    Network(int ranks, const Machine &machine);
    ~Network() override;
    Network(const Network &) = delete;
    Network &operator=(const Network &) = delete;

    int ranks() const { return static_cast<int>(clock_.size()); }
    const Machine &machine() const { return machine_; }
    EventQueue &queue() { return queue_; }

    // Completers are registered once; posts name them by id.
    int add_completer(Completer *who);
    void send(int src, int dst, int tag, const void *buf, size_t bytes, int completer, void *cookie);
    void recv(int dst, int src, int tag, void *buf, size_t bytes, int completer, void *cookie);

    // The CPU of `rank`: its time inside the handler now running on it.
    double now(int rank) const { return clock_[rank]; }
    // CPU time of `us` on `rank`, from inside its handler, as it is (compute,
    // noise: wall time).
    void charge(int rank, double us) { clock_[rank] += us; }
    // CPU work of `us` on a core of its own (message overheads, copies,
    // combining): slower where the cores are shared (machine.h).
    void work(int rank, double us) { clock_[rank] += us * stretch(rank); }
    // CPU work that moves `bytes` through memory (copies, combining): as
    // work(), and no faster than the memory bandwidth left to it by the
    // other copies of its node (host) running when it starts (machine.h).
    void memory_work(int rank, double us, size_t bytes);
    // The rank whose handler is running (-1 between events).
    int current() const { return current_; }
    // An event for `sink`, handled on `rank`'s CPU at `time` or later.
    void at(int rank, double time, EventSink *sink, void *cookie = nullptr, int arg = 0) {
        queue_.push(time, sink, cookie, rank, arg);
    }
    // Handles events until none is left. Returns the time of the last one.
    double run();

    // Copy message data (tests); off, buffers are never touched.
    void set_move_data(bool on) { move_data_ = on; }
    void set_observer(MessageObserver *o) { observer_ = o; }

    // How much longer CPU work that `rank` starts now takes.
    double stretch(int rank) const;

    uint64_t messages() const { return messages_; }
    uint64_t bytes_moved() const { return bytes_; }
    uint64_t inter_node_bytes() const { return inter_bytes_; }
    // Events pushed; all of them handled once run() has returned (it empties the queue).
    uint64_t events() const { return queue_.pushed(); }
    size_t unmatched() const;

    void on_event(const Event &e) override;  // a transfer completed

private:
    // A send's envelope or a posted receive, waiting in a channel to match.
    struct Slot {
        Slot *next = nullptr;
        double time = 0;  // send: when envelope (eager: data) lands; recv: when posted
        const char *data = nullptr;
        char *eager_copy = nullptr;  // move_data: eager data, owned
        char *dst = nullptr;
        size_t bytes = 0;
        bool eager = false;
        int completer = 0;
        void *cookie = nullptr;
    };
    struct Queue {
        Slot *head = nullptr, *tail = nullptr;
        void push(Slot *s);
        Slot *pop();
    };
    struct Channel {
        Queue sends, recvs;
    };
    struct Key {
        int src, dst, tag;
        bool operator==(const Key &o) const { return src == o.src && dst == o.dst && tag == o.tag; }
    };
    struct KeyHash {
        size_t operator()(const Key &k) const;
    };

    // A single-copy rendezvous transfer, waiting for the receiver's CPU.
    struct Get {
        int src, dst;
        size_t bytes;
        int send_completer, recv_completer;
        void *send_cookie, *recv_cookie;
        bool inter;
    };
    struct GetSink final : EventSink {
        Network *net;
        void on_event(const Event &e) override { net->copy_done(e); }
    };
    void copy_done(const Event &e);

    Slot *new_slot();
    void free_slot(Slot *s);
    void try_match(const Key &key);
    void transfer(const Key &key, Slot *send, Slot *recv);
    double inject(int src, int dst, double ready, size_t bytes);
    double land(int src, int dst, double sent, double left, size_t bytes);
    // A token bucket (LinkParams::burst): tokens at time t.
    struct Bucket {
        double tokens = 0, t = 0;
    };
    double shaped(Bucket &b, const LinkParams &l, double start, size_t bytes);
    void complete_at(double time, int rank, int completer, void *cookie, bool is_recv, bool inter);

    Machine machine_;
    EventQueue queue_;
    std::vector<double> clock_;           // per rank: CPU time now (in a handler) or free from (between)
    std::vector<double> out_;             // per rank: send port free from
    std::vector<double> in_;              // per rank: receive port free from
    std::vector<double> mem_;             // per rank: its memory-bound work runs until
    std::vector<Bucket> out_tb_, in_tb_;  // per rank: token buckets of its ports (shaped links)
    std::vector<Completer *> completers_;
    std::unordered_map<Key, Channel, KeyHash> channels_;
    std::vector<Slot *> free_slots_;
    std::vector<Slot *> all_slots_;
    std::vector<Get *> free_gets_, all_gets_;
    GetSink get_sink_;
    double cpu_factor_ = 1;
    int current_ = -1;
    bool move_data_ = false;
    MessageObserver *observer_ = nullptr;
    uint64_t messages_ = 0, bytes_ = 0, inter_bytes_ = 0;
};

}  // namespace adapt2::sim

#endif
