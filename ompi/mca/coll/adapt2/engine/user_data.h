// The user's buffer as a stream of packed bytes. Contiguous host data is used
// in place; anything else goes through the pack/unpack hooks (Open MPI's
// convertor in production, a strided fake in tests), or, on a GPU, through
// asynchronous copies that the flows post (Schedule::post_copy).
#ifndef ADAPT2_ENGINE_USER_DATA_H
#define ADAPT2_ENGINE_USER_DATA_H

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
    int pack(size_t offset, size_t len, char *dst) const { return b_.pack(b_.packer, offset, len, dst); }
    int unpack(size_t offset, size_t len, const char *src) const {
        return b_.unpack(b_.packer, offset, len, src);
    }

private:
    adapt2_buffer_t b_;
};

}  // namespace adapt2

#endif
