/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * The life of a communicator's engine and of the calls in flight on it.
 *
 * The engine is created by the communicator's first adapt2 collective, not
 * in coll_module_enable: the UCX transport must exchange addresses, and
 * enable may not communicate (FACTS: it deadlocks under MPI_THREAD_MULTIPLE).
 *
 * Calls may still be in flight after they completed for the user (detached,
 * see adapt2_bridge.h). Each call holds its module until it is finished, and
 * nothing is lost at the end:
 *  - MPI_Comm_free / MPI_Comm_disconnect delete the communicator's
 *    attributes first; adapt2's attribute drains the communicator's calls;
 *  - MPI_Finalize deletes MPI_COMM_SELF's attributes first of all; adapt2's
 *    attribute there drains every call of the process, then stops the
 *    progress thread.
 * Draining progresses Open MPI (and so every transport) until the calls are
 * finished; the peers do the same in their own drains or MPI calls.
 */
#include <pthread.h>
#include <string.h>

#include "coll_adapt2.h"

#include "ompi/mca/coll/base/coll_base_util.h"
#include "coll_adapt2_ucx.h"

#include "opal/runtime/opal_progress.h"

static volatile int32_t calls_in_process;
static int comm_keyval = MPI_KEYVAL_INVALID, self_keyval = MPI_KEYVAL_INVALID;
static pthread_once_t keyvals_once = PTHREAD_ONCE_INIT;

void mca_coll_adapt2_call_started(mca_coll_adapt2_module_t *module)
{
    OBJ_RETAIN(module);
    opal_atomic_add_fetch_32(&module->calls, 1);
    opal_atomic_add_fetch_32(&calls_in_process, 1);
}

void mca_coll_adapt2_call_ended(mca_coll_adapt2_module_t *module)
{
    opal_atomic_add_fetch_32(&module->calls, -1);
    opal_atomic_add_fetch_32(&calls_in_process, -1);
    OBJ_RELEASE(module);
}

static int drain_comm(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void) comm, (void) keyval, (void) extra;
    mca_coll_adapt2_module_t *module = attr;
    while (module->calls > 0 || module->rules_check_pending) {
        mca_coll_adapt2_rules_check_poll(module);
        opal_progress();
    }
    return MPI_SUCCESS;
}

static int drain_process(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void) comm, (void) keyval, (void) attr, (void) extra;
    if (calls_in_process > 0) {
        ADAPT2_VERBOSE(10, "MPI_Finalize: draining %d collectives still in flight", (int) calls_in_process);
    }
    while (calls_in_process > 0 || mca_coll_adapt2_rules_checks_in_flight() > 0) {
        mca_coll_adapt2_rules_check_poll(NULL);
        opal_progress();
    }
    mca_coll_adapt2_progress_stop();
    /* Nothing is created after MPI_Finalize: give the keyvals back (the
     * attributes still set hold them until they are deleted). */
    PMPI_Comm_free_keyval(&comm_keyval);
    PMPI_Comm_free_keyval(&self_keyval);
    return MPI_SUCCESS;
}

static void create_keyvals(void)
{
    if (MPI_SUCCESS != PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, drain_comm, &comm_keyval, NULL) ||
        MPI_SUCCESS != PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, drain_process, &self_keyval, NULL) ||
        MPI_SUCCESS != PMPI_Comm_set_attr(MPI_COMM_SELF, self_keyval, NULL)) {
        opal_output(0,
                    "coll:adapt2: could not register the drains at MPI_Finalize; collectives "
                    "still in flight then are finished by Open MPI's own teardown");
    }
}

/* Every communicator with an engine drains when it is freed. */
static void arm_drains(mca_coll_adapt2_module_t *module, ompi_communicator_t *comm)
{
    pthread_once(&keyvals_once, create_keyvals);
    if (MPI_KEYVAL_INVALID == comm_keyval || MPI_SUCCESS != PMPI_Comm_set_attr(comm, comm_keyval, module)) {
        ADAPT2_VERBOSE(1, "(%s) could not register the drain at MPI_Comm_free", comm->c_name);
    }
}

