// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Staging slots for consecutive segments: segment s lives in slot s % size
// while it is held. Segments are claimed in order and a slot is reused only
// after every user of its previous segment has let go, so at most size()
// segments are staged at once and memory stays bounded.
//
// Slots come in blocks of consecutive memory (`per_block` slots of
// `slot_bytes`): a message of g segments that starts at a multiple of g, with
// g dividing per_block, lies in one block, so it is sent or received whole.
#ifndef ADAPT2_ENGINE_STAGING_RING_H
#define ADAPT2_ENGINE_STAGING_RING_H

#include <memory_resource>
#include <vector>

namespace adapt2 {

class StagingRing {
public:
    using Buffers = std::pmr::vector<char *>;
    // Its arrays live in `memory` (the call's, in a flow).
    explicit StagingRing(std::pmr::memory_resource *memory = std::pmr::get_default_resource())
        : buffers_(memory), users_(memory) {}

    // One slot per buffer.
    void assign(Buffers buffers) { assign(std::move(buffers), 1, 0); }
    void assign(Buffers blocks, int per_block, size_t slot_bytes) {
        buffers_ = std::move(blocks);
        per_block_ = per_block;
        slot_bytes_ = slot_bytes;
        users_.assign(buffers_.size() * per_block_, 0);
    }
    const Buffers &buffers() const { return buffers_; }
    size_t block_bytes() const { return slot_bytes_ * static_cast<size_t>(per_block_); }
    int size() const { return static_cast<int>(users_.size()); }

    // The next segment to claim, and whether slots are free for it and the
    // n - 1 after it.
    int next() const { return claimed_; }
    bool can_claim(int n = 1) const { return claimed_ + n <= oldest_ + size(); }
    // Claims the next `count` segments' slots for `users` holders each;
    // returns the first one's memory.
    char *claim(int users, int count = 1) {
        char *memory = slot(claimed_);
        for (int k = 0; k < count; ++k) users_[claimed_++ % size()] = users;
        return memory;
    }
    bool claimed(int segment) const { return segment < claimed_; }
    char *slot(int segment) const {
        const int i = segment % size();
        return buffers_[i / per_block_] + static_cast<size_t>(i % per_block_) * slot_bytes_;
    }

    void release(int segment) {
        --users_[segment % size()];
        while (oldest_ < claimed_ && users_[oldest_ % size()] == 0) ++oldest_;
    }

private:
    Buffers buffers_;  // blocks
    int per_block_ = 1;
    size_t slot_bytes_ = 0;
    std::pmr::vector<int> users_;  // per slot
    int oldest_ = 0;               // first segment still holding a slot
    int claimed_ = 0;              // segments [0, claimed_) have been claimed
};

}  // namespace adapt2

#endif
