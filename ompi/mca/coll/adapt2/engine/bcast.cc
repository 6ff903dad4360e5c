#include "bcast_flow.h"
#include "collectives.h"
#include "counters.h"
#include "decision.h"
#include "detach.h"
#include "schedule.h"

namespace adapt2 {

int bcast_tags(const adapt2_bcast_settings_t &settings, size_t bytes, int comm_size) {
    BcastPlan plan = plan_bcast(settings, bytes, comm_size);
    return flow_tags(settings, Segments(bytes, plan.segment_bytes), bytes);
}

int start_bcast(Comm &comm, const adapt2_buffer_t &data, int root, int tag,
                const adapt2_bcast_settings_t &settings, DoneFn done, void *done_ctx, DoneFn finished) {
    BcastPlan plan = plan_bcast(settings, data.bytes, comm.size());
    auto tree = comm.trees().get(plan.tree, root);
    BcastArgs args;
    args.rank = comm.rank();
    args.tag = tag;
    args.data = data;
    args.segment_bytes = plan.segment_bytes;
    args.recv_window = settings.recv_window;
    args.send_window = settings.send_window;
    args.tag_block = flow_tags(settings, Segments(data.bytes, plan.segment_bytes), data.bytes);
    // Only a rank that passes data on has anything to detach from.
    if (may_detach(settings, data.bytes) && tree->children(comm.rank()).size() > 0) {
        args.copy = borrow_detach_copy(comm, settings, data.bytes);
        args.copy_pool = &comm.detach_pool();
    }
    auto *schedule = new Schedule(comm, done, done_ctx, finished);
    schedule->set_trace(TraceColl::bcast, comm.id(), comm.next_call(), data.bytes, root);
    schedule->add_flow<BcastFlow>(args, std::move(tree), comm.pool());
    count(Counter::bcast_calls, 1);
    schedule->start();  // from here on the schedule owns itself
    return 0;
}

}  // namespace adapt2
