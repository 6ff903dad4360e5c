// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// The memory of one call: its flows and their per-peer and per-segment
// arrays (std::pmr containers) are carved out of one block that the
// schedule keeps from call to call. Nothing is freed piece by piece; reset()
// drops it all at once when the call is over.
//
// A call that needs more than the block gets the rest from the heap, and the
// next reset() grows the block to what that call used: after the first call
// of each shape, calls allocate nothing (the latency path's "no heap
// allocation per call").
#ifndef ADAPT2_ENGINE_CALL_ARENA_H
#define ADAPT2_ENGINE_CALL_ARENA_H

#include <cstddef>
#include <memory_resource>

namespace adapt2 {

class CallArena final : public std::pmr::memory_resource {
public:
    CallArena() = default;
    CallArena(const CallArena &) = delete;
    CallArena &operator=(const CallArena &) = delete;
    ~CallArena() override;

    // Everything handed out since the last reset() becomes invalid.
    void reset();
    size_t capacity() const { return capacity_; }
    // Bytes the current call took (from the block and the heap).
    size_t used() const { return needed_; }

private:
    struct Overflow {  // a heap chunk beyond the block; freed at reset()
        Overflow *next;
    };
    void *do_allocate(size_t bytes, size_t alignment) override;
    void do_deallocate(void *, size_t, size_t) override {}  // all at once, at reset()
    bool do_is_equal(const std::pmr::memory_resource &other) const noexcept override { return this == &other; }
    void free_overflow();

    unsigned char *block_ = nullptr;
    size_t capacity_ = 0;
    size_t used_ = 0;    // of the block
    size_t needed_ = 0;  // by this call, block and heap together (alignment included)
    Overflow *overflow_ = nullptr;
};

}  // namespace adapt2

#endif
