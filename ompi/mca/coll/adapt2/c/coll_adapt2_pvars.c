/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * MPI_T performance variables: process-wide counters that let tests and users
 * see that adapt2 handled their calls (and how much it sent).
 */
#include "coll_adapt2.h"

#include "opal/mca/base/mca_base_pvar.h"

static int read_counter(const struct mca_base_pvar_t *pvar, void *value, void *obj)
{
    (void) obj;
    *(unsigned long long *) value = mca_coll_adapt2_engine_counter((int) (intptr_t) pvar->ctx);
    return OMPI_SUCCESS;
}

static const struct {
    adapt2_counter_t which;
    const char *name;
    const char *help;
} counters[] = {
#define ADAPT2_COLLECTIVE(name, NAME) \
    {ADAPT2_COUNTER_##NAME##_CALLS, #name "_calls", "Calls of MPI_(I)" #name " (blocking and not) run by adapt2"},
#include "../collectives.def"
#undef ADAPT2_COLLECTIVE
    {ADAPT2_COUNTER_SEGMENTS_SENT, "segments_sent", "Segments adapt2 sent"},
    {ADAPT2_COUNTER_BYTES_SENT, "bytes_sent", "Payload bytes adapt2 sent"},
    {ADAPT2_COUNTER_FALLBACKS, "fallbacks", "Calls adapt2 passed to the previous component"},
    {ADAPT2_COUNTER_POOL_OVERDRAFTS, "pool_overdrafts",
     "Staging buffers lent beyond coll_adapt2_pool_max_bytes so a collective could progress"},
    {ADAPT2_COUNTER_DETACHED_CALLS, "detached_calls",
     "Calls that completed before their sends were over (decoupled completion)"},
    {ADAPT2_COUNTER_DETACH_BYTES, "detach_bytes",
     "Bytes copied into adapt2's buffers so that calls could complete early"},
    {ADAPT2_COUNTER_DETACH_REFUSED, "detach_refused",
     "Calls that could have completed early but found coll_adapt2_detach_max_bytes reached "
     "(non-blocking calls, or blocking ones after waiting)"},
    {ADAPT2_COUNTER_DETACH_WAITS, "detach_waits",
     "Blocking calls that waited for older calls to free room under coll_adapt2_detach_max_bytes"},
    {ADAPT2_COUNTER_INTERNODE_SEGMENTS, "internode_segments",
     "Segments this process sent to ranks on other nodes (all communicators; the verbose output "
     "at level 10 gives them per communicator when it is freed)"},
    {ADAPT2_COUNTER_INTERNODE_BYTES, "internode_bytes", "Bytes of the internode_segments"},
    {ADAPT2_COUNTER_DEVICE_BYTES, "device_bytes",
     "Bytes copied between GPU buffers and pinned staging buffers (coll_adapt2_device)"},
    {ADAPT2_COUNTER_DEVICE_COMBINES, "device_combines",
     "Segments of children's data combined into GPU buffers by adapt2's kernels"},
    {ADAPT2_COUNTER_DIRECT_CALLS, "direct_calls",
     "Blocking calls run on the direct path (coll_adapt2_direct_path: whole-message point-to-point "
     "on the plan's tree)"},
};

static int read_progress(const struct mca_base_pvar_t *pvar, void *value, void *obj)
{
    (void) obj;
    *(unsigned long long *) value =
        0 == (intptr_t) pvar->ctx ? mca_coll_adapt2_progress_cpu_ns() : mca_coll_adapt2_progress_polls();
    return OMPI_SUCCESS;
}

/* The progress thread's cost (coll_adapt2_progress.c). */
static int register_progress_pvars(mca_base_component_t *c)
{
    static const char *names[] = {"progress_thread_cpu_ns", "progress_thread_polls"};
    static const char *helps[] = {"CPU time the progress thread has used, in nanoseconds",
                                  "Times the progress thread polled the transport"};
    for (int i = 0; i < 2; ++i) {
        int rc = mca_base_component_pvar_register(
            c, names[i], helps[i], OPAL_INFO_LVL_4, MCA_BASE_PVAR_CLASS_COUNTER, MCA_BASE_VAR_TYPE_UNSIGNED_LONG_LONG,
            NULL, MCA_BASE_VAR_BIND_NO_OBJECT, MCA_BASE_PVAR_FLAG_READONLY | MCA_BASE_PVAR_FLAG_CONTINUOUS,
            read_progress, NULL, NULL, (void *) (intptr_t) i);
        if (rc < 0) {
            return rc;
        }
    }
    return OMPI_SUCCESS;
}

int mca_coll_adapt2_register_pvars(void)
{
    mca_base_component_t *c = &mca_coll_adapt2_component.super.collm_version;
    size_t i;
    for (i = 0; i < sizeof counters / sizeof counters[0]; ++i) {
        int rc = mca_base_component_pvar_register(c, counters[i].name, counters[i].help, OPAL_INFO_LVL_4,
                                                  MCA_BASE_PVAR_CLASS_COUNTER, MCA_BASE_VAR_TYPE_UNSIGNED_LONG_LONG,
                                                  NULL, MCA_BASE_VAR_BIND_NO_OBJECT,
                                                  MCA_BASE_PVAR_FLAG_READONLY | MCA_BASE_PVAR_FLAG_CONTINUOUS,
                                                  read_counter, NULL, NULL, (void *) (intptr_t) counters[i].which);
        if (rc < 0) {
            return rc;
        }
    }
    return register_progress_pvars(c);
}
