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

/* This rank's data as the op combines it: `units` of `unit`; slot i of the
 * scratch (an MPI address) holds one contribution. */
typedef struct reduce_data {
    ompi_datatype_t *unit;
    int units;
    size_t bytes;
    ptrdiff_t lb;       /* the unit data's true lb (0 for a predefined unit) */
    char *scratch;
} reduce_data_t;

static void *slot(const reduce_data_t *r, int i)
{
    return r->scratch + (size_t) i * r->bytes - r->lb;
}

static int reduce_failed(ompi_communicator_t *comm, const mca_coll_adapt2_direct_t *d, int rc, const char *what,
                         int peer)
{
    return mca_coll_adapt2_direct_failed(comm, "MPI_Reduce", "reduce", d, rc, what, peer);
}

/* `own` into `acc` (an MPI address of units of r->unit). */
static void take_own(const reduce_data_t *r, const void *own, int count, ompi_datatype_t *dtype, void *acc)
{
    if (r->unit == dtype) {
        memcpy((char *) acc + r->lb, (const char *) own + r->lb, r->bytes);
    } else {
        ompi_datatype_sndrcv(own, count, dtype, acc, r->units, r->unit);
    }
}

/* Receives the children's data into slots 1.., combines it into `acc`. */
static int gather_children(mca_coll_adapt2_direct_t *d, const reduce_data_t *r, ompi_op_t *op, void *acc,
                           const void *own, int count, ompi_datatype_t *dtype, int tag, ompi_communicator_t *comm)
{
    const adapt2_direct_route_t *route = &d->route;
    int posted = 0, rc = OMPI_SUCCESS;
    for (; posted < route->children && OMPI_SUCCESS == rc; ++posted) {
        rc = MCA_PML_CALL(irecv(slot(r, posted + 1), r->units, r->unit, route->child[posted], tag, comm,
                                &d->sends[posted]));
    }
    if (OMPI_SUCCESS != rc) {
        --posted;
        (void) ompi_request_wait_all(posted, d->sends, MPI_STATUSES_IGNORE);
        return reduce_failed(comm, d, rc, "posting the receive from its child,", route->child[posted]);
    }
    if (acc != own) { /* meanwhile */
        take_own(r, own, count, dtype, acc);
    }
    rc = ompi_request_wait_all(posted, d->sends, MPI_STATUSES_IGNORE);
    if (OMPI_SUCCESS != rc) {
        return reduce_failed(comm, d, rc, "receiving from its children, the first being", route->child[0]);
    }
    for (int i = 0; i < route->children; ++i) {
        ompi_op_reduce(op, slot(r, i + 1), acc, r->units, r->unit);
    }
    return OMPI_SUCCESS;
}

static int send_up(const mca_coll_adapt2_direct_t *d, const void *buf, int count, ompi_datatype_t *dtype, int tag,
                   ompi_communicator_t *comm)
{
    const int parent = d->route.parent;
    const int rc = mca_coll_adapt2_pml_inject_failure()
                       ? OMPI_ERR_UNREACH
                       : MCA_PML_CALL(send(buf, count, dtype, parent, tag, MCA_PML_BASE_SEND_STANDARD, comm));
    return OMPI_SUCCESS == rc ? rc : reduce_failed(comm, d, rc, "sending to its parent,", parent);
}

static int run_reduce(mca_coll_adapt2_direct_t *d, const reduce_data_t *r, const void *own, void *rbuf, int count,
                      ompi_datatype_t *dtype, ompi_op_t *op, ompi_communicator_t *comm)
{
    const int tag = ompi_coll_base_nbc_reserve_tags(comm, 1);
    if (0 == d->route.children) { /* a leaf: its data as it lies */
        return send_up(d, own, count, dtype, tag, comm);
    }
    const bool root = d->route.parent < 0;
    /* the root combines in its result buffer where the data lies there as units */
    void *acc = root && r->unit == dtype ? rbuf : slot(r, 0);
    int rc = gather_children(d, r, op, acc, own, count, dtype, tag, comm);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    if (!root) {
        return send_up(d, acc, r->units, r->unit, tag, comm);
    }
    if (acc != rbuf) {
        ompi_datatype_sndrcv(acc, r->units, r->unit, rbuf, count, dtype);
    }
    return OMPI_SUCCESS;
}

bool mca_coll_adapt2_direct_reduce(const void *sbuf, void *rbuf, int count, ompi_datatype_t *dtype, ompi_op_t *op,
                                   int root, ompi_communicator_t *comm, mca_coll_adapt2_module_t *module,
                                   mca_coll_adapt2_direct_describe_fn describe, const void *ctx, int *rc)
{
    const char *why;
    ompi_datatype_t *unit = count > 0 ? mca_coll_adapt2_unit_type_of(op, dtype, count, &why) : NULL;
    if (NULL == unit || root < 0 || root >= ompi_comm_size(comm)) {
        return false; /* the engine's path hands it on or reports it */
    }
    /* Decided alike on every rank (the plan, the packed size, the op). */
    const mca_coll_adapt2_direct_key_t key = {root, mca_coll_adapt2_packed_bytes(dtype, (size_t) count),
                                              ompi_op_is_commute(op), !ompi_op_is_intrinsic(op)};
    mca_coll_adapt2_direct_t *d = mca_coll_adapt2_direct_route(module, comm, ADAPT2_COLL_REDUCE, &key, describe, ctx);
    if (NULL == d) {
        return false;
    }
    reduce_data_t r = {unit, count, key.bytes, 0, NULL};
    if (unit != dtype) {
        size_t unit_bytes;
        ompi_datatype_type_size(unit, &unit_bytes);
        r.units = (int) (key.bytes / unit_bytes);
    } else {
        ptrdiff_t true_extent;
        ompi_datatype_get_true_extent(dtype, &r.lb, &true_extent);
    }
    r.scratch = mca_coll_adapt2_direct_scratch(d, (size_t) (d->route.children + 1) * key.bytes, comm, "MPI_Reduce",
                                               rc);
    if (NULL == r.scratch) {
        return true;
    }
    const void *own = MPI_IN_PLACE == sbuf ? rbuf : sbuf; /* (in place: the root only) */
    *rc = run_reduce(d, &r, own, rbuf, count, dtype, op, comm);
    mca_coll_adapt2_engine_direct_done(module->engine, ADAPT2_COLL_REDUCE, key.bytes, &d->route);
    return true;
}
