/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * The direct path: a blocking broadcast that the engine plans as one whole
 * message with no hellos is the plan's tree walked with the PML's own calls:
 * receive the message from the parent, send it to each child, wait for the
 * sends. The user's datatype goes to the PML as is, so no buffer is
 * described, no request or schedule is made, and the call costs little more
 * than the point-to-point it posts (docs/design.md, "The latency path").
 * The reductions' direct paths (coll_adapt2_direct_allreduce.c,
 * coll_adapt2_direct_reduce.c) and the allgather's
 * (coll_adapt2_direct_allgather.c) share the route cache kept here.
 *
 * A route is planned by the engine (engine/direct_route.cc) once per key
 * (root, size, op) and kept in the module with the parameter values it was
 * planned with: a call whose key and parameters are the same reuses it (one
 * compare of the values: MPI_T may change any of them between calls).
 * Collectives on one communicator never run concurrently (MPI), so the
 * module's routes need no lock.
 */
#include <limits.h>
#include <string.h>

#include "coll_adapt2_direct.h"

#include "ompi/mca/coll/base/coll_base_util.h"
#include "ompi/mca/pml/pml.h"

/* The direct path's collectives: the module's slot of each one's route, and
 * its names in reports. */
static const struct {
    int collective;
    const char *name, *call;
} kDirect[ADAPT2_DIRECT_SLOTS] = {
    {ADAPT2_COLL_BCAST, "bcast", "MPI_Bcast"},
    {ADAPT2_COLL_ALLREDUCE, "allreduce", "MPI_Allreduce"},
    {ADAPT2_COLL_REDUCE, "reduce", "MPI_Reduce"},
    {ADAPT2_COLL_ALLGATHER, "allgather", "MPI_Allgather"},
    {ADAPT2_COLL_REDUCE_SCATTER_BLOCK, "reduce_scatter_block", "MPI_Reduce_scatter_block"},
};

/* Whether the collective has a root (bcast and reduce: their trees). */
static bool rooted(int collective)
{
    return ADAPT2_COLL_BCAST == collective || ADAPT2_COLL_REDUCE == collective;
}

static int slot_of(int collective)
{
    int slot = 0;
    while (slot < ADAPT2_DIRECT_SLOTS - 1 && kDirect[slot].collective != collective) {
        ++slot;
    }
    return slot;
}

void mca_coll_adapt2_direct_free(mca_coll_adapt2_module_t *module)
{
    mca_coll_adapt2_behind_free(module); /* its sends are over: each held the communicator */
    for (int i = 0; i < ADAPT2_DIRECT_SLOTS; ++i) {
        mca_coll_adapt2_direct_t *d = module->direct[i];
        if (d) {
            free(d->route.child);
            free(d->sends);
            free(d->scratch);
            free(d);
            module->direct[i] = NULL;
        }
    }
}

/* The collective's state, made on its first call; the per-child arrays only
 * for the trees (bcast and reduce: at most the communicator's size). */
static mca_coll_adapt2_direct_t *direct_state(mca_coll_adapt2_module_t *module, int collective, int size)
{
    const int slot = slot_of(collective);
    mca_coll_adapt2_direct_t *d = module->direct[slot];
    if (d) {
        return d;
    }
    const bool tree = rooted(collective);
    d = calloc(1, sizeof *d);
    if (d && tree) {
        d->route.child = malloc((size_t) size * sizeof *d->route.child);
        d->sends = malloc((size_t) size * sizeof *d->sends);
    }
    if (!d || (tree && (!d->route.child || !d->sends))) {
        if (d) {
            free(d->route.child);
            free(d->sends);
            free(d);
        }
        return NULL;
    }
    d->collective = collective;
    module->direct[slot] = d;
    return d;
}

static bool route_current(const mca_coll_adapt2_direct_t *d, const mca_coll_adapt2_direct_key_t *key)
{
    /* (whether GPU support is on is decided once, before the first plan) */
    return d->key.root == key->root && d->key.bytes == key->bytes && d->key.commutative == key->commutative &&
           d->key.user_op == key->user_op &&
           0 == memcmp(&d->values, &mca_coll_adapt2_component.values, sizeof d->values);
}

/* Plans the route of the call `key` and `describe` say (the engine decides
 * whether it goes direct). NULL when it cannot be planned (out of memory):
 * the engine's path runs and reports. */
