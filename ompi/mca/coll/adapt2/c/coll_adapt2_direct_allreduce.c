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
#include "ompi/mca/pml/pml.h"

typedef struct operands {
    void *acc;       /* the accumulator: the result buffer, or the scratch when packed (an MPI address) */
    void *partner;   /* the partner's data, in the scratch (an MPI address) */
    int count;
    ompi_datatype_t *dtype;
    ompi_op_t *op;
    ptrdiff_t lb;    /* the data's first byte from an MPI address (true lb) */
    size_t bytes;    /* the data's bytes, contiguous in both buffers */
} operands_t;

static int exchange_failed(ompi_communicator_t *comm, const mca_coll_adapt2_direct_t *d, int rc, int step,
                           const char *what)
{
    char where[96];
    snprintf(where, sizeof where, "exchange %d of %d (%s) with", step + 1, d->route.steps, what);
    return mca_coll_adapt2_direct_failed(comm, "MPI_Allreduce", "allreduce", d, rc, where, d->route.step[step].peer);
}

/* acc = lower-ranked data op higher-ranked data, on both partners alike. */
static void fold(const operands_t *o, int peer, int rank)
{
    if (peer < rank) {
        ompi_op_reduce(o->op, o->partner, o->acc, o->count, o->dtype);
    } else {
        ompi_op_reduce(o->op, o->acc, o->partner, o->count, o->dtype);
        memcpy((char *) o->acc + o->lb, (char *) o->partner + o->lb, o->bytes);
    }
}

static int run_exchanges(const mca_coll_adapt2_direct_t *d, const operands_t *o, ompi_communicator_t *comm)
{
    const int tag = ompi_coll_base_nbc_reserve_tags(comm, 1);
    const int rank = ompi_comm_rank(comm);
    for (int i = 0; i < d->route.steps; ++i) {
        const adapt2_direct_step_t *x = &d->route.step[i];
        ompi_request_t *reqs[2];
        int posted = 0, rc = OMPI_SUCCESS;
        if (x->recv) {
            rc = MCA_PML_CALL(irecv(x->into_result ? o->acc : o->partner, o->count, o->dtype, x->peer, tag, comm,
                                    &reqs[posted]));
            posted += OMPI_SUCCESS == rc;
        }
        if (OMPI_SUCCESS == rc && x->send) {
            rc = mca_coll_adapt2_pml_inject_failure()
                     ? OMPI_ERR_UNREACH
                     : MCA_PML_CALL(isend(o->acc, o->count, o->dtype, x->peer, tag, MCA_PML_BASE_SEND_STANDARD,
                                          comm, &reqs[posted]));
            posted += OMPI_SUCCESS == rc;
        }
        if (OMPI_SUCCESS != rc) {
            (void) ompi_request_wait_all(posted, reqs, MPI_STATUSES_IGNORE);
            return exchange_failed(comm, d, rc, i, "posting it");
        }
        rc = ompi_request_wait_all(posted, reqs, MPI_STATUSES_IGNORE);
        if (OMPI_SUCCESS != rc) {
            return exchange_failed(comm, d, rc, i, "completing it");
        }
        if (x->fold) {
            fold(o, x->peer, rank);
        }
    }
    return OMPI_SUCCESS;
}

/* The operands of a rank whose data the op combines where it lies: the
 * result buffer is the accumulator. */
static operands_t in_place(const void *sbuf, void *rbuf, int count, ompi_datatype_t *dtype, ompi_op_t *op,
                           size_t bytes, char *scratch)
{
    ptrdiff_t true_lb, true_extent;
    ompi_datatype_get_true_extent(dtype, &true_lb, &true_extent);
    if (MPI_IN_PLACE != sbuf) {
        memcpy((char *) rbuf + true_lb, (const char *) sbuf + true_lb, bytes);
    }
    const operands_t o = {rbuf, scratch - true_lb, count, dtype, op, true_lb, bytes};
    return o;
}

/* The operands of a rank whose datatype has holes: its contribution packed
 * into the scratch's first half as an array of the op's element type
 * (`unit`), the partner's data in the second half. */
static operands_t packed(const void *sbuf, void *rbuf, int count, ompi_datatype_t *dtype, ompi_op_t *op,
                         ompi_datatype_t *unit, size_t bytes, char *scratch)
{
    size_t unit_bytes;
    ompi_datatype_type_size(unit, &unit_bytes);
    const operands_t o = {scratch, scratch + bytes, (int) (bytes / unit_bytes), unit, op, 0, bytes};
    ompi_datatype_sndrcv(MPI_IN_PLACE == sbuf ? rbuf : sbuf, count, dtype, o.acc, o.count, unit);
    return o;
}

bool mca_coll_adapt2_direct_allreduce(const void *sbuf, void *rbuf, int count, ompi_datatype_t *dtype,
                                      ompi_op_t *op, ompi_communicator_t *comm, mca_coll_adapt2_module_t *module,
                                      mca_coll_adapt2_direct_describe_fn describe, const void *ctx, int *rc)
{
    const char *why;
    ompi_datatype_t *unit = count > 0 ? mca_coll_adapt2_unit_type_of(op, dtype, count, &why) : NULL;
    if (NULL == unit) { /* the engine's path hands it on (as every rank's does) */
        return false;
    }
    /* Whether the call goes direct is decided alike on every rank (the plan
     * and the packed size); how this rank holds its data is its own. */
    const mca_coll_adapt2_direct_key_t key = {0, mca_coll_adapt2_packed_bytes(dtype, (size_t) count),
                                              ompi_op_is_commute(op), !ompi_op_is_intrinsic(op)};
    mca_coll_adapt2_direct_t *d = mca_coll_adapt2_direct_route(module, comm, ADAPT2_COLL_ALLREDUCE, &key, describe,
                                                               ctx);
    if (NULL == d) {
        return false;
    }
    char *scratch = mca_coll_adapt2_direct_scratch(d, 2 * key.bytes, comm, "MPI_Allreduce", rc);
    if (NULL == scratch) {
        return true;
    }
    const bool where_it_lies = unit == dtype && ompi_datatype_is_contiguous_memory_layout(dtype, count);
    const operands_t o = where_it_lies ? in_place(sbuf, rbuf, count, dtype, op, key.bytes, scratch)
                                       : packed(sbuf, rbuf, count, dtype, op, unit, key.bytes, scratch);
    *rc = run_exchanges(d, &o, comm);
    if (OMPI_SUCCESS == *rc && !where_it_lies) {
        ompi_datatype_sndrcv(o.acc, o.count, unit, rbuf, count, dtype);
    }
    mca_coll_adapt2_engine_direct_done(module->engine, ADAPT2_COLL_ALLREDUCE, key.bytes, &d->route);
    return true;
}
