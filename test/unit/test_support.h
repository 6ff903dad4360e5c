// Helpers shared by the engine's unit tests: a non-contiguous layout for the
// pack/unpack hooks, a `done` recorder, and the completion orders to try.
#ifndef ADAPT2_TEST_SUPPORT_H
#define ADAPT2_TEST_SUPPORT_H

#include <vector>

#include "../../ompi/mca/coll/adapt2/adapt2_bridge.h"
#include "fake_transport.h"

namespace adapt2::test {

// A non-contiguous layout: packed byte i lives at memory[2 * i].
struct Strided {
    char *base;
};
inline int strided_pack(void *p, size_t offset, size_t len, void *dst) {
    auto *s = static_cast<Strided *>(p);
    for (size_t i = 0; i < len; ++i) static_cast<char *>(dst)[i] = s->base[2 * (offset + i)];
    return 0;
}
inline int strided_unpack(void *p, size_t offset, size_t len, const void *src) {
    auto *s = static_cast<Strided *>(p);
    for (size_t i = 0; i < len; ++i) s->base[2 * (offset + i)] = static_cast<const char *>(src)[i];
    return 0;
}
inline adapt2_buffer_t contiguous_buffer(char *p, size_t bytes) { return {p, bytes, nullptr, nullptr, nullptr, 0}; }
inline adapt2_buffer_t strided_buffer(Strided *s, size_t bytes) {
    return {nullptr, bytes, s, strided_pack, strided_unpack, 0};
}

struct Done {
    int calls = 0;
    int status = 0;
};
inline void on_done(void *ctx, int status) {
    auto *d = static_cast<Done *>(ctx);
    ++d->calls;
    d->status = status;
}

// Random orders (odd seeds also let pending sends overtake each other, as
// pml ucx does, with 64-byte and larger messages pending until matched),
// then newest-first, then everything inline and eager.
inline std::vector<NetworkOptions> completion_orders(int random_seeds) {
    std::vector<NetworkOptions> out;
    for (int s = 1; s <= random_seeds; ++s) {
        bool overtake = s % 2 == 1;
        out.push_back({Order::random, static_cast<uint64_t>(s), 0.3, overtake ? 48u : 64u, overtake});
    }
    out.push_back({Order::lifo, 99, 0.0, 0, true});
    out.push_back({Order::fifo, 98, 1.0, 1 << 20, false});
    return out;
}

}  // namespace adapt2::test

#endif
