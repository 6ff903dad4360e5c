/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * The direct path's state, shared by its five collectives
 * (coll_adapt2_direct.c: the route cache, the reductions' data and the
 * broadcast; coll_adapt2_direct_allreduce.c; coll_adapt2_direct_reduce.c;
 * coll_adapt2_direct_allgather.c; coll_adapt2_direct_reduce_scatter.c).
 * The route is planned by the engine (engine/direct_route.cc) once per key
 * and kept in the module with the parameter values it was planned with.
 */
#ifndef MCA_COLL_ADAPT2_DIRECT_H
#define MCA_COLL_ADAPT2_DIRECT_H

#include "coll_adapt2.h"

/* What a route depends on besides the parameters (the same on every rank). */
typedef struct mca_coll_adapt2_direct_key_t {
    int root;         /* bcast and reduce; 0 for allreduce and allgather */
    size_t bytes;     /* the message (packed; allgather: all p blocks) */
    bool commutative; /* reductions: the op's */
    bool user_op;     /* reductions: a user-defined op */
} mca_coll_adapt2_direct_key_t;

struct mca_coll_adapt2_direct_t {
    mca_coll_adapt2_param_values_t values; /* the parameters the route was planned with */
    int collective;                        /* an ADAPT2_COLL_* */
    bool direct;
    mca_coll_adapt2_direct_key_t key;
    adapt2_direct_route_t route;
    ompi_request_t **sends; /* bcast and reduce: one per child */
    char *scratch;          /* reductions: the partner's or children's data; bcast: packed bytes;
                               allgather: the blocks, where the result cannot hold them */
    size_t scratch_bytes;
};
typedef struct mca_coll_adapt2_direct_t mca_coll_adapt2_direct_t;

/* Fills the settings and facts the engine plans a call by (what the
 * engine's path would describe), from the caller's `ctx`. */
typedef void (*mca_coll_adapt2_direct_describe_fn)(const void *ctx, adapt2_call_t *call);

/* Whether the module's calls may take the direct path (coll_adapt2_direct_path
 * on, the transport the PML). */
bool mca_coll_adapt2_direct_available(const mca_coll_adapt2_module_t *module);

/* The collective's direct state when its call runs on the direct path (the
 * path is on, the transport is the PML, the plan says so; the route is
 * planned on the first call of a key), NULL when the engine's path runs it. */
mca_coll_adapt2_direct_t *mca_coll_adapt2_direct_route(mca_coll_adapt2_module_t *module, ompi_communicator_t *comm,
                                                       int collective, const mca_coll_adapt2_direct_key_t *key,
                                                       mca_coll_adapt2_direct_describe_fn describe, const void *ctx);

/* Room for `bytes` of scratch (the partners' or children's data, or a
 * broadcast's packed bytes on a series whose PML mishandles derived types),
 * kept with the route and grown only when a larger size goes direct (at most
 * a few times 16 KiB for the reductions: engine/direct_route.cc; one segment
 * for a broadcast; 64 KiB for an allgather, whose larger calls allocate
 * their own). NULL, with the failure reported and
 * *rc set, when there is no memory. */
char *mca_coll_adapt2_direct_scratch(mca_coll_adapt2_direct_t *d, size_t bytes, ompi_communicator_t *comm, int *rc);

/* A reduction's data as the op combines it: `units` elements of `unit`,
 * `bytes` contiguous bytes from `lb` past an MPI address. */
typedef struct mca_coll_adapt2_direct_data_t {
    ompi_datatype_t *unit;
    int units;
    size_t bytes;
    ptrdiff_t lb;
    bool as_is; /* the user's datatype is the unit: the user's buffers hold the units as they are */
} mca_coll_adapt2_direct_data_t;

/* The state of a reduction (ADAPT2_COLL_REDUCE or _ALLREDUCE) that goes
 * direct, its data described in *data; NULL: the engine's path runs it.
 * Whether it goes direct is decided alike on every rank (the plan, the
 * packed size, the op); how this rank holds its data is its own (ranks may
 * describe one call's data with different datatypes). */
mca_coll_adapt2_direct_t *mca_coll_adapt2_direct_reduction(mca_coll_adapt2_module_t *module, ompi_communicator_t *comm,
                                                           int collective, int root, int count, ompi_datatype_t *dtype,
                                                           ompi_op_t *op, mca_coll_adapt2_direct_describe_fn describe,
                                                           const void *ctx, mca_coll_adapt2_direct_data_t *data);

/* `count` of `dtype` at `own` into `dst` (an MPI address of data->units units). */
void mca_coll_adapt2_direct_take(const mca_coll_adapt2_direct_data_t *data, const void *own, int count,
                                 ompi_datatype_t *dtype, void *dst);

/* A PML call failed: the peers wait for this rank, so the report says who,
 * in which call, where and why (`what` names the step, `peer` the rank it
 * was with), and aborts the job. Callers report at once, without waiting for
 * what they had posted: a receive whose peer failed too would never end. */
