/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * MPI_Bcast / MPI_Ibcast: describe the buffer and the call's facts and hand
 * the call to the engine, which plans it (engine/plan_call.h, bcast.cc).
 */
#include <limits.h>
#include <string.h>

#include "coll_adapt2.h"

#include "ompi/mca/coll/base/coll_base_util.h"

void mca_coll_adapt2_note_fallback(struct ompi_communicator_t *comm, const char *what, const char *why)
{
    mca_coll_adapt2_engine_count(ADAPT2_COUNTER_FALLBACKS, 1);
    ADAPT2_VERBOSE(20, "(%s) %s handed to the previous component: %s", comm->c_name, what, why);
}

void mca_coll_adapt2_describe_bcast(adapt2_call_t *call, mca_coll_adapt2_module_t *module, int root, bool blocking)
{
    memset(call, 0, sizeof *call);
    call->collective = ADAPT2_COLL_BCAST;
    call->root = root;
    mca_coll_adapt2_tree_settings(&call->settings.tree, ADAPT2_P_bcast_algorithm, ADAPT2_P_bcast_segment_size);
    mca_coll_adapt2_call_facts(&call->facts, ADAPT2_STRING(bcast_algorithm), blocking, false);
    mca_coll_adapt2_topology_settings(&call->settings.tree, module);
}

/* Starts adapt2's broadcast, or returns OMPI_ERR_NOT_SUPPORTED (nothing
 * started, `why` set) for data it cannot stage, or another error (`why`
 * says which). */
static int start_bcast(void *buff, int count, struct ompi_datatype_t *datatype, int root,
                       struct ompi_communicator_t *comm, mca_coll_adapt2_module_t *module, bool blocking,
                       mca_coll_adapt2_request_t **out, const char **why)
{
    adapt2_call_t call;
    int rc;

    adapt2_engine_comm_t *engine = mca_coll_adapt2_module_engine(module, comm);
    if (NULL == engine) {
        *why = "the communicator's engine state could not be created (out of memory)";
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    mca_coll_adapt2_describe_bcast(&call, module, root, blocking);
    if (mca_coll_adapt2_hands_on_early(module, comm, &call, mca_coll_adapt2_packed_bytes(datatype, (size_t) count),
                                       why)) {
        return OMPI_ERR_NOT_SUPPORTED;
    }
    mca_coll_adapt2_request_t *req = mca_coll_adapt2_request_new(comm, module);
    if (NULL == req) {
        *why = "no memory for the request";
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    rc = mca_coll_adapt2_describe_buffer(req, 0, buff, count, datatype, &call.recv);
    if (OMPI_SUCCESS == rc) {
        rc = mca_coll_adapt2_device_mark(buff, &call.recv, &call.facts, call.recv.bytes, why);
    }
    if (OMPI_SUCCESS == rc) {
        ADAPT2_VERBOSE(20, "(%s) bcast of %zu bytes from %d, algorithm %s%s", comm->c_name, call.recv.bytes, root,
                       mca_coll_adapt2_engine_algorithm_name(call.settings.tree.algorithm),
                       call.recv.on_device ? ", GPU buffer" : "");
        call.grace = &req->grace;
        rc = mca_coll_adapt2_start_call(module, req, &call, why);
    }
    if (OMPI_SUCCESS != rc) {
        mca_coll_adapt2_request_discard(req);
        return rc;
    }
    *out = req;
    return OMPI_SUCCESS;
}

int mca_coll_adapt2_ibcast(void *buff, int count, struct ompi_datatype_t *datatype, int root,
                           struct ompi_communicator_t *comm, ompi_request_t **request, mca_coll_base_module_t *base)
{
    mca_coll_adapt2_module_t *m = (mca_coll_adapt2_module_t *) base;
    mca_coll_adapt2_request_t *req = NULL;
    const char *why = NULL;
    int rc = start_bcast(buff, count, datatype, root, comm, m, false, &req, &why);
    ADAPT2_COMPLETE_OR_FALL_BACK(
        m, comm, "ibcast", rc, req, why, request,
        m->previous.ibcast(buff, count, datatype, root, comm, request, m->previous.ibcast_module));
}

/* MPI_Bcast on buffers adapt2 can use as they are (host memory, or GPU
 * memory in a call planned for it). */
static int blocking_bcast(void *buff, int count, struct ompi_datatype_t *datatype, int root,
                          struct ompi_communicator_t *comm, mca_coll_adapt2_module_t *m)
{
    mca_coll_adapt2_request_t *req = NULL;
    const char *why = NULL;
    int rc;
    if (mca_coll_adapt2_direct_bcast(buff, count, datatype, root, comm, m, &rc)) {
        return rc;
    }
    rc = start_bcast(buff, count, datatype, root, comm, m, true, &req, &why);
    ADAPT2_COMPLETE_OR_FALL_BACK(m, comm, "bcast", rc, req, why, NULL,
                                 m->previous.bcast(buff, count, datatype, root, comm, m->previous.bcast_module));
}

int mca_coll_adapt2_bcast(void *buff, int count, struct ompi_datatype_t *datatype, int root,
                          struct ompi_communicator_t *comm, mca_coll_base_module_t *base)
{
    mca_coll_adapt2_module_t *m = (mca_coll_adapt2_module_t *) base;
    if (!mca_coll_adapt2_bounce_wanted(mca_coll_adapt2_packed_bytes(datatype, (size_t) count))) {
        return blocking_bcast(buff, count, datatype, root, comm, m);
    }
    mca_coll_adapt2_bounce_t b;
    const int ways = ompi_comm_rank(comm) == root ? ADAPT2_BOUNCE_IN : ADAPT2_BOUNCE_OUT;
    void *host = mca_coll_adapt2_bounce_take(m, comm, &b, buff, (size_t) count, datatype, ways);
    const int rc = mca_coll_adapt2_bounce_ok(&b, 1) ? blocking_bcast(host, count, datatype, root, comm, m)
                                                    : OMPI_ERR_OUT_OF_RESOURCE;
    return mca_coll_adapt2_bounce_end(comm, "MPI_Bcast", &b, 1, rc);
}
