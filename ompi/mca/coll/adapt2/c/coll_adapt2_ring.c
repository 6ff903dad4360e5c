/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * MPI_Allgather, MPI_Iallgather, MPI_Reduce_scatter_block and
 * MPI_Ireduce_scatter_block: check the parameters, describe the buffers and
 * hand the call to the engine's ring (engine/ring_collectives.cc) through its
 * one call description (a small blocking allgather or reduce-scatter may
 * take the direct path: coll_adapt2_direct_allgather.c,
 * coll_adapt2_direct_reduce_scatter.c). What adapt2 does not take goes to
 * the previous component, with the reason at coll_adapt2_verbose 20.
 */
#include <limits.h>
#include <string.h>

#include "coll_adapt2.h"
#include "coll_adapt2_direct.h"

#include "ompi/mca/coll/base/coll_base_util.h"

static void ring_settings(adapt2_call_t *call, mca_coll_adapt2_param_t segment_size)
{
    memset(&call->settings, 0, sizeof call->settings);
    call->settings.tree.segment_size = (size_t) mca_coll_adapt2_param_long(segment_size);
    call->settings.tree.recv_window = ADAPT2_INT(recv_window);
    call->settings.tree.send_window = ADAPT2_INT(send_window);
}

/* A request for the call, with the communicator's engine; NULL and `why`
 * set when either cannot be had. */
static mca_coll_adapt2_request_t *new_request(ompi_communicator_t *comm, mca_coll_adapt2_module_t *module,
                                              const char **why)
{
    if (NULL == mca_coll_adapt2_module_engine(module, comm)) {
        *why = "the communicator's engine state could not be created (out of memory)";
        return NULL;
    }
    mca_coll_adapt2_request_t *req = mca_coll_adapt2_request_new(comm, module);
    if (NULL == req) {
        *why = "no memory for the request";
    }
    return req;
}

/* The allgather's settings and facts, which the engine plans it by (the
 * topology's settings come once the engine exists: it knows the nodes). */
static void describe_allgather(adapt2_call_t *call, const mca_coll_adapt2_module_t *module, bool in_place,
                               bool blocking)
{
    memset(call, 0, sizeof *call);
    call->collective = ADAPT2_COLL_ALLGATHER;
    call->in_place = in_place;
    ring_settings(call, ADAPT2_P_allgather_segment_size);
    call->settings.algorithm = mca_coll_adapt2_checked_algorithm(ADAPT2_P_allgather_algorithm);
    mca_coll_adapt2_call_facts(&call->facts, ADAPT2_STRING(allgather_algorithm), blocking, false);
    call->settings.bruck_max_bytes = (size_t) ADAPT2_LONG(allgather_bruck_max_bytes);
    /* read every call, so that an invalid value is reported */
    const size_t direct_max = (size_t) ADAPT2_LONG(allgather_direct_max_bytes);
    call->settings.direct_max_bytes = blocking && mca_coll_adapt2_direct_available(module) ? direct_max : 0;
    call->settings.multi_level_max_bytes = (size_t) ADAPT2_LONG(allgather_multi_level_max_bytes);
    call->settings.linear_max_bytes = (size_t) ADAPT2_LONG(allgather_linear_max_bytes);
    call->settings.pipeline_min_bytes = (size_t) ADAPT2_LONG(allgather_multi_level_pipeline_min_bytes);
}

/* The direct path's description of a blocking allgather (its engine exists). */
static void describe_for_direct(const void *module, adapt2_call_t *call)
{
    describe_allgather(call, (const mca_coll_adapt2_module_t *) module, false, true);
    mca_coll_adapt2_topology_settings(&call->settings.tree, (mca_coll_adapt2_module_t *) module);
}

