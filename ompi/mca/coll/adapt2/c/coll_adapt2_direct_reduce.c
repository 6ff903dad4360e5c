/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * The reduce's direct path: a blocking reduce of a commutative op that the
 * engine plans as one whole message with no hellos walks the plan's tree
 * upwards with the PML's own calls. A leaf sends its contribution to its
 * parent as it lies (the user's datatype). A rank with children receives
 * their data into the module's scratch (one slot each, as an array of the
 * op's element type), combines it into its own, and sends the sum up; the
 * root combines into its result buffer where the data lies contiguous there,
 * else in the scratch, and unpacks. The order of combining is the children's
 * (fixed); reproducible mode, where the engine's order is promised, takes
 * the engine's path (engine/direct_route.cc).
 */
#include <string.h>

#include "coll_adapt2_direct.h"

#include "ompi/mca/coll/base/coll_base_util.h"
#include "ompi/mca/pml/pml.h"

/* This rank's slots: slot 0 its own data (unless the root combines in its
 * result buffer), slot 1 + i child i's (each an MPI address). */
typedef struct slots {
    const mca_coll_adapt2_direct_data_t *data;
    char *scratch;
} slots_t;

static void *slot(const slots_t *s, int i)
{
    return s->scratch + (size_t) i * s->data->bytes - s->data->lb;
}

/* Receives the children's data into slots 1.., combines it into `acc`. */
static int gather_children(mca_coll_adapt2_direct_t *d, const slots_t *s, ompi_op_t *op, void *acc, const void *own,
                           int count, ompi_datatype_t *dtype, int tag, ompi_communicator_t *comm)
{
    const adapt2_direct_route_t *route = &d->route;
    const mca_coll_adapt2_direct_data_t *u = s->data;
    int posted = 0, rc = OMPI_SUCCESS;
    if (1 == route->children) { /* one child: a blocking receive, no request (np 2's root) */
        if (acc != own) {
            mca_coll_adapt2_direct_take(u, own, count, dtype, acc);
        }
        rc = MCA_PML_CALL(recv(slot(s, 1), u->units, u->unit, route->child[0], tag, comm, MPI_STATUS_IGNORE));
        if (OMPI_SUCCESS != rc) {
            return mca_coll_adapt2_direct_failed(comm, d, rc, "receiving from its child,", route->child[0]);
        }
        ompi_op_reduce(op, slot(s, 1), acc, u->units, u->unit);
        return OMPI_SUCCESS;
    }
    for (; posted < route->children && OMPI_SUCCESS == rc; ++posted) {
        rc = MCA_PML_CALL(
            irecv(slot(s, posted + 1), u->units, u->unit, route->child[posted], tag, comm, &d->sends[posted]));
    }
    if (OMPI_SUCCESS != rc) {
        return mca_coll_adapt2_direct_failed(comm, d, rc, "posting the receive from its child,",
                                             route->child[posted - 1]);
    }
    if (acc != own) { /* meanwhile */
        mca_coll_adapt2_direct_take(u, own, count, dtype, acc);
    }
    rc = ompi_request_wait_all(posted, d->sends, MPI_STATUSES_IGNORE);
    if (OMPI_SUCCESS != rc) {
        return mca_coll_adapt2_direct_failed(comm, d, rc, "receiving from its children, the first being",
                                             route->child[0]);
    }
    for (int i = 0; i < route->children; ++i) {
        ompi_op_reduce(op, slot(s, i + 1), acc, u->units, u->unit);
    }
    return OMPI_SUCCESS;
}

/* Sends left behind (route->leave_behind): the data goes up from a copy in
 * the send-behind ring and the call returns without waiting for the parent
 * (coll_adapt2_behind.c). MCA_COLL_ADAPT2_NOT_HELD where the ring cannot
 * hold it. */
static int send_up_behind(mca_coll_adapt2_module_t *module, const mca_coll_adapt2_direct_t *d, const void *buf,
                          int count, ompi_datatype_t *dtype, int tag, ompi_communicator_t *comm)
{
    const int parent = d->route.parent;
    int failed;
    const int rc = mca_coll_adapt2_behind_post(module, comm, buf, count, dtype, d->key.bytes, &parent, 1, tag, &failed);
    if (OMPI_SUCCESS == rc || MCA_COLL_ADAPT2_NOT_HELD == rc) {
        return rc;
    }
    return mca_coll_adapt2_direct_failed(
        comm, d, rc, failed < 0 ? "copying its data for its parent," : "sending to its parent,", parent);
}

static int send_up(mca_coll_adapt2_module_t *module, const mca_coll_adapt2_direct_t *d, const void *buf, int count,
                   ompi_datatype_t *dtype, int tag, ompi_communicator_t *comm)
{
    const int parent = d->route.parent;
    if (d->route.leave_behind) {
        const int rc = send_up_behind(module, d, buf, count, dtype, tag, comm);
        if (MCA_COLL_ADAPT2_NOT_HELD != rc) {
            return rc;
        }
    }
    const int rc = mca_coll_adapt2_pml_inject_failure()
                       ? OMPI_ERR_UNREACH
                       : MCA_PML_CALL(send(buf, count, dtype, parent, tag, MCA_PML_BASE_SEND_STANDARD, comm));
    return OMPI_SUCCESS == rc ? rc : mca_coll_adapt2_direct_failed(comm, d, rc, "sending to its parent,", parent);
}

static int run_reduce(mca_coll_adapt2_module_t *module, mca_coll_adapt2_direct_t *d, const slots_t *s, const void *own,
                      void *rbuf, int count, ompi_datatype_t *dtype, ompi_op_t *op, ompi_communicator_t *comm)
{
    const int tag = ompi_coll_base_nbc_reserve_tags(comm, 1);
    if (0 == d->route.children) { /* a leaf: its data as it lies */
        return send_up(module, d, own, count, dtype, tag, comm);
    }
    const bool root = d->route.parent < 0;
    const mca_coll_adapt2_direct_data_t *u = s->data;
    /* the root combines in its result buffer where the data lies there as units */
    void *acc = root && u->as_is ? rbuf : slot(s, 0);
    int rc = gather_children(d, s, op, acc, own, count, dtype, tag, comm);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    if (!root) {
        return send_up(module, d, acc, u->units, u->unit, tag, comm);
    }
    if (acc != rbuf) {
        ompi_datatype_sndrcv(acc, u->units, u->unit, rbuf, count, dtype);
    }
    return OMPI_SUCCESS;
}

bool mca_coll_adapt2_direct_reduce(const void *sbuf, void *rbuf, int count, ompi_datatype_t *dtype, ompi_op_t *op,
                                   int root, ompi_communicator_t *comm, mca_coll_adapt2_module_t *module,
                                   mca_coll_adapt2_direct_describe_fn describe, const void *ctx, int *rc)
{
    if (root < 0 || root >= ompi_comm_size(comm)) {
        return false; /* the engine's path reports it */
    }
    mca_coll_adapt2_direct_data_t data;
    mca_coll_adapt2_direct_t *d = mca_coll_adapt2_direct_reduction(module, comm, ADAPT2_COLL_REDUCE, root, count, dtype,
                                                                   op, describe, ctx, &data);
    if (NULL == d) {
        return false;
    }
    slots_t s = {&data, NULL};
    if (d->route.children > 0) { /* a leaf sends its data as it lies: no scratch */
        s.scratch = mca_coll_adapt2_direct_scratch(d, (size_t) (d->route.children + 1) * data.bytes, comm, rc);
        if (NULL == s.scratch) {
            return true;
        }
    }
    const void *own = MPI_IN_PLACE == sbuf ? rbuf : sbuf; /* (in place: the root only) */
    *rc = run_reduce(module, d, &s, own, rbuf, count, dtype, op, comm);
    mca_coll_adapt2_engine_direct_done(module->engine, ADAPT2_COLL_REDUCE, &d->route);
    return true;
}