int mca_coll_adapt2_direct_failed(ompi_communicator_t *comm, const mca_coll_adapt2_direct_t *d, int rc,
                                  const char *what, int peer);

/* mca_coll_adapt2_direct_failed for exchange `step` of the route (allreduce,
 * allgather, reduce_scatter_block): `what` failed with `peer`. */
int mca_coll_adapt2_direct_exchange_failed(ompi_communicator_t *comm, const mca_coll_adapt2_direct_t *d, int rc,
                                           int step, const char *what, int peer);

/* Exchange `step` of the route with its peer (allreduce, reduce_scatter_block):
 * receives `rcount` of `unit` into `rbuf` if the step receives, sends
 * `scount` from `sbuf` if it sends, both on `tag`, and waits for both; a
 * failure is reported (mca_coll_adapt2_direct_exchange_failed) and returned. */
int mca_coll_adapt2_direct_exchange(ompi_communicator_t *comm, const mca_coll_adapt2_direct_t *d, int step, int tag,
                                    void *rbuf, int rcount, const void *sbuf, int scount, ompi_datatype_t *unit);

typedef struct mca_coll_adapt2_behind_t mca_coll_adapt2_behind_t;
/* The send-behind ring (coll_adapt2_behind.c). post: sends the message
 * (buf, count, dtype; `bytes` packed) to each of `peers` from a copy in the
 * ring and returns without waiting for them (they complete later; a
 * detached call if in flight now). OMPI_SUCCESS; MCA_COLL_ADAPT2_NOT_HELD
 * when the ring cannot hold it (the caller sends as usual); or an error:
 * *failed is the index of the peer whose send failed to post, -1 when the
 * copy failed or an earlier call's send had failed (then reported). free:
 * the module's end. */
enum { MCA_COLL_ADAPT2_NOT_HELD = 1 }; /* not an OMPI_* code (those are 0 or negative) */
int mca_coll_adapt2_behind_post(mca_coll_adapt2_module_t *module, ompi_communicator_t *comm, const void *buf, int count,
                                ompi_datatype_t *dtype, size_t bytes, const int *peers, int npeers, int tag,
                                int *failed);
void mca_coll_adapt2_behind_free(mca_coll_adapt2_module_t *module);
/* A watching call's choice (route->watch): true while a peer of this rank
 * came late lately, so the call leaves its sends behind (post); false: it
 * sends from the message and waits, telling mca_coll_adapt2_behind_came_late
 * when a send was not over within coll_adapt2_detach_grace_us. Back to false
 * once every earlier call's sends were over at the start of 8 calls in a row. */
bool mca_coll_adapt2_behind_peers_late(mca_coll_adapt2_module_t *module);
void mca_coll_adapt2_behind_came_late(mca_coll_adapt2_module_t *module);

/* The allreduce's direct path (coll_adapt2_direct_allreduce.c): a blocking
 * allreduce that the engine plans as recursive doubling. True when it ran (*rc: the MPI result); false: the
 * caller runs the engine's path. `describe(ctx)` describes the call. */
bool mca_coll_adapt2_direct_allreduce(const void *sbuf, void *rbuf, int count, ompi_datatype_t *dtype, ompi_op_t *op,
                                      ompi_communicator_t *comm, mca_coll_adapt2_module_t *module,
                                      mca_coll_adapt2_direct_describe_fn describe, const void *ctx, int *rc);

/* The reduce's direct path (coll_adapt2_direct_reduce.c): a blocking reduce
 * of a commutative op that the engine plans as one whole message with no
 * hellos. As mca_coll_adapt2_direct_allreduce. */
bool mca_coll_adapt2_direct_reduce(const void *sbuf, void *rbuf, int count, ompi_datatype_t *dtype, ompi_op_t *op,
                                   int root, ompi_communicator_t *comm, mca_coll_adapt2_module_t *module,
                                   mca_coll_adapt2_direct_describe_fn describe, const void *ctx, int *rc);

/* The allgather's direct path (coll_adapt2_direct_allgather.c): a blocking
 * allgather of at most 16 KiB in all that the engine plans by Bruck's
 * exchanges. As mca_coll_adapt2_direct_allreduce. */
bool mca_coll_adapt2_direct_allgather(const void *sbuf, int scount, ompi_datatype_t *sdtype, void *rbuf, int rcount,
                                      ompi_datatype_t *rdtype, ompi_communicator_t *comm,
                                      mca_coll_adapt2_module_t *module, mca_coll_adapt2_direct_describe_fn describe,
                                      const void *ctx, int *rc);

/* The reduce-scatter's direct path (coll_adapt2_direct_reduce_scatter.c): a
 * blocking reduce_scatter_block of a commutative op, at most 16 KiB in all,
 * that the engine plans as recursive halving. As
 * mca_coll_adapt2_direct_allreduce. */
bool mca_coll_adapt2_direct_reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, ompi_datatype_t *dtype,
                                                 ompi_op_t *op, ompi_communicator_t *comm,
                                                 mca_coll_adapt2_module_t *module,
                                                 mca_coll_adapt2_direct_describe_fn describe, const void *ctx, int *rc);

#endif
