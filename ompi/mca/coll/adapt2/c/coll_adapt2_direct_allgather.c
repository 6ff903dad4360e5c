/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * The allgather's direct path: a blocking allgather that the engine plans by
 * Bruck's exchanges (all blocks below allgather_bruck_max_bytes, or on one
 * node below allgather_direct_max_bytes) runs them
 * (engine/allgather_plan.h) with the PML's own calls, on packed bytes. The
 * working buffer is the result buffer itself where that is contiguous and
 * the blocks lie in rank order (p a power of two); otherwise it is scratch
 * (scratch(): no allocation once warm), delivered into the result at the
 * end (undoing Bruck's rotation). Each rank's own block comes from its send buffer, or in place
 * from its block of the result. Whether a call goes direct never depends on
 * one rank's datatypes (ranks may describe one call's data differently).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "coll_adapt2_direct.h"

#include "ompi/mca/coll/base/coll_base_util.h"
#include "ompi/mca/pml/pml.h"

/* The blocks being gathered: p blocks of `block` packed bytes. */
typedef struct gathered {
    char *work;
    size_t block;
    bool in_result;  /* work is the user's result buffer */
    const char *own; /* this rank's block where its send buffer holds it contiguous: the first
                        exchange (which sends only it) sends it from there, and it is copied into
                        its slot while that exchange is under way; NULL: in its slot already */
    char *own_slot;
} gathered_t;

/* `count` of `dtype` at `buf` (an MPI address) to or from `bytes` packed
 * bytes at `packed`: a copy where the data is contiguous, else Open MPI's
 * convertor. */
static int convert(void *buf, int count, ompi_datatype_t *dtype, char *packed, size_t bytes, bool packing)
{
    if (0 == bytes) {
        return OMPI_SUCCESS;
    }
    if (ompi_datatype_is_contiguous_memory_layout(dtype, count)) {
        ptrdiff_t lb, extent;
        ompi_datatype_get_true_extent(dtype, &lb, &extent);
        char *data = (char *) buf + lb;
        memcpy(packing ? packed : data, packing ? data : packed, bytes);
        return OMPI_SUCCESS;
    }
    return mca_coll_adapt2_convert_whole(buf, count, dtype, packed, bytes, packing);
}

/* Block `i` of the result: an MPI address. */
static char *result_block(void *rbuf, int rcount, ompi_datatype_t *rdtype, int i)
{
    ptrdiff_t lb, extent;
    ompi_datatype_get_extent(rdtype, &lb, &extent);
    return (char *) rbuf + (ptrdiff_t) i * rcount * extent;
}

static int run_exchanges(const mca_coll_adapt2_direct_t *d, const gathered_t *g, ompi_communicator_t *comm)
{
    const int tag = ompi_coll_base_nbc_reserve_tags(comm, 1);
    for (int i = 0; i < d->route.steps; ++i) {
        const adapt2_direct_step_t *x = &d->route.step[i];
        const int bytes = (int) ((size_t) x->blocks * g->block); /* all p blocks fit an int: engine/direct_route.cc */
        ompi_request_t *reqs[2];
        int rc = MCA_PML_CALL(
            irecv(g->work + (size_t) x->recv_block * g->block, bytes, MPI_BYTE, x->from, tag, comm, &reqs[0]));
        if (OMPI_SUCCESS != rc) {
            return mca_coll_adapt2_direct_exchange_failed(comm, d, rc, i, "posting the receive", x->from);
        }
        const char *data = 0 == i && g->own ? g->own : g->work + (size_t) x->send_block * g->block;
        rc = mca_coll_adapt2_pml_inject_failure()
                 ? OMPI_ERR_UNREACH
                 : MCA_PML_CALL(isend(data, bytes, MPI_BYTE, x->peer, tag, MCA_PML_BASE_SEND_STANDARD, comm, &reqs[1]));
        if (OMPI_SUCCESS != rc) {
            return mca_coll_adapt2_direct_exchange_failed(comm, d, rc, i, "posting the send", x->peer);
        }
        if (0 == i && g->own) {
            memcpy(g->own_slot, g->own, g->block);
        }
        rc = ompi_request_wait_all(2, reqs, MPI_STATUSES_IGNORE);
        if (OMPI_SUCCESS != rc) {
            return mca_coll_adapt2_direct_exchange_failed(comm, d, rc, i, "completing it", x->from);
        }
    }
    return OMPI_SUCCESS;
}

