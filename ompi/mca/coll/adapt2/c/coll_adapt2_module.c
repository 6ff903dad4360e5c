/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * Per-communicator module: whether adapt2 takes a communicator, and what it
 * falls back to for calls it does not handle.
 */
#include <string.h>

#include "coll_adapt2.h"
#include "coll_adapt2_ucx.h"

#include "ompi/mca/coll/base/base.h"
#include "ompi/mca/pml/base/base.h"

static void module_construct(mca_coll_adapt2_module_t *module)
{
    module->engine = NULL;
    module->transport = ADAPT2_TRANSPORT_PML;
    module->transport_ctx = NULL;
    module->calls = 0;
    module->is_world = false;
    module->multi_level = false;
    module->cid = 0;
    module->rules_check_posted = false;
    module->rules_check_pending = 0;
    for (int i = 0; i < ADAPT2_DIRECT_SLOTS; ++i) {
        module->direct[i] = NULL;
    }
    module->behind = NULL;
    memset(&module->previous, 0, sizeof module->previous);
}

/* MPI_Finalize never closes the component here, but it does destroy
 * MPI_COMM_WORLD (after the user's communicators): the trace is written then. */
static void write_trace(void)
{
    const char *prefix = mca_coll_adapt2_component.trace_prefix;
    int err = prefix[0] ? mca_coll_adapt2_engine_trace_write(prefix) : 0;
    if (err) {
        opal_output(0, "coll:adapt2: could not write the trace to %s.*.csv (MCA parameter coll_adapt2_trace): %s",
                    prefix, strerror(err));
    }
}

/* How often this rank crossed the communicator's slow links (verbose 10). */
static void report_internode(mca_coll_adapt2_module_t *module)
{
    adapt2_comm_shape_t shape;
    mca_coll_adapt2_engine_comm_shape(module->engine, &shape);
    if (shape.nodes > 1) {
        ADAPT2_VERBOSE(10, "(cid %u) sent %" PRIu64 " segment(s), %" PRIu64 " byte(s) to other nodes (%d nodes)",
                       (unsigned) module->cid, shape.internode_segments, shape.internode_bytes, shape.nodes);
    }
}

