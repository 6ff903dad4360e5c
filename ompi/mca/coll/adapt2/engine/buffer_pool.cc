#include "buffer_pool.h"

#include <cstdlib>
#include <new>

#include "counters.h"

namespace adapt2 {
namespace {
constexpr size_t kAlignment = 64;  // cache line; also good enough for SIMD reductions

char *allocate(size_t bytes) {
    size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
    void *p = std::aligned_alloc(kAlignment, rounded);
    if (!p) throw std::bad_alloc();
    return static_cast<char *>(p);
}
}  // namespace

BufferPool::~BufferPool() {
    for (auto &entry : free_) {
        for (char *b : entry.second) std::free(b);
    }
}

std::vector<char *> BufferPool::borrow(size_t bytes, int want, int must) {
    std::vector<char *> out;
    std::lock_guard<std::mutex> guard(lock_);
    auto &cached = free_[bytes];
    for (int i = 0; i < want; ++i) {
        bool over_cap = lent_ + bytes > max_bytes_;
        if (over_cap && static_cast<int>(out.size()) >= must) break;
        if (over_cap) {
            ++overdrafts_;
            count(Counter::pool_overdrafts, 1);
        }
        if (!cached.empty()) {
            out.push_back(cached.back());
            cached.pop_back();
            cached_ -= bytes;
        } else {
            // Make room by dropping cached buffers of other sizes first.
            for (auto it = free_.begin(); cached_ + lent_ + bytes > max_bytes_ && it != free_.end(); ++it) {
                while (!it->second.empty() && cached_ + lent_ + bytes > max_bytes_) {
                    std::free(it->second.back());
                    it->second.pop_back();
                    cached_ -= it->first;
                }
            }
            out.push_back(allocate(bytes));
        }
        lent_ += bytes;
    }
    peak_ = lent_ > peak_ ? lent_ : peak_;
    return out;
}

void BufferPool::give_back(size_t bytes, const std::vector<char *> &buffers) {
    std::lock_guard<std::mutex> guard(lock_);
    auto &cached = free_[bytes];
    for (char *b : buffers) {
        lent_ -= bytes;
        if (cached_ + lent_ + bytes <= max_bytes_) {
            cached.push_back(b);
            cached_ += bytes;
        } else {
            std::free(b);  // returned overdraft: do not keep it
        }
    }
}

size_t BufferPool::bytes_lent() const {
    std::lock_guard<std::mutex> guard(lock_);
    return lent_;
}

bool BufferPool::has_room(size_t bytes) const {
    std::lock_guard<std::mutex> guard(lock_);
    return lent_ + bytes <= max_bytes_;
}

size_t BufferPool::peak_bytes_lent() const {
    std::lock_guard<std::mutex> guard(lock_);
    return peak_;
}

size_t BufferPool::overdrafts() const {
    std::lock_guard<std::mutex> guard(lock_);
    return overdrafts_;
}

}  // namespace adapt2