static mca_coll_adapt2_direct_t *plan_route(mca_coll_adapt2_module_t *module, ompi_communicator_t *comm, int collective,
                                            const mca_coll_adapt2_direct_key_t *key,
                                            mca_coll_adapt2_direct_describe_fn describe, const void *ctx)
{
    adapt2_engine_comm_t *engine = mca_coll_adapt2_module_engine(module, comm);
    mca_coll_adapt2_direct_t *d = engine ? direct_state(module, collective, ompi_comm_size(comm)) : NULL;
    if (NULL == d) {
        return NULL;
    }
    adapt2_call_t call;
    describe(ctx, &call);
    call.collective = collective;
    call.root = key->root;
    call.recv.bytes = key->bytes;
    call.reduction.commutative = key->commutative;
    memcpy(&d->values, &mca_coll_adapt2_component.values, sizeof d->values);
    d->key = *key;
    d->direct = 1 == mca_coll_adapt2_engine_direct_route(engine, &call, &d->route);
    return d;
}

char *mca_coll_adapt2_direct_scratch(mca_coll_adapt2_direct_t *d, size_t bytes, ompi_communicator_t *comm, int *rc)
{
    if (d->scratch_bytes < bytes) {
        char *grown = realloc(d->scratch, bytes);
        if (NULL == grown) {
            *rc = OMPI_ERR_OUT_OF_RESOURCE;
            char why[160];
            snprintf(why, sizeof why,
                     "rank %d of %d, %s of %zu bytes on the direct path: no memory for %zu bytes "
                     "of scratch",
                     ompi_comm_rank(comm), ompi_comm_size(comm), kDirect[slot_of(d->collective)].name, d->key.bytes,
                     bytes);
            mca_coll_adapt2_call_failed(comm, kDirect[slot_of(d->collective)].call, *rc, why);
            return NULL;
        }
        d->scratch = grown;
        d->scratch_bytes = bytes;
    }
    return d->scratch;
}

/* coll_adapt2_direct_path, read without the checked read's call unless it
 * is neither 0 nor 1 (then that reports it and gives the default). */
static bool direct_path_on(void)
{
    const int value = mca_coll_adapt2_component.values.direct_path;
    return 1 == value || (0 != value && 1 == ADAPT2_INT(direct_path));
}

bool mca_coll_adapt2_direct_available(const mca_coll_adapt2_module_t *module)
{
    return direct_path_on() && ADAPT2_TRANSPORT_PML == module->transport;
}

mca_coll_adapt2_direct_t *mca_coll_adapt2_direct_route(mca_coll_adapt2_module_t *module, ompi_communicator_t *comm,
                                                       int collective, const mca_coll_adapt2_direct_key_t *key,
                                                       mca_coll_adapt2_direct_describe_fn describe, const void *ctx)
{
    if (!mca_coll_adapt2_direct_available(module)) {
        return NULL;
    }
    mca_coll_adapt2_direct_t *d = module->direct[slot_of(collective)];
    if (NULL == d || !route_current(d, key)) {
        d = plan_route(module, comm, collective, key, describe, ctx);
    }
    if (NULL == d || !d->direct) {
        return NULL;
    }
    if (!module->rules_check_posted) { /* every rank's first call, whatever path it takes */
        mca_coll_adapt2_rules_check_post(module, comm);
    }
    if (mca_coll_adapt2_component.values.verbose >= 20) {
        char from[32] = "";
        if (rooted(collective)) {
            snprintf(from, sizeof from, ADAPT2_COLL_BCAST == collective ? " from %d" : " to %d", key->root);
        }
        ADAPT2_VERBOSE(20, "(%s) %s of %zu bytes%s: direct path, %s", comm->c_name, kDirect[slot_of(collective)].name,
                       key->bytes, from, d->route.plan);
    }
    return d;
}

int mca_coll_adapt2_direct_failed(ompi_communicator_t *comm, const mca_coll_adapt2_direct_t *d, int rc,
                                  const char *what, int peer)
{
    char why[256], root[32] = "";
    if (rooted(d->collective)) {
        snprintf(root, sizeof root, " (root %d)", d->key.root);
    }
    snprintf(why, sizeof why, "rank %d of %d, %s of %zu bytes%s on the direct path: %s rank %d failed with error %d",
             ompi_comm_rank(comm), ompi_comm_size(comm), kDirect[slot_of(d->collective)].name, d->key.bytes, root, what,
             peer, rc);
    mca_coll_adapt2_call_failed(comm, kDirect[slot_of(d->collective)].call, rc, why);
    return rc;
}