static void module_destruct(mca_coll_adapt2_module_t *module)
{
    mca_coll_adapt2_fallback_t *p = &module->previous;
    if (module->is_world) {
        write_trace();
    }
    if (module->engine) {
        report_internode(module);
        mca_coll_adapt2_engine_comm_destroy(module->engine);
        module->engine = NULL;
    }
    mca_coll_adapt2_direct_free(module);
    if (module->transport_ctx) {
        mca_coll_adapt2_ucx_disconnect(module->transport_ctx);
        module->transport_ctx = NULL;
    }
#define ADAPT2_COLLECTIVE(name, NAME)                    \
    if (p->name##_module) OBJ_RELEASE(p->name##_module); \
    if (p->i##name##_module) OBJ_RELEASE(p->i##name##_module);
#include "../collectives.def"
#undef ADAPT2_COLLECTIVE
}

OBJ_CLASS_INSTANCE(mca_coll_adapt2_module_t, mca_coll_base_module_t, module_construct, module_destruct);

/* Saves what the communicator had installed for one function before us. */
#define ADAPT2_SAVE_PREVIOUS(module, comm, fn)                                                            \
    do {                                                                                                  \
        (module)->previous.fn = (comm)->c_coll->coll_##fn;                                                \
        (module)->previous.fn##_module = (comm)->c_coll->coll_##fn##_module;                              \
        if (!(module)->previous.fn || !(module)->previous.fn##_module) {                                  \
            ADAPT2_VERBOSE(1, "(%s) nothing to fall back to for " #fn "; disqualifying", (comm)->c_name); \
            return OMPI_ERROR;                                                                            \
        }                                                                                                 \
        OBJ_RETAIN((module)->previous.fn##_module);                                                       \
    } while (0)

/* "bcast, reduce, ...": the collectives adapt2 implements. */
static const char *collective_names(void)
{
    return ""
#define ADAPT2_COLLECTIVE(name, NAME) #name ", "
#include "../collectives.def"
#undef ADAPT2_COLLECTIVE
           "and their non-blocking forms";
}

/* Enable runs inside communicator creation, possibly within opal_progress:
 * no communication here (connections are made lazily by the PML). */
static int adapt2_module_enable(mca_coll_base_module_t *base, struct ompi_communicator_t *comm)
{
    mca_coll_adapt2_module_t *module = (mca_coll_adapt2_module_t *) base;
    mca_coll_adapt2_component_t *c = &mca_coll_adapt2_component;

    mca_coll_adapt2_pml_choose_arming(); /* the PML is selected by now */
#define ADAPT2_COLLECTIVE(name, NAME)         \
    ADAPT2_SAVE_PREVIOUS(module, comm, name); \
    ADAPT2_SAVE_PREVIOUS(module, comm, i##name);
#include "../collectives.def"
#undef ADAPT2_COLLECTIVE

    module->transport = mca_coll_adapt2_transport_from_name(ADAPT2_STRING(transport));
    if (ADAPT2_STRING(trace)[0] && !c->trace_prefix[0]) {
        snprintf(c->trace_prefix, sizeof c->trace_prefix, "%s", ADAPT2_STRING(trace));
        ADAPT2_VERBOSE(10, "tracing to %s.<world rank>.csv", c->trace_prefix);
        long events = ADAPT2_LONG(trace_max_events);
        mca_coll_adapt2_engine_trace_enable((size_t) events, ompi_comm_rank(&ompi_mpi_comm_world.comm));
    }
    module->is_world = comm == &ompi_mpi_comm_world.comm;
    ADAPT2_VERBOSE(10,
                   "(%s) enabled on %d ranks (%s); "
                   "other calls, and algorithm=previous, go to the modules installed before",
                   comm->c_name, ompi_comm_size(comm), collective_names());
    return OMPI_SUCCESS;
}

/* Called once by MPI_Init; enable_mpi_threads is MPI_THREAD_MULTIPLE. */
int mca_coll_adapt2_init_query(bool enable_progress_threads, bool enable_mpi_threads)
{
    (void) enable_progress_threads;
    mca_coll_adapt2_component.thread_multiple = enable_mpi_threads;
    mca_coll_adapt2_load_rules();
    return OMPI_SUCCESS;
}

/* coll_adapt2_ucx_thread_multiple 0: communicators of an MPI_THREAD_MULTIPLE
 * process over pml ucx go to the previous component (by default adapt2 runs
 * them, its requests polled: coll_adapt2_pml.c, "Arming the callback").
 * Said once at verbose 1, per communicator at 10. */
static bool declines_for_threads(const struct ompi_communicator_t *comm)
{
    static volatile int32_t said;
    const bool allowed = 1 == ADAPT2_INT(ucx_thread_multiple); /* read (and checked) every time */
    const char *pml = mca_pml_base_selected_component.pmlm_version.mca_component_name;
    if (!mca_coll_adapt2_component.thread_multiple || allowed || 0 != strcmp(pml, "ucx")) {
        return false;
    }
    const int level = opal_atomic_add_fetch_32(&said, 1) == 1 ? 1 : 10;
    ADAPT2_VERBOSE(level, "(%s) MPI_THREAD_MULTIPLE with pml ucx: declining (coll_adapt2_ucx_thread_multiple 0)",
                   comm->c_name);
    return true;
}

mca_coll_base_module_t *mca_coll_adapt2_comm_query(struct ompi_communicator_t *comm, int *priority)
{
    mca_coll_adapt2_module_t *module;

    if (OMPI_COMM_IS_INTER(comm)) {
        ADAPT2_VERBOSE(10, "(%s) intercommunicator; declining", comm->c_name);
        return NULL;
    }
    if (ompi_comm_size(comm) < 2) {
        ADAPT2_VERBOSE(10, "(%s) single process; declining", comm->c_name);
        return NULL;
    }
    /* Modules are enabled in ascending priority and each one saves what was
     * installed before it, so 0 or less would leave adapt2 with nothing to
     * fall back to and then be overridden anyway: decline instead. */
    *priority = ADAPT2_INT(priority);
    if (*priority <= 0) {
        ADAPT2_VERBOSE(10, "(%s) priority %d; not selected (set coll_adapt2_priority, e.g. 100)", comm->c_name,
                       *priority);
        return NULL;
    }

    if (declines_for_threads(comm)) {
        return NULL;
    }

    module = OBJ_NEW(mca_coll_adapt2_module_t);
    if (NULL == module) {
        return NULL;
    }
    module->super.coll_module_enable = adapt2_module_enable;
#define ADAPT2_COLLECTIVE(name, NAME)                   \
    module->super.coll_##name = mca_coll_adapt2_##name; \
    module->super.coll_i##name = mca_coll_adapt2_i##name;
#include "../collectives.def"
#undef ADAPT2_COLLECTIVE
    return &module->super;
}