/* The working buffer's blocks into the result (rank order, or Bruck's
 * rotation undone: slot i holds rank (rank + i) % p's block). */
static int deliver(const mca_coll_adapt2_direct_t *d, const gathered_t *g, void *rbuf, int rcount,
                   ompi_datatype_t *rdtype, int rank, int size)
{
    if (g->in_result) {
        return OMPI_SUCCESS;
    }
    if (!d->route.rotated) {
        return convert(rbuf, rcount * size, rdtype, g->work, (size_t) size * g->block, false);
    }
    const int upper = size - rank; /* slots [0, upper) hold blocks [rank, size) */
    int rc = convert(result_block(rbuf, rcount, rdtype, rank), rcount * upper, rdtype, g->work,
                     (size_t) upper * g->block, false);
    if (OMPI_SUCCESS == rc) {
        rc = convert(rbuf, rcount * rank, rdtype, g->work + (size_t) upper * g->block, (size_t) rank * g->block, false);
    }
    return rc;
}

/* Whether the first exchange sends only this rank's block, from `slot`
 * (the plan says so: allgather_plan.h; looked at, not assumed). */
static bool first_sends_own(const adapt2_direct_route_t *route, int slot)
{
    return route->steps > 0 && 1 == route->step[0].blocks && slot == route->step[0].send_block;
}

/* This rank's block into its slot of the working buffer, or (g->own) left
 * where it lies in the send buffer for the first exchange to send it. */
static int take_own(const mca_coll_adapt2_direct_t *d, gathered_t *g, const void *sbuf, int scount,
                    ompi_datatype_t *sdtype, void *rbuf, int rcount, ompi_datatype_t *rdtype, int rank)
{
    const int slot = d->route.rotated ? 0 : rank;
    g->own_slot = g->work + (size_t) slot * g->block;
    if (MPI_IN_PLACE != sbuf) {
        if (first_sends_own(&d->route, slot) && ompi_datatype_is_contiguous_memory_layout(sdtype, scount)) {
            ptrdiff_t lb, extent;
            ompi_datatype_get_true_extent(sdtype, &lb, &extent);
            g->own = (const char *) sbuf + lb;
            return OMPI_SUCCESS;
        }
        return convert((void *) sbuf, scount, sdtype, g->own_slot, g->block, true);
    }
    if (g->in_result) {
        return OMPI_SUCCESS; /* already there */
    }
    return convert(result_block(rbuf, rcount, rdtype, rank), rcount, rdtype, g->own_slot, g->block, true);
}

/* The blocks' room where the result cannot hold them: the route's scratch,
 * kept for the next call, up to kKeptScratchBytes; above, borrowed from the
 * communicator's staging pool (cached by size within
 * coll_adapt2_pool_max_bytes, so a repeated call allocates nothing, and the
 * module keeps no more than that whatever the sizes). */
enum { kKeptScratchBytes = 64 << 10 };
static char *scratch(mca_coll_adapt2_direct_t *d, adapt2_engine_comm_t *engine, ompi_communicator_t *comm, int *rc)
{
    if (d->key.bytes <= kKeptScratchBytes) {
        return mca_coll_adapt2_direct_scratch(d, d->key.bytes, comm, rc);
    }
    char *room = mca_coll_adapt2_engine_scratch_borrow(engine, d->key.bytes);
    if (NULL == room) {
        *rc = OMPI_ERR_OUT_OF_RESOURCE;
        char why[160];
        snprintf(why, sizeof why, "rank %d of %d, allgather of %zu bytes on the direct path: no memory for them",
                 ompi_comm_rank(comm), ompi_comm_size(comm), d->key.bytes);
        mca_coll_adapt2_call_failed(comm, "MPI_Allgather", *rc, why);
    }
    return room;
}

