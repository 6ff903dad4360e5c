// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
#include "call_arena.h"

#include <new>

namespace adapt2 {

namespace {

constexpr size_t kBlockAlign = 64;  // a cache line, and more than any object of a call asks for
constexpr size_t kHeader = 64;      // an overflow chunk's header, keeps its data 64-aligned

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

}  // namespace

CallArena::~CallArena() {
    free_overflow();
    ::operator delete(block_, std::align_val_t(kBlockAlign));
}

void CallArena::free_overflow() {
    while (overflow_) {
        Overflow *next = overflow_->next;
        ::operator delete(overflow_, std::align_val_t(kBlockAlign));
        overflow_ = next;
    }
}

void *CallArena::do_allocate(size_t bytes, size_t alignment) {
    if (alignment > kBlockAlign) throw std::bad_alloc();  // nothing in a call asks for more
    const size_t start = round_up(used_, alignment);
    needed_ = round_up(needed_, alignment) + bytes;
    if (start + bytes <= capacity_) {
        used_ = start + bytes;
        return block_ + start;
    }
    auto *chunk = static_cast<unsigned char *>(::operator new(kHeader + bytes, std::align_val_t(kBlockAlign)));
    auto *link = reinterpret_cast<Overflow *>(chunk);
    link->next = overflow_;
    overflow_ = link;
    return chunk + kHeader;
}

// A call that overflowed the block grows it to what the call needed, so the
// next call of that shape fits.
void CallArena::reset() {
    free_overflow();
    if (needed_ > capacity_) {
        const size_t grown = round_up(needed_, 1024);
        ::operator delete(block_, std::align_val_t(kBlockAlign));
        block_ = nullptr;
        capacity_ = 0;
        block_ = static_cast<unsigned char *>(::operator new(grown, std::align_val_t(kBlockAlign)));
        capacity_ = grown;
    }
    used_ = 0;
    needed_ = 0;
}

}  // namespace adapt2
