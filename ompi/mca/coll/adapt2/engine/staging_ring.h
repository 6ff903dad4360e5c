// Staging slots for consecutive segments: segment s lives in slot s % size
// while it is held. Segments are claimed in order and a slot is reused only
// after every user of its previous segment has let go, so at most size()
// segments are staged at once and memory stays bounded.
#ifndef ADAPT2_ENGINE_STAGING_RING_H
#define ADAPT2_ENGINE_STAGING_RING_H

#include <vector>

namespace adapt2 {

class StagingRing {
public:
    void assign(std::vector<char *> buffers) {
        buffers_ = std::move(buffers);
        users_.assign(buffers_.size(), 0);
    }
    const std::vector<char *> &buffers() const { return buffers_; }
    int size() const { return static_cast<int>(buffers_.size()); }

    // The next segment to claim, and whether a slot is free for it.
    int next() const { return claimed_; }
    bool can_claim() const { return claimed_ < oldest_ + size(); }
    // Claims the next segment's slot for `users` holders; returns its memory.
    char *claim(int users) {
        int slot = claimed_++ % size();
        users_[slot] = users;
        return buffers_[slot];
    }
    bool claimed(int segment) const { return segment < claimed_; }
    char *slot(int segment) const { return buffers_[segment % size()]; }

    void release(int segment) {
        --users_[segment % size()];
        while (oldest_ < claimed_ && users_[oldest_ % size()] == 0) ++oldest_;
    }

private:
    std::vector<char *> buffers_;
    std::vector<int> users_;
    int oldest_ = 0;   // first segment still holding a slot
    int claimed_ = 0;  // segments [0, claimed_) have been claimed
};

}  // namespace adapt2

#endif