static int start_allgather(const void *sbuf, int scount, ompi_datatype_t *sdtype, void *rbuf, int rcount,
                           ompi_datatype_t *rdtype, ompi_communicator_t *comm, mca_coll_adapt2_module_t *module,
                           bool blocking, mca_coll_adapt2_request_t **out, const char **why)
{
    const int size = ompi_comm_size(comm);
    if ((long) rcount * size > INT_MAX) {
        *why = "the receive buffer holds more than INT_MAX elements";
        return OMPI_ERR_NOT_SUPPORTED;
    }
    adapt2_call_t call;
    describe_allgather(&call, module, MPI_IN_PLACE == sbuf, blocking);
    if (mca_coll_adapt2_hands_on_early(module, comm, &call,
                                       mca_coll_adapt2_packed_bytes(rdtype, (size_t) rcount * (size_t) size), why)) {
        return OMPI_ERR_NOT_SUPPORTED;
    }
    /* after the engine exists (the early check makes it): it knows the nodes */
    mca_coll_adapt2_topology_settings(&call.settings.tree, module);
    mca_coll_adapt2_request_t *req = new_request(comm, module, why);
    if (NULL == req) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    int rc = mca_coll_adapt2_describe_buffer(req, 1, rbuf, rcount * size, rdtype, &call.recv);
    if (OMPI_SUCCESS == rc && !call.in_place) {
        rc = mca_coll_adapt2_describe_buffer(req, 0, (void *) sbuf, scount, sdtype, &call.send);
        if (OMPI_SUCCESS == rc && call.send.bytes * (size_t) size != call.recv.bytes) {
            *why = "the send and receive type signatures differ in size";
            rc = OMPI_ERR_NOT_SUPPORTED;
        }
    }
    if (OMPI_SUCCESS != rc) {
        mca_coll_adapt2_request_discard(req);
        return rc;
    }
    ADAPT2_VERBOSE(20, "(%s) allgather of %zu bytes per rank%s", comm->c_name, call.recv.bytes / (size_t) size,
                   call.in_place ? " in place" : "");
    rc = mca_coll_adapt2_start_call(module, req, &call, why);
    if (OMPI_SUCCESS != rc) {
        mca_coll_adapt2_request_discard(req);
    }
    *out = req;
    return rc;
}

/* The reduce-scatter's settings and facts, which the engine plans it by. */
static void describe_reduce_scatter(adapt2_call_t *call, bool in_place, bool blocking, bool user_op)
{
    memset(call, 0, sizeof *call);
    call->collective = ADAPT2_COLL_REDUCE_SCATTER_BLOCK;
    call->in_place = in_place;
    ring_settings(call, ADAPT2_P_reduce_scatter_block_segment_size);
    call->settings.algorithm = mca_coll_adapt2_checked_algorithm(ADAPT2_P_reduce_scatter_block_algorithm);
    call->settings.halving_max_bytes = (size_t) ADAPT2_LONG(reduce_scatter_block_halving_max_bytes);
    call->settings.reproducible = ADAPT2_INT(reproducible);
    mca_coll_adapt2_call_facts(&call->facts, ADAPT2_STRING(reduce_scatter_block_algorithm), blocking, user_op);
}

/* The direct path's description of a blocking reduce-scatter (`op`: its
 * op): in place, as the route is planned by all p blocks. */
static void describe_reduce_scatter_for_direct(const void *op, adapt2_call_t *call)
{
    describe_reduce_scatter(call, true, true, !ompi_op_is_intrinsic((ompi_op_t *) op));
}

