/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * MPI_Reduce, MPI_Ireduce, MPI_Allreduce, MPI_Iallreduce: check the
 * parameters, describe the data as an array of elements the op combines
 * (Open MPI's ompi_op_reduce does the arithmetic), reserve tags, start the
 * engine (engine/reduce_flow.cc). What adapt2 cannot describe goes to the
 * previous component.
 */
#include <limits.h>
#include <string.h>

#include "coll_adapt2.h"
#include "coll_adapt2_direct.h"

#include "ompi/mca/coll/base/coll_base_util.h"

/* The engine points at a unit's data; an op (a user function above all)
 * takes the element's MPI address, true_lb bytes before its data. */
static void *mpi_address(const mca_coll_adapt2_request_t *req, const void *data)
{
    return (char *) data - req->unit_true_lb;
}

static int combine(void *ctx, const void *in, void *inout, size_t units)
{
    mca_coll_adapt2_request_t *req = (mca_coll_adapt2_request_t *) ctx;
    ompi_op_reduce(req->op, mpi_address(req, in), mpi_address(req, inout), units, req->unit_type);
    return OMPI_SUCCESS;
}

static int combine3(void *ctx, const void *in1, const void *in2, void *out, size_t units)
{
    mca_coll_adapt2_request_t *req = (mca_coll_adapt2_request_t *) ctx;
    ompi_3buff_op_reduce(req->op, mpi_address(req, in1), mpi_address(req, in2), mpi_address(req, out), units,
                         req->unit_type);
    return OMPI_SUCCESS;
}

/* The element type the op combines, or NULL (and why) when adapt2 cannot
 * describe the data as an array of such elements. Predefined types (MINLOC/
 * MAXLOC pairs without padding included) are used as they are in memory; a
 * derived type through the packed stream of its single predefined type; that
 * type must have no padding. A user-defined op combines whole user elements,
 * which must then be contiguous. */
ompi_datatype_t *mca_coll_adapt2_unit_type_of(ompi_op_t *op, ompi_datatype_t *dtype, int count, const char **why)
{
    if (!ompi_op_is_intrinsic(op)) {
        if (!ompi_datatype_is_contiguous_memory_layout(dtype, count)) {
            *why = "user-defined op on a non-contiguous datatype";
            return NULL;
        }
        return dtype;
    }
    ompi_datatype_t *base =
        ompi_datatype_is_predefined(dtype) ? dtype : ompi_datatype_get_single_predefined_type_from_args(dtype);
    size_t size;
    ptrdiff_t lb, extent;
    if (NULL == base) {
        *why = "derived datatype of more than one predefined type";
        return NULL;
    }
    ompi_datatype_type_size(base, &size);
    ompi_datatype_get_extent(base, &lb, &extent);
    if ((ptrdiff_t) size != extent) {
        /* MPI_SHORT_INT & co.: combined in memory, adapt2 would write the
         * padding of the receive buffer, which MPI leaves alone. */
        *why = base == dtype ? "pair type with padding (MINLOC/MAXLOC of MPI_SHORT_INT, MPI_DOUBLE_INT, ...)"
                             : "derived datatype of a pair type with padding";
        return NULL;
    }
    return base;
}

/* A user buffer as an array of unit elements: in place in memory when the
 * unit is the datatype itself, else the datatype's packed stream. */
int mca_coll_adapt2_describe_operand(mca_coll_adapt2_request_t *req, int which, const void *buf, int count,
                                     ompi_datatype_t *dtype, adapt2_buffer_t *out)
{
    if (req->unit_type == dtype) {
        ptrdiff_t lb, extent;
        ompi_datatype_get_extent(dtype, &lb, &extent);
        memset(out, 0, sizeof *out);
        out->contig = (char *) buf + req->unit_true_lb;
        out->bytes = (size_t) extent * (size_t) count;
        return OMPI_SUCCESS;
    }
    return mca_coll_adapt2_describe_buffer(req, which, (void *) buf, count, dtype, out);
}

typedef struct reduction_call {
    bool all; /* allreduce */
    const void *sbuf;
    void *rbuf;
    int count;
    ompi_datatype_t *dtype;
    ompi_op_t *op;
    int root; /* reduce only */
    ompi_communicator_t *comm;
    mca_coll_adapt2_module_t *module;
    bool blocking;
} reduction_call_t;

/* auto, tree, ring, recursive_doubling or rabenseifner (previous: the facts say so). */
static int allreduce_algorithm(void)
{
    return mca_coll_adapt2_checked_algorithm(ADAPT2_P_allreduce_algorithm);
}

static const char *algorithm_of(bool all)
{
    return all ? ADAPT2_STRING(allreduce_algorithm) : ADAPT2_STRING(reduce_algorithm);
}

/* The GPU kernel of a predefined op on a predefined unit type
 * (adapt2_device_op_t, adapt2_device_type_t), or 0: none, combine on the host.
 * Every reduction asks, so the tables are static: built on the stack they
 * cost about 800 instructions per call (callgrind), a fifth of the engine's
 * own. */
static void device_kernel_of(ompi_op_t *op, ompi_datatype_t *unit, int *dop, int *dtype)
{
    static const struct {
        ompi_op_t *op;
        int id;
    } ops[] = {
        {MPI_SUM, ADAPT2_DEVICE_OP_SUM},   {MPI_PROD, ADAPT2_DEVICE_OP_PROD},     {MPI_MAX, ADAPT2_DEVICE_OP_MAX},
        {MPI_MIN, ADAPT2_DEVICE_OP_MIN},   {MPI_LAND, ADAPT2_DEVICE_OP_LAND},     {MPI_LOR, ADAPT2_DEVICE_OP_LOR},
        {MPI_LXOR, ADAPT2_DEVICE_OP_LXOR}, {MPI_BAND, ADAPT2_DEVICE_OP_BAND},     {MPI_BOR, ADAPT2_DEVICE_OP_BOR},
        {MPI_BXOR, ADAPT2_DEVICE_OP_BXOR}, {MPI_MINLOC, ADAPT2_DEVICE_OP_MINLOC}, {MPI_MAXLOC, ADAPT2_DEVICE_OP_MAXLOC},
    };
    static const struct {
        ompi_datatype_t *type;
        int id;
    } types[] = {
        {MPI_INT8_T, ADAPT2_DEVICE_TYPE_INT8},          {MPI_SIGNED_CHAR, ADAPT2_DEVICE_TYPE_INT8},
        {MPI_UINT8_T, ADAPT2_DEVICE_TYPE_UINT8},        {MPI_UNSIGNED_CHAR, ADAPT2_DEVICE_TYPE_UINT8},
        {MPI_INT16_T, ADAPT2_DEVICE_TYPE_INT16},        {MPI_SHORT, ADAPT2_DEVICE_TYPE_INT16},
        {MPI_UINT16_T, ADAPT2_DEVICE_TYPE_UINT16},      {MPI_UNSIGNED_SHORT, ADAPT2_DEVICE_TYPE_UINT16},
        {MPI_INT32_T, ADAPT2_DEVICE_TYPE_INT32},        {MPI_INT, ADAPT2_DEVICE_TYPE_INT32},
        {MPI_UINT32_T, ADAPT2_DEVICE_TYPE_UINT32},      {MPI_UNSIGNED, ADAPT2_DEVICE_TYPE_UINT32},
        {MPI_INT64_T, ADAPT2_DEVICE_TYPE_INT64},        {MPI_LONG, ADAPT2_DEVICE_TYPE_INT64},
        {MPI_LONG_LONG, ADAPT2_DEVICE_TYPE_INT64},      {MPI_UINT64_T, ADAPT2_DEVICE_TYPE_UINT64},
        {MPI_UNSIGNED_LONG, ADAPT2_DEVICE_TYPE_UINT64}, {MPI_UNSIGNED_LONG_LONG, ADAPT2_DEVICE_TYPE_UINT64},
        {MPI_FLOAT, ADAPT2_DEVICE_TYPE_FLOAT32},        {MPI_DOUBLE, ADAPT2_DEVICE_TYPE_FLOAT64},
        {MPI_FLOAT_INT, ADAPT2_DEVICE_TYPE_FLOAT_INT},  {MPI_DOUBLE_INT, ADAPT2_DEVICE_TYPE_DOUBLE_INT},
        {MPI_LONG_INT, ADAPT2_DEVICE_TYPE_LONG_INT},    {MPI_2INT, ADAPT2_DEVICE_TYPE_INT_INT},
        {MPI_SHORT_INT, ADAPT2_DEVICE_TYPE_SHORT_INT},
    };
    int found_op = 0, found_type = 0; /* locals: no reload through the out pointers */
    for (size_t i = 0; !found_op && i < sizeof ops / sizeof ops[0]; ++i) {
        if (ops[i].op == op) found_op = ops[i].id;
    }
    for (size_t i = 0; found_op && !found_type && i < sizeof types / sizeof types[0]; ++i) {
        if (types[i].type == unit) found_type = types[i].id;
    }
    *dop = found_type ? found_op : 0;
    *dtype = found_type;
}

void mca_coll_adapt2_request_hold_op(mca_coll_adapt2_request_t *req, ompi_op_t *op, ompi_datatype_t *unit)
{
    /* Held until the call is finished: a detached reduction combines after
     * the user may have freed them. */
    req->op = op;
    OBJ_RETAIN(req->op);
    req->unit_type = unit;
    OBJ_RETAIN(req->unit_type);
    ptrdiff_t true_extent;
    ompi_datatype_get_true_extent(unit, &req->unit_true_lb, &true_extent);
}

void mca_coll_adapt2_reduction_of(mca_coll_adapt2_request_t *req, adapt2_reduction_t *red)
{
    ptrdiff_t lb, extent;
    ompi_datatype_get_extent(req->unit_type, &lb, &extent);
    memset(red, 0, sizeof *red);
    red->unit_bytes = (size_t) extent;
    red->commutative = ompi_op_is_commute(req->op);
    red->ctx = req;
    red->combine = combine;
    red->combine3 = combine3;
    device_kernel_of(req->op, req->unit_type, &red->device_op, &red->device_type);
}

/* The call's description without its buffers: what the engine plans by
 * (settings, facts), so it can say early whether it hands the call on. */
static void describe_call(const reduction_call_t *call, adapt2_call_t *out)
{
    adapt2_call_t c;
    memset(&c, 0, sizeof c);
    c.collective = call->all ? ADAPT2_COLL_ALLREDUCE : ADAPT2_COLL_REDUCE;
    c.root = call->root;
    adapt2_call_settings_t *s = &c.settings;
    s->reproducible = ADAPT2_INT(reproducible);
    mca_coll_adapt2_tree_settings(&s->tree, ADAPT2_P_reduce_algorithm,
                                  call->all ? ADAPT2_P_allreduce_segment_size : ADAPT2_P_reduce_segment_size);
    mca_coll_adapt2_topology_settings(&s->tree, call->module);
    if (call->all) {
        s->algorithm = allreduce_algorithm();
        s->ring_min_bytes = (size_t) ADAPT2_LONG(allreduce_ring_min_bytes);
        s->ring_max_bytes = (size_t) ADAPT2_LONG(allreduce_ring_max_bytes);
        s->recdoubling_max_bytes = (size_t) ADAPT2_LONG(allreduce_recdoubling_max_bytes);
        s->recdoubling_max_ranks = ADAPT2_INT(allreduce_recdoubling_max_ranks);
        s->recdoubling_few_ranks_max_bytes = (size_t) ADAPT2_LONG(allreduce_recdoubling_few_ranks_max_bytes);
        s->rabenseifner_min_bytes = (size_t) ADAPT2_LONG(allreduce_rabenseifner_min_bytes);
        s->rabenseifner_max_bytes = (size_t) ADAPT2_LONG(allreduce_rabenseifner_max_bytes);
    }
    mca_coll_adapt2_call_facts(&c.facts, algorithm_of(call->all), call->blocking, !ompi_op_is_intrinsic(call->op));
    *out = c;
}

static void describe_for_direct(const void *call, adapt2_call_t *out)
{
    describe_call((const reduction_call_t *) call, out);
}

static int start_engine(const reduction_call_t *call, adapt2_call_t *c, mca_coll_adapt2_request_t *req,
                        const adapt2_buffer_t *own, const adapt2_buffer_t *result, bool in_place, const char **why)
{
    c->send = *own;
    if (result) c->recv = *result;
    c->in_place = in_place;
    mca_coll_adapt2_reduction_of(req, &c->reduction);
    c->grace = &req->grace;
    return mca_coll_adapt2_start_call(call->module, req, c, why);
}

/* Starts adapt2's reduction, or returns OMPI_ERR_NOT_SUPPORTED (nothing
 * started, `why` set) for data it cannot describe. */
static int start_reduction(const reduction_call_t *call, mca_coll_adapt2_request_t **out, const char **why)
{
    ompi_datatype_t *unit = mca_coll_adapt2_unit_type_of(call->op, call->dtype, call->count, why);
    if (NULL == unit) {
        return OMPI_ERR_NOT_SUPPORTED;
    }
    if (NULL == mca_coll_adapt2_module_engine(call->module, call->comm)) {
        *why = "the communicator's engine state could not be created (out of memory)";
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    adapt2_call_t c;
    describe_call(call, &c);
    const size_t bytes = mca_coll_adapt2_packed_bytes(call->dtype, (size_t) call->count);
    if (mca_coll_adapt2_hands_on_early(call->module, call->comm, &c, bytes, why)) {
        return OMPI_ERR_NOT_SUPPORTED;
    }
    mca_coll_adapt2_request_t *req = mca_coll_adapt2_request_new(call->comm, call->module);
    if (NULL == req) {
        *why = "no memory for the request";
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    mca_coll_adapt2_request_hold_op(req, call->op, unit);
    const bool in_place = MPI_IN_PLACE == call->sbuf;
    const bool has_result = call->all || ompi_comm_rank(call->comm) == call->root;
    adapt2_buffer_t own, result;
    memset(&result, 0, sizeof result);
    int rc = OMPI_SUCCESS;
    if (has_result) {
        rc = mca_coll_adapt2_describe_operand(req, 1, call->rbuf, call->count, call->dtype, &result);
    }
    if (OMPI_SUCCESS == rc) {
        /* in place, own data is read from the result buffer (same slot) */
        rc = mca_coll_adapt2_describe_operand(req, in_place ? 1 : 0, in_place ? call->rbuf : call->sbuf, call->count,
                                              call->dtype, &own);
    }
    if (OMPI_SUCCESS == rc && has_result) {
        rc = mca_coll_adapt2_device_mark(call->rbuf, &result, &c.facts, bytes, why);
    }
    if (OMPI_SUCCESS == rc) {
        rc = mca_coll_adapt2_device_mark(in_place ? call->rbuf : call->sbuf, &own, &c.facts, bytes, why);
    }
    if (OMPI_SUCCESS == rc) {
        int dop, dtype;
        device_kernel_of(call->op, unit, &dop, &dtype);
        ADAPT2_VERBOSE(20, "(%s) %s of %zu bytes%s%s", call->comm->c_name, call->all ? "allreduce" : "reduce",
                       own.bytes, in_place ? " in place" : "",
                       !(own.on_device || result.on_device) ? ""
                       : dop ? ", GPU buffer(s), combined by a GPU kernel where commutative"
                             : ", GPU buffer(s), no GPU kernel for this op and type: combined on the host");
        rc = start_engine(call, &c, req, &own, has_result ? &result : NULL, in_place && has_result, why);
    }
    if (OMPI_SUCCESS != rc) {
        mca_coll_adapt2_request_discard(req);
        return rc;
    }
    *out = req;
    return OMPI_SUCCESS;
}

/* Runs the call with adapt2, blocking (request NULL) or not; anything adapt2
 * does not take goes to the previous component (`fallback` runs it). */
#define ADAPT2_RUN_OR_FALL_BACK(call, name, request, fallback)                                                \
    do {                                                                                                      \
        mca_coll_adapt2_request_t *req_ = NULL;                                                               \
        const char *why_ = "";                                                                                \
        int rc_ = start_reduction((call), &req_, &why_);                                                      \
        ADAPT2_COMPLETE_OR_FALL_BACK((call)->module, (call)->comm, name, rc_, req_, why_, request, fallback); \
    } while (0)

/* MPI_Reduce on buffers adapt2 can use as they are (host memory, or GPU
 * memory in a call planned for it). */
static int blocking_reduce(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                           int root, struct ompi_communicator_t *comm, mca_coll_adapt2_module_t *m)
{
    reduction_call_t call = {false, sbuf, rbuf, count, dtype, op, root, comm, m, true};
    int rc;
    if (mca_coll_adapt2_direct_reduce(sbuf, rbuf, count, dtype, op, root, comm, m, describe_for_direct, &call, &rc)) {
        return rc;
    }
    ADAPT2_RUN_OR_FALL_BACK(&call, "reduce", (ompi_request_t **) NULL,
                            m->previous.reduce(sbuf, rbuf, count, dtype, op, root, comm, m->previous.reduce_module));
}

int mca_coll_adapt2_ireduce(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                            struct ompi_op_t *op, int root, struct ompi_communicator_t *comm, ompi_request_t **request,
                            mca_coll_base_module_t *base)
{
    mca_coll_adapt2_module_t *m = (mca_coll_adapt2_module_t *) base;
    reduction_call_t call = {false, sbuf, rbuf, count, dtype, op, root, comm, m, false};
    ADAPT2_RUN_OR_FALL_BACK(
        &call, "ireduce", request,
        m->previous.ireduce(sbuf, rbuf, count, dtype, op, root, comm, request, m->previous.ireduce_module));
}

/* MPI_Allreduce on buffers adapt2 can use as they are. */
static int blocking_allreduce(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                              struct ompi_op_t *op, struct ompi_communicator_t *comm, mca_coll_adapt2_module_t *m)
{
    reduction_call_t call = {true, sbuf, rbuf, count, dtype, op, 0, comm, m, true};
    int rc;
    if (mca_coll_adapt2_direct_allreduce(sbuf, rbuf, count, dtype, op, comm, m, describe_for_direct, &call, &rc)) {
        return rc;
    }
    ADAPT2_RUN_OR_FALL_BACK(&call, "allreduce", (ompi_request_t **) NULL,
                            m->previous.allreduce(sbuf, rbuf, count, dtype, op, comm, m->previous.allreduce_module));
}

int mca_coll_adapt2_iallreduce(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                               struct ompi_op_t *op, struct ompi_communicator_t *comm, ompi_request_t **request,
                               mca_coll_base_module_t *base)
{
    mca_coll_adapt2_module_t *m = (mca_coll_adapt2_module_t *) base;
    reduction_call_t call = {true, sbuf, rbuf, count, dtype, op, 0, comm, m, false};
    ADAPT2_RUN_OR_FALL_BACK(
        &call, "iallreduce", request,
        m->previous.iallreduce(sbuf, rbuf, count, dtype, op, comm, request, m->previous.iallreduce_module));
}

/* Bounced (coll_adapt2_bounce.c, mca_coll_adapt2_bounce_pair): the
 * contribution goes in, the result comes out where there is one. */
int mca_coll_adapt2_reduce(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                           int root, struct ompi_communicator_t *comm, mca_coll_base_module_t *base)
{
    mca_coll_adapt2_module_t *m = (mca_coll_adapt2_module_t *) base;
    if (!mca_coll_adapt2_bounce_wanted(mca_coll_adapt2_packed_bytes(dtype, (size_t) count))) {
        return blocking_reduce(sbuf, rbuf, count, dtype, op, root, comm, m);
    }
    const size_t results = ompi_comm_rank(comm) == root ? (size_t) count : 0; /* rbuf: the root's only */
    mca_coll_adapt2_bounce_t b[2];
    const void *s;
    void *r;
    const int rc = mca_coll_adapt2_bounce_pair(m, comm, b, sbuf, (size_t) count, dtype, rbuf, results, dtype, &s, &r)
                       ? blocking_reduce(s, r, count, dtype, op, root, comm, m)
                       : OMPI_ERR_OUT_OF_RESOURCE;
    return mca_coll_adapt2_bounce_end(comm, "MPI_Reduce", b, 2, rc);
}

int mca_coll_adapt2_allreduce(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                              struct ompi_op_t *op, struct ompi_communicator_t *comm, mca_coll_base_module_t *base)
{
    mca_coll_adapt2_module_t *m = (mca_coll_adapt2_module_t *) base;
    if (!mca_coll_adapt2_bounce_wanted(mca_coll_adapt2_packed_bytes(dtype, (size_t) count))) {
        return blocking_allreduce(sbuf, rbuf, count, dtype, op, comm, m);
    }
    mca_coll_adapt2_bounce_t b[2];
    const void *s;
    void *r;
    const int rc =
        mca_coll_adapt2_bounce_pair(m, comm, b, sbuf, (size_t) count, dtype, rbuf, (size_t) count, dtype, &s, &r)
            ? blocking_allreduce(s, r, count, dtype, op, comm, m)
            : OMPI_ERR_OUT_OF_RESOURCE;
    return mca_coll_adapt2_bounce_end(comm, "MPI_Allreduce", b, 2, rc);
}
