// Engine state of one communicator: who we are, how we reach the others, the
// trees we built and the staging pool. Created lazily by the first collective,
// destroyed with the communicator's coll module.
#ifndef ADAPT2_ENGINE_COMM_H
#define ADAPT2_ENGINE_COMM_H

#include <memory>

#include "buffer_pool.h"
#include "transport.h"
#include "tree_cache.h"

namespace adapt2 {

class Comm {
public:
    Comm(std::unique_ptr<Transport> transport, int rank, int size, size_t pool_max_bytes)
        : transport_(std::move(transport)), rank_(rank), size_(size), trees_(size), pool_(pool_max_bytes) {}

    int rank() const { return rank_; }
    int size() const { return size_; }
    Transport &transport() { return *transport_; }
    TreeCache &trees() { return trees_; }
    BufferPool &pool() { return pool_; }

private:
    std::unique_ptr<Transport> transport_;
    int rank_;
    int size_;
    TreeCache trees_;
    BufferPool pool_;
};

}  // namespace adapt2

#endif
