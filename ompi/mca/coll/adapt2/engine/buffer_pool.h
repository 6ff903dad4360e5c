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
#include <mutex>
#include <vector>

namespace adapt2 {

class BufferPool {
public:
    explicit BufferPool(size_t max_bytes) : max_bytes_(max_bytes) {}
    ~BufferPool();
    BufferPool(const BufferPool &) = delete;
    BufferPool &operator=(const BufferPool &) = delete;

    // Up to `want` buffers of `bytes` each, as many as the cap allows; at least
    // `must` even past the cap, so every schedule can make progress (counted
    // as overdrafts).
    std::vector<char *> borrow(size_t bytes, int want, int must = 1);
    void give_back(size_t bytes, const std::vector<char *> &buffers);

    size_t bytes_lent() const;
    bool has_room(size_t bytes) const;  // whether `bytes` more stay within the cap
    size_t peak_bytes_lent() const;  // the most ever lent at once
    size_t max_bytes() const { return max_bytes_; }
    size_t overdrafts() const;

private:
    const size_t max_bytes_;
    mutable std::mutex lock_;  // per borrow/give_back, i.e. per collective call
    size_t lent_ = 0;          // bytes out now, overdrafts included
    size_t peak_ = 0;
    size_t cached_ = 0;        // bytes in free lists
    size_t overdrafts_ = 0;
    std::map<size_t, std::vector<char *>> free_;  // by buffer size
};

}  // namespace adapt2

#endif