int mca_coll_adapt2_direct_exchange_failed(ompi_communicator_t *comm, const mca_coll_adapt2_direct_t *d, int rc,
                                           int step, const char *what, int peer)
{
    char where[96];
    snprintf(where, sizeof where, "exchange %d of %d (%s) with", step + 1, d->route.steps, what);
    return mca_coll_adapt2_direct_failed(comm, d, rc, where, peer);
}

int mca_coll_adapt2_direct_exchange(ompi_communicator_t *comm, const mca_coll_adapt2_direct_t *d, int step, int tag,
                                    void *rbuf, int rcount, const void *sbuf, int scount, ompi_datatype_t *unit)
{
    const adapt2_direct_step_t *x = &d->route.step[step];
    ompi_request_t *reqs[2];
    int posted = 0, rc = OMPI_SUCCESS;
    if (x->recv) {
        rc = MCA_PML_CALL(irecv(rbuf, rcount, unit, x->peer, tag, comm, &reqs[posted]));
        posted += OMPI_SUCCESS == rc;
    }
    if (OMPI_SUCCESS == rc && x->send) {
        rc = mca_coll_adapt2_pml_inject_failure()
                 ? OMPI_ERR_UNREACH
                 : MCA_PML_CALL(isend((void *) sbuf, scount, unit, x->peer, tag, MCA_PML_BASE_SEND_STANDARD, comm,
                                      &reqs[posted]));
        posted += OMPI_SUCCESS == rc;
    }
    if (OMPI_SUCCESS != rc) {
        return mca_coll_adapt2_direct_exchange_failed(comm, d, rc, step, "posting it", x->peer);
    }
    rc = ompi_request_wait_all(posted, reqs, MPI_STATUSES_IGNORE);
    if (OMPI_SUCCESS != rc) {
        return mca_coll_adapt2_direct_exchange_failed(comm, d, rc, step, "completing it", x->peer);
    }
    return OMPI_SUCCESS;
}

/* ---- the reductions' data ------------------------------------------------ */

mca_coll_adapt2_direct_t *mca_coll_adapt2_direct_reduction(mca_coll_adapt2_module_t *module, ompi_communicator_t *comm,
                                                           int collective, int root, int count, ompi_datatype_t *dtype,
                                                           ompi_op_t *op, mca_coll_adapt2_direct_describe_fn describe,
                                                           const void *ctx, mca_coll_adapt2_direct_data_t *data)
{
    const char *why;
    ompi_datatype_t *unit = count > 0 ? mca_coll_adapt2_unit_type_of(op, dtype, count, &why) : NULL;
    if (NULL == unit) { /* the engine's path hands it on (as every rank's does) */
        return NULL;
    }
    const mca_coll_adapt2_direct_key_t key = {root, mca_coll_adapt2_packed_bytes(dtype, (size_t) count),
                                              ompi_op_is_commute(op), !ompi_op_is_intrinsic(op)};
    mca_coll_adapt2_direct_t *d = mca_coll_adapt2_direct_route(module, comm, collective, &key, describe, ctx);
    if (NULL == d) {
        return NULL;
    }
    /* the unit is the user's datatype (then contiguous: unit_type_of) or a
     * predefined type (true lb 0) */
    data->unit = unit;
    data->bytes = key.bytes;
    data->as_is = unit == dtype;
    data->units = count;
    data->lb = 0;
    if (data->as_is) {
        ptrdiff_t true_extent;
        ompi_datatype_get_true_extent(dtype, &data->lb, &true_extent);
    } else {
        size_t unit_bytes;
        ompi_datatype_type_size(unit, &unit_bytes);
        data->units = (int) (key.bytes / unit_bytes);
    }
    return d;
}

void mca_coll_adapt2_direct_take(const mca_coll_adapt2_direct_data_t *data, const void *own, int count,
                                 ompi_datatype_t *dtype, void *dst)
{
    if (data->as_is) {
        memcpy((char *) dst + data->lb, (const char *) own + data->lb, data->bytes);
    } else {
        ompi_datatype_sndrcv(own, count, dtype, dst, data->units, data->unit);
    }
}

/* ---- the broadcast ------------------------------------------------------- */

/* The buffer the PML moves: the user's, or, where the PML cannot be trusted
 * with a derived datatype (ADAPT2_PML_MOVES_DERIVED_TYPES, the series'
 * header), the packed bytes in the route's scratch: the same bytes on the
 * wire, so each rank decides by its own datatype. */
typedef struct {
    void *buf;
    int count;
    ompi_datatype_t *dtype;
    bool packed;
} bcast_buffer_t;

