/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * The reduce-scatter's direct path: a small blocking
 * MPI_Reduce_scatter_block of a commutative op that the engine plans as
 * recursive halving runs its exchanges (engine/halving_plan.h) with the
 * PML's own calls. The p blocks are taken into the route's scratch in the
 * user's order (packed where the datatype has holes); each exchange sends
 * the blocks its partner keeps and folds what arrives into the ones this
 * rank keeps, so that it ends with its own block, which goes to the result.
 * Whether a call goes direct never depends on one rank's datatype.
 */
#include <limits.h>
#include <string.h>

#include "coll_adapt2_direct.h"

#include "ompi/mca/coll/base/coll_base_util.h"

/* The blocks being reduced: the p blocks in the scratch, and room after them
 * for a partner's (at most p blocks: a taker's first exchange). Both MPI
 * addresses of data->unit. */
typedef struct halving {
    char *work, *partner;
    size_t block;    /* bytes per block */
    int block_units; /* units per block */
    ompi_op_t *op;
    const mca_coll_adapt2_direct_data_t *data;
} halving_t;

static void *block_at(const halving_t *h, char *base, int block)
{
    return base + (size_t) block * h->block;
}

static int run_exchanges(const mca_coll_adapt2_direct_t *d, const halving_t *h, ompi_communicator_t *comm)
{
    const int tag = ompi_coll_base_nbc_reserve_tags(comm, 1);
    for (int i = 0; i < d->route.steps; ++i) {
        const adapt2_direct_step_t *x = &d->route.step[i];
        void *into = x->into_result ? block_at(h, h->work, x->recv_block) : h->partner;
        int rc = mca_coll_adapt2_direct_exchange(comm, d, i, tag, into, x->recv_blocks * h->block_units,
                                                 block_at(h, h->work, x->send_block), x->blocks * h->block_units,
                                                 h->data->unit);
        if (OMPI_SUCCESS != rc) {
            return rc;
        }
        if (x->fold) { /* a commutative op: the order of the operands does not matter */
            ompi_op_reduce(h->op, h->partner, block_at(h, h->work, x->recv_block), x->recv_blocks * h->block_units,
                           h->data->unit);
        }
    }
    return OMPI_SUCCESS;
}

bool mca_coll_adapt2_direct_reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, ompi_datatype_t *dtype,
                                                 ompi_op_t *op, ompi_communicator_t *comm,
                                                 mca_coll_adapt2_module_t *module,
                                                 mca_coll_adapt2_direct_describe_fn describe, const void *ctx, int *rc)
{
    const int size = ompi_comm_size(comm);
    if ((long) rcount * size > INT_MAX) { /* the engine's path hands it on, saying why */
        return false;
    }
    mca_coll_adapt2_direct_data_t data;
    mca_coll_adapt2_direct_t *d = mca_coll_adapt2_direct_reduction(module, comm, ADAPT2_COLL_REDUCE_SCATTER_BLOCK, 0,
                                                                   rcount * size, dtype, op, describe, ctx, &data);
    if (NULL == d) {
        return false;
    }
    char *scratch = mca_coll_adapt2_direct_scratch(d, 2 * data.bytes, comm, rc);
    if (NULL == scratch) {
        return true;
    }
    const halving_t h = {
        scratch - data.lb, scratch + data.bytes - data.lb, data.bytes / (size_t) size, data.units / size, op, &data};
    mca_coll_adapt2_direct_take(&data, MPI_IN_PLACE == sbuf ? rbuf : sbuf, rcount * size, dtype, h.work);
    *rc = run_exchanges(d, &h, comm);
    if (OMPI_SUCCESS == *rc) { /* in place too, the result is the first block of rbuf */
        const int rank = ompi_comm_rank(comm);
        if (data.as_is) {
            memcpy((char *) rbuf + data.lb, scratch + (size_t) rank * h.block, h.block);
        } else {
            ompi_datatype_sndrcv(block_at(&h, h.work, rank), h.block_units, data.unit, rbuf, rcount, dtype);
        }
    }
    mca_coll_adapt2_engine_direct_done(module->engine, ADAPT2_COLL_REDUCE_SCATTER_BLOCK, &d->route);
    return true;
}
