// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
#include "network.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace adapt2::sim {

namespace {
// Event.arg of a completion: completer id, whether a receive, whether it
// crossed nodes (which overhead the receiver pays).
int pack_arg(int completer, bool is_recv, bool inter) { return completer << 2 | int(is_recv) << 1 | int(inter); }
}  // namespace

void Network::Queue::push(Slot *s) {
    s->next = nullptr;
    if (tail) {
        tail->next = s;
    } else {
        head = s;
    }
    tail = s;
}

Network::Slot *Network::Queue::pop() {
    Slot *s = head;
    head = s->next;
    if (!head) tail = nullptr;
    return s;
}

size_t Network::KeyHash::operator()(const Key &k) const {
    uint64_t h = uint64_t(uint32_t(k.src)) * 0x9e3779b97f4a7c15ull ^ uint64_t(uint32_t(k.dst)) * 0xc2b2ae3d27d4eb4full ^
                 uint64_t(uint32_t(k.tag)) * 0x165667b19e3779f9ull;
    return size_t(h ^ (h >> 29));
}

Network::Network(int ranks, const Machine &machine)
    : machine_(machine),
      clock_(ranks, 0.0),
      out_(ranks, 0.0),
      in_(ranks, 0.0),
      mem_(machine.mem_G > 0 ? ranks : 0, 0.0),
      out_tb_(machine.intra.burst > 0 || machine.inter.burst > 0 ? ranks : 0,
              Bucket{std::max(machine.intra.burst, machine.inter.burst), 0}),
      in_tb_(out_tb_),
      cpu_factor_(machine.cores_shared(ranks) ? machine.cpu_factor(ranks) : 1.0) {
    get_sink_.net = this;
    // Scheduling delay of oversubscribed cores: every message, both links.
    const double wake = machine.wake_us * (cpu_factor_ - 1);
    machine_.intra.L += wake;
    machine_.inter.L += wake;
}

void Network::memory_work(int rank, double us, size_t bytes) {
    const double t = clock_[rank];
    double d = us * stretch(rank);
    if (machine_.mem_G > 0 && bytes) {
        // The ranks that share this memory: the host's with host_cores, else the node's.
        const int p = ranks(), k = std::max(1, machine_.ranks_per_node);
        const int first = machine_.host_cores > 0 ? 0 : rank / k * k;
        const int last = machine_.host_cores > 0 ? p : std::min(p, first + k);
        int c = 1;
        for (int j = first; j < last; ++j) c += j != rank && mem_[j] > t;
        if (c > 1) d = std::max(d, c * double(bytes) * machine_.mem_G);  // alone: as fast as its core
        mem_[rank] = t + d;
    }
    clock_[rank] = t + d;
}

// Fixed: ranks over cores. By busy ranks: the ranks of the node (and with
// host_cores, of the host) whose CPU is busy past the moment `rank` starts
// its work, this one included, over the cores (at least 1).
double Network::stretch(int rank) const {
    if (cpu_factor_ == 1.0 || !machine_.share_busy) return cpu_factor_;
    const double t = clock_[rank];
    const int p = ranks(), k = std::max(1, machine_.ranks_per_node);
    double f = 1;
    if (machine_.oversubscribed(p)) {
        const int first = rank / k * k, last = std::min(p, first + k);
        int busy = 1;
        for (int j = first; j < last; ++j) busy += j != rank && clock_[j] > t;
        f = std::max(f, double(busy) / std::max(1, machine_.cores_per_node));
    }
    if (machine_.host_cores > 0 && p > machine_.host_cores) {
        int busy = 1;
        for (int j = 0; j < p; ++j) busy += j != rank && clock_[j] > t;
        f = std::max(f, double(busy) / machine_.host_cores);
    }
    return f;
}

Network::~Network() {
    for (Slot *s : all_slots_) {
        std::free(s->eager_copy);
        delete s;
    }
    for (Get *g : all_gets_) delete g;
}

int Network::add_completer(Completer *who) {
    completers_.push_back(who);
    return static_cast<int>(completers_.size()) - 1;
}