int mca_coll_adapt2_transport_from_name(const char *name)
{
    if (name && 0 == strcmp(name, "ucx")) {
        return ADAPT2_TRANSPORT_UCX;
    }
    if (name && 0 != strcmp(name, "pml")) {
        mca_coll_adapt2_report_invalid("transport", name, "pml", "known: pml, ucx");
    }
    return ADAPT2_TRANSPORT_PML;
}

static void connect_transport(mca_coll_adapt2_module_t *module, ompi_communicator_t *comm, adapt2_transport_ops_t *ops)
{
    if (ADAPT2_TRANSPORT_UCX == module->transport) {
        int rc = mca_coll_adapt2_ucx_connect(comm, ops, &module->transport_ctx);
        if (OMPI_SUCCESS == rc) {
            ADAPT2_VERBOSE(10, "(%s) transport: adapt2's own UCX worker", comm->c_name);
            return;
        }
        ADAPT2_VERBOSE(1, "(%s) UCX transport unavailable (%d); using the PML", comm->c_name, rc);
        module->transport = ADAPT2_TRANSPORT_PML;
    }
    mca_coll_adapt2_pml_ops(comm, ops);
}

/* opal_progress returns a count; the engine's hook returns nothing. */
static void progress_transports(void)
{
    opal_progress();
}

/* Where the ranks are, for the engine; reported at verbose level 10. */
static void describe_layout(mca_coll_adapt2_module_t *module, ompi_communicator_t *comm)
{
    adapt2_comm_shape_t shape;
    mca_coll_adapt2_engine_comm_shape(module->engine, &shape);
    module->multi_level = shape.multi_level != 0;
    module->cid = adapt2_comm_cid(comm);
    ADAPT2_VERBOSE(10, "(%s) %d rank(s) on %d node(s)%s; multi-level trees %s", comm->c_name, ompi_comm_size(comm),
                   shape.nodes, ADAPT2_STRING(nodes)[0] ? " (declared by coll_adapt2_nodes)" : "",
                   module->multi_level ? "apply (coll_adapt2_topology)" : "do not apply");
}

/* The verbosity in force for the engine's own lines (each call's plan at 20). */
static int log_level(void)
{
    return opal_output_get_verbosity(mca_coll_adapt2_component.output);
}

/* Tags of one call: Open MPI's per-communicator collective tags, which
 * libnbc and the other components' non-blocking calls share. */
static int reserve_tags(void *comm, int count)
{
    return ompi_coll_base_nbc_reserve_tags((ompi_communicator_t *) comm, count);
}

adapt2_engine_comm_t *mca_coll_adapt2_module_engine(mca_coll_adapt2_module_t *module, ompi_communicator_t *comm)
{
    if (module->engine) {
        return module->engine;
    }
    const int size = ompi_comm_size(comm);
    int *node = malloc(2 * (size_t) size * sizeof *node);
    if (NULL == node) {
        return NULL;
    }
    int *numa = node + size;
    bool numa_known = mca_coll_adapt2_topology_of(comm, node, numa);
    adapt2_transport_ops_t ops;
    connect_transport(module, comm, &ops);
    adapt2_comm_settings_t s = {
        .rank = ompi_comm_rank(comm),
        .size = ompi_comm_size(comm),
        .comm_id = adapt2_comm_cid(comm),
        .pool_max_bytes = (size_t) ADAPT2_LONG(pool_max_bytes),
        .detach_max_bytes = (size_t) ADAPT2_LONG(detach_max_bytes),
        .schedule_cache = ADAPT2_INT(schedule_cache),
        .progress = progress_transports,
        .reserve_tags = reserve_tags,
        .reserve_ctx = comm,
        .log_level = log_level,
        .log = mca_coll_adapt2_c_log,
        .node = node,
        .numa = numa_known ? numa : NULL,
    };
    module->engine = mca_coll_adapt2_engine_comm_create(&ops, &s);
    free(node);
    if (NULL == module->engine) {
        opal_output(0, "coll:adapt2: (%s) out of memory creating the engine", comm->c_name);
        return NULL;
    }
    describe_layout(module, comm);
    arm_drains(module, comm);
    mca_coll_adapt2_progress_start(module->transport);
    return module->engine;
}