static int start_reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, ompi_datatype_t *dtype, ompi_op_t *op,
                                      ompi_communicator_t *comm, mca_coll_adapt2_module_t *module, bool blocking,
                                      mca_coll_adapt2_request_t **out, const char **why)
{
    const int size = ompi_comm_size(comm);
    const bool in_place = MPI_IN_PLACE == sbuf;
    if ((long) rcount * size > INT_MAX) {
        *why = "the send buffer holds more than INT_MAX elements";
        return OMPI_ERR_NOT_SUPPORTED;
    }
    ompi_datatype_t *unit = mca_coll_adapt2_unit_type_of(op, dtype, rcount * size, why);
    if (NULL == unit) {
        return OMPI_ERR_NOT_SUPPORTED;
    }
    adapt2_call_t call;
    describe_reduce_scatter(&call, in_place, blocking, !ompi_op_is_intrinsic(op));
    if (mca_coll_adapt2_hands_on_early(module, comm, &call,
                                       mca_coll_adapt2_packed_bytes(dtype, (size_t) rcount * (size_t) size), why)) {
        return OMPI_ERR_NOT_SUPPORTED;
    }
    mca_coll_adapt2_request_t *req = new_request(comm, module, why);
    if (NULL == req) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    mca_coll_adapt2_request_hold_op(req, op, unit);
    mca_coll_adapt2_reduction_of(req, &call.reduction);
    /* in place, recv holds all p blocks (the input) and gets block 0 */
    int rc = mca_coll_adapt2_describe_operand(req, 1, rbuf, in_place ? rcount * size : rcount, dtype, &call.recv);
    if (OMPI_SUCCESS == rc && !in_place) {
        rc = mca_coll_adapt2_describe_operand(req, 0, sbuf, rcount * size, dtype, &call.send);
    }
    if (OMPI_SUCCESS != rc) {
        mca_coll_adapt2_request_discard(req);
        return rc;
    }
    ADAPT2_VERBOSE(20, "(%s) reduce_scatter_block of %zu bytes per rank%s", comm->c_name,
                   (in_place ? call.recv.bytes / (size_t) size : call.recv.bytes), in_place ? " in place" : "");
    rc = mca_coll_adapt2_start_call(module, req, &call, why);
    if (OMPI_SUCCESS != rc) {
        mca_coll_adapt2_request_discard(req);
    }
    *out = req;
    return rc;
}

/* Runs the call with adapt2, blocking (request NULL) or not; anything
 * adapt2 does not take goes to the previous component (`fallback` runs it). */
#define ADAPT2_RING_RUN(module, comm, name, start, request, fallback)                             \
    do {                                                                                          \
        mca_coll_adapt2_request_t *req_ = NULL;                                                   \
        const char *why_ = "";                                                                    \
        int rc_ = (start);                                                                        \
        ADAPT2_COMPLETE_OR_FALL_BACK((module), (comm), name, rc_, req_, why_, request, fallback); \
    } while (0)

/* MPI_Allgather on buffers adapt2 can use as they are (host memory). */
static int blocking_allgather(const void *sbuf, int scount, struct ompi_datatype_t *sdtype, void *rbuf, int rcount,
                              struct ompi_datatype_t *rdtype, struct ompi_communicator_t *comm,
                              mca_coll_adapt2_module_t *m)
{
    int rc;
    if (mca_coll_adapt2_direct_allgather(sbuf, scount, sdtype, rbuf, rcount, rdtype, comm, m, describe_for_direct, m,
                                         &rc)) {
        return rc;
    }
    ADAPT2_RING_RUN(
        m, comm, "allgather", start_allgather(sbuf, scount, sdtype, rbuf, rcount, rdtype, comm, m, true, &req_, &why_),
        (ompi_request_t **) NULL,
        m->previous.allgather(sbuf, scount, sdtype, rbuf, rcount, rdtype, comm, m->previous.allgather_module));
}

int mca_coll_adapt2_iallgather(const void *sbuf, int scount, struct ompi_datatype_t *sdtype, void *rbuf, int rcount,
                               struct ompi_datatype_t *rdtype, struct ompi_communicator_t *comm,
                               ompi_request_t **request, mca_coll_base_module_t *base)
{
    mca_coll_adapt2_module_t *m = (mca_coll_adapt2_module_t *) base;
    ADAPT2_RING_RUN(m, comm, "iallgather",
                    start_allgather(sbuf, scount, sdtype, rbuf, rcount, rdtype, comm, m, false, &req_, &why_), request,
                    m->previous.iallgather(sbuf, scount, sdtype, rbuf, rcount, rdtype, comm, request,
                                           m->previous.iallgather_module));
}