static int gather(const mca_coll_adapt2_direct_t *d, gathered_t *g, const void *sbuf, int scount,
                  ompi_datatype_t *sdtype, void *rbuf, int rcount, ompi_datatype_t *rdtype, ompi_communicator_t *comm)
{
    const int rank = ompi_comm_rank(comm), size = ompi_comm_size(comm);
    int rc = take_own(d, g, sbuf, scount, sdtype, rbuf, rcount, rdtype, rank);
    if (OMPI_SUCCESS != rc) {
        return mca_coll_adapt2_direct_failed(comm, d, rc, "packing its own block (Open MPI's convertor) for", rank);
    }
    rc = run_exchanges(d, g, comm);
    if (OMPI_SUCCESS != rc) {
        return rc; /* reported */
    }
    rc = deliver(d, g, rbuf, rcount, rdtype, rank, size);
    if (OMPI_SUCCESS != rc) {
        return mca_coll_adapt2_direct_failed(comm, d, rc, "unpacking the blocks (Open MPI's convertor) of", rank);
    }
    return OMPI_SUCCESS;
}

static int run_allgather(mca_coll_adapt2_direct_t *d, adapt2_engine_comm_t *engine, const void *sbuf, int scount,
                         ompi_datatype_t *sdtype, void *rbuf, int rcount, ompi_datatype_t *rdtype,
                         ompi_communicator_t *comm)
{
    const int size = ompi_comm_size(comm);
    gathered_t g = {NULL, d->key.bytes / (size_t) size, false, NULL, NULL};
    g.in_result = !d->route.rotated && ompi_datatype_is_contiguous_memory_layout(rdtype, rcount * size);
    if (g.in_result) {
        ptrdiff_t lb, extent;
        ompi_datatype_get_true_extent(rdtype, &lb, &extent);
        g.work = (char *) rbuf + lb;
    } else {
        int rc = OMPI_SUCCESS;
        g.work = scratch(d, engine, comm, &rc);
        if (NULL == g.work) {
            return rc; /* reported */
        }
    }
    int rc = gather(d, &g, sbuf, scount, sdtype, rbuf, rcount, rdtype, comm);
    if (!g.in_result && d->key.bytes > kKeptScratchBytes) {
        mca_coll_adapt2_engine_scratch_give_back(engine, d->key.bytes, g.work);
    }
    return rc;
}

bool mca_coll_adapt2_direct_allgather(const void *sbuf, int scount, ompi_datatype_t *sdtype, void *rbuf, int rcount,
                                      ompi_datatype_t *rdtype, ompi_communicator_t *comm,
                                      mca_coll_adapt2_module_t *module, mca_coll_adapt2_direct_describe_fn describe,
                                      const void *ctx, int *rc)
{
    const int size = ompi_comm_size(comm);
    if ((long) rcount * size > INT_MAX) {
        return false; /* the engine's path reports it */
    }
    const size_t block = mca_coll_adapt2_packed_bytes(rdtype, (size_t) rcount);
    if (MPI_IN_PLACE != sbuf && mca_coll_adapt2_packed_bytes(sdtype, (size_t) scount) != block) {
        return false; /* ... and this */
    }
    const mca_coll_adapt2_direct_key_t key = {0, block * (size_t) size, false, false};
    mca_coll_adapt2_direct_t *d =
        mca_coll_adapt2_direct_route(module, comm, ADAPT2_COLL_ALLGATHER, &key, describe, ctx);
    if (NULL == d) {
        return false;
    }
    *rc = run_allgather(d, module->engine, sbuf, scount, sdtype, rbuf, rcount, rdtype, comm);
    mca_coll_adapt2_engine_direct_done(module->engine, ADAPT2_COLL_ALLGATHER, &d->route);
    return true;
}
