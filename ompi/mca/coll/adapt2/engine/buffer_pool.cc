// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
#include "buffer_pool.h"

#include <cstdlib>
#include <new>

#include "counters.h"
#include "threads.h"

namespace adapt2 {
namespace {
constexpr size_t kAlignment = 64;  // cache line; also good enough for SIMD reductions

void *aligned_host_alloc(void *, size_t bytes) {
    size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
    return std::aligned_alloc(kAlignment, rounded);
}
void host_free(void *, void *p) { std::free(p); }
}  // namespace

BufferAllocator host_allocator() { return {aligned_host_alloc, host_free, nullptr}; }

BufferPool::~BufferPool() {
    for (auto &entry : free_) {
        for (char *b : entry.second) release(b);
    }
}

// A cached buffer of this size, or a new one once cached buffers of other
// sizes have made room under the cap. nullptr when the allocator fails.
char *BufferPool::take(size_t bytes, std::vector<char *> &cached) {
    if (!cached.empty()) {
        char *b = cached.back();
        cached.pop_back();
        cached_ -= bytes;
        return b;
    }
    for (auto it = free_.begin(); cached_ + lent_ + bytes > max_bytes_ && it != free_.end(); ++it) {
        while (!it->second.empty() && cached_ + lent_ + bytes > max_bytes_) {
            release(it->second.back());
            it->second.pop_back();
            cached_ -= it->first;
        }
    }
    return static_cast<char *>(allocator_.alloc(allocator_.ctx, bytes));
}

// Keeps a returned buffer while lent and cached bytes stay within the cap.
void BufferPool::put_back(size_t bytes, char *b, std::vector<char *> &cached) {
    lent_ -= bytes;
    if (cached_ + lent_ + bytes <= max_bytes_) {
        cached.push_back(b);
        cached_ += bytes;
    } else {
        release(b);  // returned overdraft: do not keep it
    }
}

// Fills out[0, n) and returns n.
int BufferPool::borrow_into(size_t bytes, int want, int must, char **out) {
    RaceGuard guard(lock_);
    auto &cached = free_[bytes];
    int n = 0;
    for (; n < want; ++n) {
        bool over_cap = lent_ + bytes > max_bytes_;
        if (over_cap && n >= must) break;
        char *b = take(bytes, cached);
        if (!b) {
            // An allocator at its limit (pinned memory is scarce) acts as the
            // cap; below `must` the call cannot run: undo and throw.
            if (n >= must) break;
            for (int i = 0; i < n; ++i) put_back(bytes, out[i], cached);
            throw std::bad_alloc();
        }
        if (over_cap) {
            ++overdrafts_;
            count(Counter::pool_overdrafts, 1);
        }
        out[n] = b;
        lent_ += bytes;
    }
    peak_ = lent_ > peak_ ? lent_ : peak_;
    return n;
}

BufferPool::Buffers BufferPool::borrow(size_t bytes, int want, int must, std::pmr::memory_resource *memory) {
    Buffers out(want > 0 ? static_cast<size_t>(want) : 0, nullptr, memory);
    out.resize(static_cast<size_t>(borrow_into(bytes, want, must, out.data())));
    return out;
}

char *BufferPool::borrow_one(size_t bytes) {
    char *b = nullptr;
    borrow_into(bytes, 1, 1, &b);
    return b;
}

char *BufferPool::borrow_within_cap(size_t bytes) {
    char *b = nullptr;
    borrow_into(bytes, 1, 0, &b);
    return b;
}

void BufferPool::give_back(size_t bytes, char *const *buffers, size_t count) {
    RaceGuard guard(lock_);
    auto &cached = free_[bytes];
    for (size_t i = 0; i < count; ++i) put_back(bytes, buffers[i], cached);
}

size_t BufferPool::bytes_lent() const {
    RaceGuard guard(lock_);
    return lent_;
}

bool BufferPool::has_room(size_t bytes) const {
    RaceGuard guard(lock_);
    return lent_ + bytes <= max_bytes_;
}

size_t BufferPool::peak_bytes_lent() const {
    RaceGuard guard(lock_);
    return peak_;
}

size_t BufferPool::overdrafts() const {
    RaceGuard guard(lock_);
    return overdrafts_;
}

}  // namespace adapt2
