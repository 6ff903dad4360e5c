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
    : machine_(machine), clock_(ranks, 0.0), out_(ranks, 0.0), in_(ranks, 0.0) {}

Network::~Network() {
    for (Slot *s : all_slots_) {
        std::free(s->eager_copy);
        delete s;
    }
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
    const double wire = double(bytes) * l.G;
    out_[src] = start + std::max(l.g, wire);
    ++messages_;
    bytes_ += bytes;
    if (machine_.node_of(src) != machine_.node_of(dst)) inter_bytes_ += bytes;
    return start + wire;
}

void Network::send(int src, int dst, int tag, const void *buf, size_t bytes, int completer, void *cookie) {
    if (dst < 0 || dst >= ranks()) throw std::out_of_range("send to a rank that does not exist");
    const LinkParams &l = machine_.link(src, dst);
    const bool inter = machine_.node_of(src) != machine_.node_of(dst);
    clock_[src] += l.o * machine_.cpu_factor();
    Slot *s = new_slot();
    s->bytes = bytes;
    s->data = static_cast<const char *>(buf);
    s->eager = bytes <= machine_.eager_limit;
    s->completer = completer;
    s->cookie = cookie;
    if (s->eager) {
        const double left = inject(src, dst, clock_[src], bytes);
        double land = std::max(left + l.L, in_[dst] + double(bytes) * l.G);
        in_[dst] = land;
        s->time = land;
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
    double land = matched;
    if (!send->eager) {
        const double left = inject(key.src, key.dst, matched, send->bytes);
        land = std::max(left + l.L, in_[key.dst] + double(send->bytes) * l.G);
        in_[key.dst] = land;
        complete_at(left, key.src, send->completer, send->cookie, false, inter);
    }
    if (move_data_ && send->bytes) std::memcpy(recv->dst, send->data, send->bytes);
    complete_at(land, key.dst, recv->completer, recv->cookie, true, inter);
}

void Network::complete_at(double time, int rank, int completer, void *cookie, bool is_recv, bool inter) {
    queue_.push(time, this, cookie, rank, pack_arg(completer, is_recv, inter));
}

void Network::on_event(const Event &e) {
    const bool is_recv = e.arg >> 1 & 1, inter = e.arg & 1;
    if (is_recv) clock_[e.rank] += (inter ? machine_.inter.o : machine_.intra.o) * machine_.cpu_factor();
    completers_[e.arg >> 2]->completed(e.rank, e.cookie, is_recv);
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
