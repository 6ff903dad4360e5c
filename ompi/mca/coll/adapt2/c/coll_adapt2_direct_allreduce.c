/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * The allreduce's direct path: a blocking allreduce that the engine plans as
 * recursive doubling (engine/recdoubling_plan.h) runs its exchanges with the
 * PML's own calls on the user's buffers: the result buffer is the
 * accumulator, the partner's data lands in the module's scratch, and each
 * exchange folds the lower ranks' data on the left with Open MPI's op, as
 * the engine's flow does, so either path computes the same bits. A rank
 * whose datatype has holes packs its data into the scratch first and
 * unpacks the result at the end; whether a call goes direct never depends
 * on one rank's datatype (ranks may describe the same data differently).
 */
#include <string.h>

#include "coll_adapt2_direct.h"

#include "ompi/mca/coll/base/coll_base_util.h"

typedef struct operands {
    void *acc;     /* the accumulator: the result buffer, or the scratch when packed (an MPI address) */
    void *partner; /* the partner's data, in the scratch (an MPI address) */
    ompi_op_t *op;
    const mca_coll_adapt2_direct_data_t *data;
} operands_t;

/* acc = lower-ranked data op higher-ranked data, on both partners alike. */
static void fold(const operands_t *o, int peer, int rank)
{
    const mca_coll_adapt2_direct_data_t *u = o->data;
    if (peer < rank) {
        ompi_op_reduce(o->op, o->partner, o->acc, u->units, u->unit);
    } else {
        ompi_op_reduce(o->op, o->acc, o->partner, u->units, u->unit);
        memcpy((char *) o->acc + u->lb, (char *) o->partner + u->lb, u->bytes);
    }
}

static int run_exchanges(const mca_coll_adapt2_direct_t *d, const operands_t *o, ompi_communicator_t *comm)
{
    const int tag = ompi_coll_base_nbc_reserve_tags(comm, 1);
    const int rank = ompi_comm_rank(comm);
    const mca_coll_adapt2_direct_data_t *u = o->data;
    for (int i = 0; i < d->route.steps; ++i) {
        const adapt2_direct_step_t *x = &d->route.step[i];
        int rc = mca_coll_adapt2_direct_exchange(comm, d, i, tag, x->into_result ? o->acc : o->partner, u->units,
                                                 o->acc, u->units, u->unit);
        if (OMPI_SUCCESS != rc) {
            return rc;
        }
        if (x->fold) {
            fold(o, x->peer, rank);
        }
    }
    return OMPI_SUCCESS;
}

bool mca_coll_adapt2_direct_allreduce(const void *sbuf, void *rbuf, int count, ompi_datatype_t *dtype, ompi_op_t *op,
                                      ompi_communicator_t *comm, mca_coll_adapt2_module_t *module,
                                      mca_coll_adapt2_direct_describe_fn describe, const void *ctx, int *rc)
{
    mca_coll_adapt2_direct_data_t data;
    mca_coll_adapt2_direct_t *d = mca_coll_adapt2_direct_reduction(module, comm, ADAPT2_COLL_ALLREDUCE, 0, count, dtype,
                                                                   op, describe, ctx, &data);
    if (NULL == d) {
        return false;
    }
    char *scratch = mca_coll_adapt2_direct_scratch(d, 2 * data.bytes, comm, rc);
    if (NULL == scratch) {
        return true;
    }
    /* the accumulator: the result buffer where the data lies there as
     * units, else the scratch's first half; the partner's data after it */
    const operands_t o = {data.as_is ? rbuf : scratch, scratch + (data.as_is ? 0 : data.bytes) - data.lb, op, &data};
    const void *own = MPI_IN_PLACE == sbuf ? rbuf : sbuf;
    if (own != o.acc) {
        mca_coll_adapt2_direct_take(&data, own, count, dtype, o.acc);
    }
    *rc = run_exchanges(d, &o, comm);
    if (OMPI_SUCCESS == *rc && !data.as_is) {
        ompi_datatype_sndrcv(o.acc, data.units, data.unit, rbuf, count, dtype);
    }
    mca_coll_adapt2_engine_direct_done(module->engine, ADAPT2_COLL_ALLREDUCE, &d->route);
    return true;
}
