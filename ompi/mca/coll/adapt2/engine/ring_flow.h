// Allreduce around a ring: reduce-scatter, then allgather, pipelined by
// segments, driven only by data.
//
// The message is cut into p blocks and each block into k segments. Messages
// to the right neighbour are numbered m = step * k + segment over the
// 2(p-1) steps (p-1 reduce-scatter steps, then p-1 allgather steps), and the
// left neighbour's messages likewise. Message m can go as soon as message
// m - k from the left has been combined (reduce-scatter) or has landed
// (allgather), since both concern the same block one step later; the first k
// go at once. So a slow neighbour delays only the segments that need it.
// Each block is combined in ring order, which is fixed: the result does not
// depend on arrival order. Commutative ops and contiguous buffers only.
#ifndef ADAPT2_ENGINE_RING_FLOW_H
#define ADAPT2_ENGINE_RING_FLOW_H

#include <vector>

#include "buffer_pool.h"
#include "completion_window.h"
#include "flow.h"
#include "staging_ring.h"
#include "user_data.h"

namespace adapt2 {

struct RingArgs {
    int rank = 0;
    int size = 1;
    int tag = 0;            // first of tags_needed(send_window) tags, counting down
    const char *own = nullptr;  // contiguous contribution (nullptr: in place in result)
    char *result = nullptr;     // contiguous, every rank
    size_t bytes = 0;
    adapt2_reduction_t op{};
    size_t segment_bytes = 0;
    int recv_window = 4;
    int send_window = 2;
};

class RingFlow final : public Flow {
public:
    static int tags_needed(int send_window);

    RingFlow(Schedule &schedule, int id, const RingArgs &args, BufferPool &pool);

    int max_ops() const override { return recv_window_ + send_window_; }
    void start() override;
    void on_complete(Op &op) override;
    bool has_pending_work() const override;
    void finish() override;

private:
    struct Piece {  // the part of the result one message carries
        size_t offset;
        size_t bytes;
    };
    Piece piece(int message, bool to_right) const;
    bool reduce_scatter(int message) const { return message < (size_ - 1) * k_; }
    void post_receives();
    void post_sends();
    void on_received(int message);

    int rank_, size_;
    int left_, right_;
    int tag_;
    char *result_;
    adapt2_reduction_t op_;
    int recv_window_, send_window_;
    size_t block_elems_, extra_elems_;  // blocks of block_elems_ (+1 for the first extra_elems_)
    size_t segment_bytes_;
    int k_ = 1;                         // segments per block
    int messages_ = 0;                  // each way: 2 (p-1) k
    BufferPool &pool_;
    StagingRing staging_;               // reduce-scatter receives land here first
    int next_recv_ = 0, next_send_ = 0;
    CompletionWindow landed_;           // messages from the left combined or in place
    CompletionWindow sent_;             // messages to the right completed
};

}  // namespace adapt2

#endif
