// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Entry points of the engine's collectives: plan the call, build its
// schedule, start it. Used by the C bridge, the unit tests and the simulator.
#ifndef ADAPT2_ENGINE_COLLECTIVES_H
#define ADAPT2_ENGINE_COLLECTIVES_H

#include "../adapt2_bridge.h"
#include "comm.h"
#include "plan_call.h"
#include "schedule.h"

namespace adapt2 {

// The one entry point (calls.cc): plans the call (plan_call.h), reserves its
// tags and starts it through its collective's pair of functions below.
// Returns 0 with `done` called exactly once later (or before returning), or
// an error with `done` never called. ADAPT2_STATUS_PREVIOUS (`why` says
// why): the plan hands it on. `finished` (optional) is called once after
// `done`, when all work is over (see adapt2_bridge.h: a detached call is
// done before it is finished). `grace` (blocking calls, optional): receives
// the call's grace period, or null; the caller fires it when the period
// ends and releases it after.
int start_call(Comm &comm, const adapt2_call_t &call, const char **why = nullptr);
// What plan_call knows of the communicator.
CallShape shape_of(const Comm &comm);
// The same with the tag block given instead of reserved (unit tests).
int start_call_at(Comm &comm, const adapt2_call_t &call, int tag);
// Each collective: the tags its plan uses, and its start, which builds what
// the plan says (declared from collectives.def).
#define ADAPT2_COLLECTIVE(name, NAME)                                                      \
    int tags_of_##name(const Comm &comm, const adapt2_call_t &call, const CallPlan &plan); \
    int start_##name(Comm &comm, const adapt2_call_t &call, const CallPlan &plan, int tag);
#include "../collectives.def"
#undef ADAPT2_COLLECTIVE

// Broadcast, reduce and allreduce from their parts, for the unit tests:
// described as a call (facts.blocking from the settings) and started
// through start_call_at. Reduce: `result` matters at the root only; with
// `in_place` the root's own data is in `result`.
int start_bcast(Comm &comm, const adapt2_buffer_t &data, int root, int tag, const adapt2_bcast_settings_t &settings,
                DoneFn done, void *done_ctx, DoneFn finished = nullptr, Grace **grace = nullptr);
int start_reduce(Comm &comm, const adapt2_buffer_t &own, const adapt2_buffer_t &result, bool in_place,
                 const adapt2_reduction_t &op, int root, int tag, const adapt2_reduce_settings_t &settings, DoneFn done,
                 void *done_ctx, DoneFn finished = nullptr, Grace **grace = nullptr);
int start_allreduce(Comm &comm, const adapt2_buffer_t &own, const adapt2_buffer_t &result, bool in_place,
                    const adapt2_reduction_t &op, int tag, const adapt2_allreduce_settings_t &settings, DoneFn done,
                    void *done_ctx, DoneFn finished = nullptr);

// The pool a flow stages through: pinned buffers of the communicator's device
// state when any of its buffers is on a GPU, else the host pool. nullptr
// (and *error set) when the device cannot be used.
BufferPool *staging_pool(Comm &comm, bool on_device, int *error);

}  // namespace adapt2

#endif