Network::Slot *Network::new_slot() {
    if (free_slots_.empty()) {
        all_slots_.push_back(new Slot);
        return all_slots_.back();
    }
    Slot *s = free_slots_.back();
    free_slots_.pop_back();
    return s;
}

void Network::free_slot(Slot *s) {
    std::free(s->eager_copy);
    *s = Slot{};
    free_slots_.push_back(s);
}

// Puts `bytes` on src's port once it is free and `ready` has come; returns
// when the last byte leaves. Also books the receiver's port: returns via
// `land` below.
double Network::inject(int src, int dst, double ready, size_t bytes) {
    const LinkParams &l = machine_.link(src, dst);
    const double start = std::max(ready, out_[src]);
    const double wire = l.burst > 0 ? shaped(out_tb_[src], l, start, bytes) : double(bytes) * l.G;
    out_[src] = start + std::max(l.g, wire);
    ++messages_;
    bytes_ += bytes;
    if (machine_.node_of(src) != machine_.node_of(dst)) inter_bytes_ += bytes;
    return start + wire;
}

// When data that started to leave src at `sent` and left it at `left`
// has landed at dst: L after it left, and no sooner than dst's receiving port
// lets it in (serialized, shaped on a link with a token bucket).
double Network::land(int src, int dst, double sent, double left, size_t bytes) {
    const LinkParams &l = machine_.link(src, dst);
    double at;
    if (l.burst > 0) {
        const double start = std::max(sent + l.L, in_[dst]);
        at = std::max(left + l.L, start + shaped(in_tb_[dst], l, start, bytes));
    } else {
        at = std::max(left + l.L, in_[dst] + double(bytes) * l.G);
    }
    in_[dst] = at;
    return at;
}

// How long `bytes` take through a port with a token bucket from `start`: at
// G0 while tokens last, then at G. Tokens refill at 1/G per us up to burst.
double Network::shaped(Bucket &b, const LinkParams &l, double start, size_t bytes) {
    if (start > b.t) {
        b.tokens = std::min(l.burst, b.tokens + (start - b.t) / l.G);
        b.t = start;
    }
    const double n = double(bytes), fast = std::min(n, b.tokens);
    const double d = fast * l.G0 + (n - fast) * l.G;
    b.tokens -= fast;
    b.t = std::max(b.t, start + d);
    return d;
}

void Network::send(int src, int dst, int tag, const void *buf, size_t bytes, int completer, void *cookie) {
    if (dst < 0 || dst >= ranks()) throw std::out_of_range("send to a rank that does not exist");
    const LinkParams &l = machine_.link(src, dst);
    const bool inter = machine_.node_of(src) != machine_.node_of(dst);
    work(src, l.o);
    Slot *s = new_slot();
    s->bytes = bytes;
    s->data = static_cast<const char *>(buf);
    s->eager = bytes <= machine_.eager(l);
    s->completer = completer;
    s->cookie = cookie;
    if (s->eager) {
        const double sent = std::max(clock_[src], out_[src]);
        const double left = inject(src, dst, clock_[src], bytes);
        s->time = land(src, dst, sent, left, bytes);
        if (move_data_ && bytes) {
            s->eager_copy = static_cast<char *>(std::malloc(bytes));
            std::memcpy(s->eager_copy, buf, bytes);
            s->data = s->eager_copy;
        }
        complete_at(left, src, completer, cookie, false, inter);  // buffered: the sender is free
    } else {
        s->time = clock_[src] + l.L;  // the envelope (rendezvous request)
    }
    Key key{src, dst, tag};
    channels_[key].sends.push(s);
    try_match(key);
}

void Network::recv(int dst, int src, int tag, void *buf, size_t bytes, int completer, void *cookie) {
    if (src < 0 || src >= ranks()) throw std::out_of_range("receive from a rank that does not exist");
    Slot *s = new_slot();
    s->time = clock_[dst];
    s->dst = static_cast<char *>(buf);
    s->bytes = bytes;
    s->completer = completer;
    s->cookie = cookie;
    Key key{src, dst, tag};
    channels_[key].recvs.push(s);
    try_match(key);
}

