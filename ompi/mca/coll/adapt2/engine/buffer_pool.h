// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Staging buffers for data that cannot travel straight from/to the user
// buffer (non-contiguous datatypes now; reductions and GPU staging later).
//
// One pool per communicator. Its cap bounds the bytes it hands out. Free
// buffers are cached per size, so steady-state collectives allocate nothing.
// A schedule borrows what it needs once when it starts, never per segment.
#ifndef ADAPT2_ENGINE_BUFFER_POOL_H
#define ADAPT2_ENGINE_BUFFER_POOL_H

#include <cstddef>
#include <map>
#include <memory_resource>
#include <mutex>
#include <vector>

namespace adapt2 {

// Where a pool's buffers come from: plain host memory by default; pinned host
// or device memory for GPU staging (device/device.h). alloc returns nullptr
// on failure (see borrow()).
struct BufferAllocator {
    void *(*alloc)(void *ctx, size_t bytes);
    void (*free)(void *ctx, void *p);
    void *ctx;
};
BufferAllocator host_allocator();  // 64-byte aligned malloc/free

class BufferPool {
public:
    explicit BufferPool(size_t max_bytes, BufferAllocator allocator = host_allocator())
        : max_bytes_(max_bytes), allocator_(allocator) {}
    ~BufferPool();
    BufferPool(const BufferPool &) = delete;
    BufferPool &operator=(const BufferPool &) = delete;

    using Buffers = std::pmr::vector<char *>;

    // Up to `want` buffers of `bytes` each, as many as the cap allows; at least
    // `must` even past the cap, so every schedule can make progress (counted
    // as overdrafts). Fewer where the allocator runs out; std::bad_alloc (and
    // nothing lent) where it cannot even give `must`. The list lives in
    // `memory` (a flow passes its call's memory: no heap allocation).
    Buffers borrow(size_t bytes, int want, int must = 1,
                   std::pmr::memory_resource *memory = std::pmr::get_default_resource());
    // One buffer, even past the cap (std::bad_alloc where the allocator fails).
    char *borrow_one(size_t bytes);
    // One buffer within the cap, or nullptr.
    char *borrow_within_cap(size_t bytes);
    void give_back(size_t bytes, char *const *buffers, size_t count);
    void give_back(size_t bytes, const Buffers &buffers) { give_back(bytes, buffers.data(), buffers.size()); }
    void give_back_one(size_t bytes, char *buffer) { give_back(bytes, &buffer, 1); }

    size_t bytes_lent() const;
    bool has_room(size_t bytes) const;  // whether `bytes` more stay within the cap
    size_t peak_bytes_lent() const;     // the most ever lent at once
    size_t max_bytes() const { return max_bytes_; }
    size_t overdrafts() const;

private:
    int borrow_into(size_t bytes, int want, int must, char **out);
    char *take(size_t bytes, std::vector<char *> &cached);
    void put_back(size_t bytes, char *buffer, std::vector<char *> &cached);
    void release(char *buffer) { allocator_.free(allocator_.ctx, buffer); }

    const size_t max_bytes_;
    const BufferAllocator allocator_;
    mutable std::mutex lock_;  // per borrow/give_back, i.e. per collective call
    size_t lent_ = 0;          // bytes out now, overdrafts included
    size_t peak_ = 0;
    size_t cached_ = 0;  // bytes in free lists
    size_t overdrafts_ = 0;
    std::map<size_t, std::vector<char *>> free_;  // by buffer size
};

}  // namespace adapt2

#endif
