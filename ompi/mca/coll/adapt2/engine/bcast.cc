#include "bcast_flow.h"
#include "collectives.h"
#include "counters.h"
#include "decision.h"
#include "schedule.h"

namespace adapt2 {

int start_bcast(Comm &comm, const adapt2_buffer_t &data, int root, int tag,
                const adapt2_bcast_settings_t &settings, DoneFn done, void *done_ctx) {
    BcastPlan plan = plan_bcast(settings, data.bytes, comm.size());
    BcastArgs args;
    args.rank = comm.rank();
    args.tag = tag;
    args.data = data;
    args.segment_bytes = plan.segment_bytes;
    args.recv_window = settings.recv_window;
    args.send_window = settings.send_window;
    auto *schedule = new Schedule(comm.transport(), done, done_ctx);
    schedule->set_trace(TraceColl::bcast, comm.id(), comm.next_call(), data.bytes, root);
    schedule->add_flow<BcastFlow>(args, comm.trees().get(plan.tree, root), comm.pool());
    count(Counter::bcast_calls, 1);
    schedule->start();  // from here on the schedule owns itself
    return 0;
}

}  // namespace adapt2