static int bcast_buffer(mca_coll_adapt2_direct_t *d, void *buf, int count, ompi_datatype_t *dtype,
                        ompi_communicator_t *comm, bcast_buffer_t *out)
{
    *out = (bcast_buffer_t){buf, count, dtype, false};
    if (ADAPT2_PML_MOVES_DERIVED_TYPES || d->key.bytes > INT_MAX ||
        ompi_datatype_is_contiguous_memory_layout(dtype, count)) {
        return OMPI_SUCCESS;
    }
    int rc = OMPI_SUCCESS;
    char *packed = mca_coll_adapt2_direct_scratch(d, d->key.bytes, comm, &rc);
    if (NULL != packed) {
        *out = (bcast_buffer_t){packed, (int) d->key.bytes, &ompi_mpi_byte.dt, true};
    }
    return rc;
}

/* Sends left behind (route->leave_behind): the message goes to the children
 * from a copy in the send-behind ring, and the call returns without waiting
 * for them. MCA_COLL_ADAPT2_NOT_HELD where the ring cannot hold the call. */
static int send_behind(mca_coll_adapt2_module_t *module, mca_coll_adapt2_direct_t *d, const bcast_buffer_t *m, int tag,
                       ompi_communicator_t *comm)
{
    const adapt2_direct_route_t *r = &d->route;
    int failed;
    const int rc = mca_coll_adapt2_behind_post(module, comm, m->buf, m->count, m->dtype, d->key.bytes, r->child,
                                               r->children, tag, &failed);
    if (OMPI_SUCCESS == rc || MCA_COLL_ADAPT2_NOT_HELD == rc) {
        return rc;
    }
    return failed < 0 ? mca_coll_adapt2_direct_failed(comm, d, rc, "copying its message for", r->child[0])
                      : mca_coll_adapt2_direct_failed(comm, d, rc, "posting the send to its child,", r->child[failed]);
}

/* Small messages (route->eager, up to 256 B): one blocking send per child in
 * turn, each over once its data is buffered, so no child waits for another
 * (from 512 B a send on shared memory waits for its receiver); the PML
 * sends such a message inline, without a request (measured with
 * perf/overhead_bench, np 2, 64 B, 5 interleaved runs: the root's median
 * time in the call 0.204-0.262 us against 0.209-0.270 with isend and wait,
 * 1.06-1.30x the bare loop against 1.30-1.41x). */
static int send_each(mca_coll_adapt2_direct_t *d, const bcast_buffer_t *m, ompi_communicator_t *comm, int tag)
{
    const adapt2_direct_route_t *r = &d->route;
    for (int c = 0; c < r->children; ++c) {
        int rc =
            mca_coll_adapt2_pml_inject_failure()
                ? OMPI_ERR_UNREACH
                : MCA_PML_CALL(send(m->buf, m->count, m->dtype, r->child[c], tag, MCA_PML_BASE_SEND_STANDARD, comm));
        if (OMPI_SUCCESS != rc) {
            return mca_coll_adapt2_direct_failed(comm, d, rc, "sending to its child,", r->child[c]);
        }
    }
    return OMPI_SUCCESS;
}

/* Whether a send is still in flight when coll_adapt2_detach_grace_us has
 * passed since `start` (progressing meanwhile): its peer came late. */
static bool outlives_grace(int n, ompi_request_t **sends, double start)
{
    const double grace = ADAPT2_INT(detach_grace_us);
    for (int i = 0; i < n; ++i) {
        while (!REQUEST_COMPLETE(sends[i])) {
            if (mca_coll_adapt2_now_us() - start >= grace) {
                return true;
            }
            opal_progress();
        }
    }
    return false;
}

/* The children's sends from the message itself, waited for; `watching` (a
 * route->watch call's module, else NULL) hears when one outlived the grace
 * period. */