void Network::try_match(const Key &key) {
    auto it = channels_.find(key);
    Channel &c = it->second;
    while (c.sends.head && c.recvs.head) {
        Slot *send = c.sends.pop();
        Slot *recv = c.recvs.pop();
        transfer(key, send, recv);
        free_slot(send);
        free_slot(recv);
    }
    if (!c.sends.head && !c.recvs.head) channels_.erase(it);
}

// A send meets its receive: the data lands (eager: it already has, when the
// envelope did; rendezvous: it is pulled now).
void Network::transfer(const Key &key, Slot *send, Slot *recv) {
    if (send->bytes != recv->bytes) throw std::runtime_error("simulated message size mismatch");
    if (observer_) observer_->matched(key.src, key.dst, key.tag, send->bytes);
    const LinkParams &l = machine_.link(key.src, key.dst);
    const bool inter = machine_.node_of(key.src) != machine_.node_of(key.dst);
    const double matched = std::max(send->time, recv->time);
    double landed = matched;
    if (!send->eager && l.get) {  // the receiver copies when its CPU gets to it
        Get *g;
        if (free_gets_.empty()) {
            all_gets_.push_back(g = new Get);
        } else {
            g = free_gets_.back();
            free_gets_.pop_back();
        }
        *g = Get{key.src, key.dst, send->bytes, send->completer, recv->completer, send->cookie, recv->cookie, inter};
        ++messages_;
        bytes_ += send->bytes;
        if (inter) inter_bytes_ += send->bytes;
        if (move_data_ && send->bytes) std::memcpy(recv->dst, send->data, send->bytes);
        queue_.push(matched, &get_sink_, g, key.dst, 0);
        return;
    }
    if (!send->eager) {
        const double sent = std::max(matched, out_[key.src]);
        const double left = inject(key.src, key.dst, matched, send->bytes);
        landed = land(key.src, key.dst, sent, left, send->bytes);
        complete_at(left, key.src, send->completer, send->cookie, false, inter);
    }
    if (move_data_ && send->bytes) std::memcpy(recv->dst, send->data, send->bytes);
    complete_at(landed, key.dst, recv->completer, recv->cookie, true, inter);
}

void Network::complete_at(double time, int rank, int completer, void *cookie, bool is_recv, bool inter) {
    queue_.push(time, this, cookie, rank, pack_arg(completer, is_recv, inter));
}

void Network::on_event(const Event &e) {
    const bool is_recv = e.arg >> 1 & 1, inter = e.arg & 1;
    if (is_recv) work(e.rank, inter ? machine_.inter.o : machine_.intra.o);
    completers_[e.arg >> 2]->completed(e.rank, e.cookie, is_recv);
}

// A single-copy transfer on the receiver's CPU: the copy, then the receive's
// overhead and completion; the sender hears of it L later.
void Network::copy_done(const Event &e) {
    Get g = *static_cast<Get *>(e.cookie);
    free_gets_.push_back(static_cast<Get *>(e.cookie));
    const LinkParams &l = machine_.link(g.src, g.dst);
    memory_work(g.dst, double(g.bytes) * l.G, g.bytes);
    work(g.dst, l.o);
    complete_at(clock_[g.dst] + l.L, g.src, g.send_completer, g.send_cookie, false, g.inter);
    completers_[g.recv_completer]->completed(g.dst, g.recv_cookie, true);
}

double Network::run() {
    double last = 0;
    while (!queue_.empty()) {
        const Event e = queue_.pop();
        last = e.time;
        // The CPU takes the event when it is due or once free: after a
        // handler, clock_ is when that rank's CPU is free again.
        clock_[e.rank] = std::max(e.time, clock_[e.rank]);
        current_ = e.rank;
        e.sink->on_event(e);
        current_ = -1;
    }
    return last;
}

size_t Network::unmatched() const {
    size_t n = 0;
    for (const auto &kv : channels_) {
        for (Slot *s = kv.second.sends.head; s; s = s->next) ++n;
        for (Slot *s = kv.second.recvs.head; s; s = s->next) ++n;
    }
    return n;
}

}  // namespace adapt2::sim
