// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// The user's buffer as a stream of packed bytes: where every flow's data comes
// from and goes to on the user's side. Contiguous host data is used in place
// or copied; anything else goes through the pack/unpack hooks (Open MPI's
// convertor in production, a strided fake in tests), or, on a GPU, through
// asynchronous copies that the flows post (Schedule::post_copy).
#ifndef ADAPT2_ENGINE_USER_DATA_H
#define ADAPT2_ENGINE_USER_DATA_H

#include <cstring>

#include "../adapt2_bridge.h"

namespace adapt2 {

class UserData {
public:
    explicit UserData(const adapt2_buffer_t &b) : b_(b) {}

    size_t bytes() const { return b_.bytes; }
    // Host memory the engine may read and write in place.
    bool contiguous() const { return (b_.contig != nullptr && !b_.on_device) || b_.bytes == 0; }
    bool on_device() const { return b_.on_device && b_.bytes > 0; }
    // Contiguous host data, or device data (for copies only).
    char *at(size_t offset) const { return b_.contig + offset; }
    int pack(size_t offset, size_t len, char *dst) const {
        return b_.pack(b_.packer, b_.stream_offset + offset, len, dst);
    }
    int unpack(size_t offset, size_t len, const char *src) const {
        return b_.unpack(b_.packer, b_.stream_offset + offset, len, src);
    }
    // Bytes [offset, offset + len) of the stream into `dst`, or from `src`
    // into the stream: a copy for contiguous host data (none where `src` is
    // already the place), else the convertor. 0, or the convertor's error.
    // Host data only: device data moves by the flows' device copies.
    int read(size_t offset, size_t len, char *dst) const {
        if (len == 0) return 0;
        if (!contiguous()) return pack(offset, len, dst);
        std::memmove(dst, at(offset), len);
        return 0;
    }
    int write(size_t offset, size_t len, const char *src) const {
        if (len == 0) return 0;
        if (!contiguous()) return unpack(offset, len, src);
        if (at(offset) != src) std::memmove(at(offset), src, len);
        return 0;
    }

private:
    adapt2_buffer_t b_;
};

// Bytes [from, from + bytes) of a user buffer's packed stream, at `to` in a
// flow's working buffer (or back): what the ring, Bruck, halving and
// recursive-doubling flows fill their buffers from and deliver to.
struct UserRange {
    adapt2_buffer_t user{};
    size_t from = 0;
    size_t to = 0;
    size_t bytes = 0;
};
// The range into `work` (0 or the convertor's error), and `bytes` of `src`
// out to the user's packed stream at `user_offset`.
inline int copy_into_work(const UserRange &r, char *work) {
    return UserData(r.user).read(r.from, r.bytes, work + r.to);
}
inline int copy_to_user(const UserRange &r, size_t user_offset, const char *src, size_t bytes) {
    return UserData(r.user).write(user_offset, bytes, src);
}

}  // namespace adapt2

#endif