/* MPI_Reduce_scatter_block on buffers adapt2 can use as they are. */
static int blocking_reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, struct ompi_datatype_t *dtype,
                                         struct ompi_op_t *op, struct ompi_communicator_t *comm,
                                         mca_coll_adapt2_module_t *m)
{
    int rc;
    if (mca_coll_adapt2_direct_reduce_scatter_block(sbuf, rbuf, rcount, dtype, op, comm, m,
                                                    describe_reduce_scatter_for_direct, op, &rc)) {
        return rc;
    }
    ADAPT2_RING_RUN(
        m, comm, "reduce_scatter_block",
        start_reduce_scatter_block(sbuf, rbuf, rcount, dtype, op, comm, m, true, &req_, &why_),
        (ompi_request_t **) NULL,
        m->previous.reduce_scatter_block(sbuf, rbuf, rcount, dtype, op, comm, m->previous.reduce_scatter_block_module));
}

int mca_coll_adapt2_ireduce_scatter_block(const void *sbuf, void *rbuf, int rcount, struct ompi_datatype_t *dtype,
                                          struct ompi_op_t *op, struct ompi_communicator_t *comm,
                                          ompi_request_t **request, mca_coll_base_module_t *base)
{
    mca_coll_adapt2_module_t *m = (mca_coll_adapt2_module_t *) base;
    ADAPT2_RING_RUN(m, comm, "ireduce_scatter_block",
                    start_reduce_scatter_block(sbuf, rbuf, rcount, dtype, op, comm, m, false, &req_, &why_), request,
                    m->previous.ireduce_scatter_block(sbuf, rbuf, rcount, dtype, op, comm, request,
                                                      m->previous.ireduce_scatter_block_module));
}

/* Bounced (coll_adapt2_bounce.c): the contribution goes in, all p blocks come
 * out (in place: they go in too). */
int mca_coll_adapt2_allgather(const void *sbuf, int scount, struct ompi_datatype_t *sdtype, void *rbuf, int rcount,
                              struct ompi_datatype_t *rdtype, struct ompi_communicator_t *comm,
                              mca_coll_base_module_t *base)
{
    mca_coll_adapt2_module_t *m = (mca_coll_adapt2_module_t *) base;
    const size_t all = (size_t) rcount * (size_t) ompi_comm_size(comm);
    if (!mca_coll_adapt2_bounce_wanted(mca_coll_adapt2_packed_bytes(rdtype, all))) {
        return blocking_allgather(sbuf, scount, sdtype, rbuf, rcount, rdtype, comm, m);
    }
    mca_coll_adapt2_bounce_t b[2];
    const void *s;
    void *r;
    const int rc = mca_coll_adapt2_bounce_pair(m, comm, b, sbuf, (size_t) scount, sdtype, rbuf, all, rdtype, &s, &r)
                       ? blocking_allgather(s, scount, sdtype, r, rcount, rdtype, comm, m)
                       : OMPI_ERR_OUT_OF_RESOURCE;
    return mca_coll_adapt2_bounce_end(comm, "MPI_Allgather", b, 2, rc);
}

/* Bounced: all p blocks go in (in place: from the result buffer, which then
 * comes out whole), this rank's block comes out. */
int mca_coll_adapt2_reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, struct ompi_datatype_t *dtype,
                                         struct ompi_op_t *op, struct ompi_communicator_t *comm,
                                         mca_coll_base_module_t *base)
{
    mca_coll_adapt2_module_t *m = (mca_coll_adapt2_module_t *) base;
    const size_t all = (size_t) rcount * (size_t) ompi_comm_size(comm);
    if (!mca_coll_adapt2_bounce_wanted(mca_coll_adapt2_packed_bytes(dtype, all))) {
        return blocking_reduce_scatter_block(sbuf, rbuf, rcount, dtype, op, comm, m);
    }
    /* in place, all p blocks are in the result buffer, and come back whole */
    const size_t results = MPI_IN_PLACE == sbuf ? all : (size_t) rcount;
    mca_coll_adapt2_bounce_t b[2];
    const void *s;
    void *r;
    const int rc = mca_coll_adapt2_bounce_pair(m, comm, b, sbuf, all, dtype, rbuf, results, dtype, &s, &r)
                       ? blocking_reduce_scatter_block(s, r, rcount, dtype, op, comm, m)
                       : OMPI_ERR_OUT_OF_RESOURCE;
    return mca_coll_adapt2_bounce_end(comm, "MPI_Reduce_scatter_block", b, 2, rc);
}
