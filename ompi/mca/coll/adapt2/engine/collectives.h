// Entry points of the engine's collectives: plan the call, build its
// schedule, start it. Used by the C bridge, the unit tests and the simulator.
#ifndef ADAPT2_ENGINE_COLLECTIVES_H
#define ADAPT2_ENGINE_COLLECTIVES_H

#include "../adapt2_bridge.h"
#include "comm.h"
#include "schedule.h"

namespace adapt2 {

// Returns 0 with `done` called exactly once later (or before returning), or
// an error with `done` never called.
int start_bcast(Comm &comm, const adapt2_buffer_t &data, int root, int tag,
                const adapt2_bcast_settings_t &settings, DoneFn done, void *done_ctx);

}  // namespace adapt2

#endif