static int send_and_wait(mca_coll_adapt2_direct_t *d, const bcast_buffer_t *m, void *buf, int count,
                         ompi_datatype_t *dtype, int tag, ompi_communicator_t *comm, mca_coll_adapt2_module_t *watching)
{
    const double start = NULL != watching ? mca_coll_adapt2_now_us() : 0;
    const adapt2_direct_route_t *r = &d->route;
    int posted = 0, rc = OMPI_SUCCESS;
    for (; posted < r->children; ++posted) {
        rc = mca_coll_adapt2_pml_inject_failure()
                 ? OMPI_ERR_UNREACH
                 : MCA_PML_CALL(isend(m->buf, m->count, m->dtype, r->child[posted], tag, MCA_PML_BASE_SEND_STANDARD,
                                      comm, &d->sends[posted]));
        if (OMPI_SUCCESS != rc) {
            return mca_coll_adapt2_direct_failed(comm, d, rc, "posting the send to its child,", r->child[posted]);
        }
    }
    /* the children's sends read the packed bytes while they are unpacked */
    if (r->parent >= 0 && m->packed &&
        OMPI_SUCCESS != (rc = mca_coll_adapt2_convert_whole(buf, count, dtype, m->buf, d->key.bytes, false))) {
        return mca_coll_adapt2_direct_failed(
            comm, d, rc, "unpacking into its datatype (Open MPI's convertor) what came from", r->parent);
    }
    if (NULL != watching && outlives_grace(posted, d->sends, start)) {
        mca_coll_adapt2_behind_came_late(watching);
    }
    rc = ompi_request_wait_all(posted, d->sends, MPI_STATUSES_IGNORE);
    if (OMPI_SUCCESS != rc) {
        return mca_coll_adapt2_direct_failed(comm, d, rc, "completing its sends to its children, the first being",
                                             r->child[0]);
    }
    return OMPI_SUCCESS;
}

static int run_bcast(mca_coll_adapt2_module_t *module, mca_coll_adapt2_direct_t *d, void *buf, int count,
                     ompi_datatype_t *dtype, ompi_communicator_t *comm)
{
    const adapt2_direct_route_t *r = &d->route;
    const int tag = ompi_coll_base_nbc_reserve_tags(comm, 1);
    bcast_buffer_t m;
    int rc = bcast_buffer(d, buf, count, dtype, comm, &m);
    if (OMPI_SUCCESS != rc) {
        return rc; /* reported */
    }
    if (r->parent >= 0) {
        rc = MCA_PML_CALL(recv(m.buf, m.count, m.dtype, r->parent, tag, comm, MPI_STATUS_IGNORE));
        if (OMPI_SUCCESS != rc) {
            return mca_coll_adapt2_direct_failed(comm, d, rc, "receiving the message from its parent,", r->parent);
        }
    } else if (m.packed &&
               OMPI_SUCCESS != (rc = mca_coll_adapt2_convert_whole(buf, count, dtype, m.buf, d->key.bytes, true))) {
        return mca_coll_adapt2_direct_failed(comm, d, rc, "packing its datatype (Open MPI's convertor) for",
                                             r->child[0]);
    }
    if (r->children > 0 && (r->leave_behind || (r->watch && mca_coll_adapt2_behind_peers_late(module))) &&
        MCA_COLL_ADAPT2_NOT_HELD != (rc = send_behind(module, d, &m, tag, comm))) {
        if (OMPI_SUCCESS == rc && r->parent >= 0 && m.packed &&
            OMPI_SUCCESS != (rc = mca_coll_adapt2_convert_whole(buf, count, dtype, m.buf, d->key.bytes, false))) {
            return mca_coll_adapt2_direct_failed(
                comm, d, rc, "unpacking into its datatype (Open MPI's convertor) what came from", r->parent);
        }
        return rc;
    }
    if (r->eager && !m.packed) {
        return send_each(d, &m, comm, tag);
    }
    return send_and_wait(d, &m, buf, count, dtype, tag, comm, r->watch ? module : NULL);
}

static void describe_bcast(const void *module, adapt2_call_t *call)
{
    mca_coll_adapt2_describe_bcast(call, (mca_coll_adapt2_module_t *) module, 0, true);
}

bool mca_coll_adapt2_direct_bcast(void *buf, int count, ompi_datatype_t *datatype, int root, ompi_communicator_t *comm,
                                  mca_coll_adapt2_module_t *module, int *rc)
{
    if (root < 0 || root >= ompi_comm_size(comm)) {
        return false;
    }
    const mca_coll_adapt2_direct_key_t key = {root, mca_coll_adapt2_packed_bytes(datatype, (size_t) count), false,
                                              false};
    mca_coll_adapt2_direct_t *d =
        mca_coll_adapt2_direct_route(module, comm, ADAPT2_COLL_BCAST, &key, describe_bcast, module);
    if (NULL == d) {
        return false;
    }
    *rc = run_bcast(module, d, buf, count, datatype, comm);
    mca_coll_adapt2_engine_direct_done(module->engine, ADAPT2_COLL_BCAST, &d->route);
    return true;
}
