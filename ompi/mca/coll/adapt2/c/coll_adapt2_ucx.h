/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * adapt2's own UCX transport (coll_adapt2_ucx.c, built when configure found
 * UCX): a private UCP context and worker, so that adapt2's progress thread
 * can drive it at any MPI thread level (see coll_adapt2_progress.c).
 */
#ifndef MCA_COLL_ADAPT2_UCX_H
#define MCA_COLL_ADAPT2_UCX_H

#include "coll_adapt2.h"

#ifdef ADAPT2_HAVE_UCX

/* Collective over `comm`, called by every rank in its first adapt2
 * collective there: connects the ranks (addresses exchanged with comm's
 * previously selected allgather) and fills `ops` (ctx = *state). Every rank
 * gets the same result: OMPI_SUCCESS, or an error on all ranks (then the
 * caller uses the PML). */
int mca_coll_adapt2_ucx_connect(ompi_communicator_t *comm, adapt2_transport_ops_t *ops, void **state);
/* When the communicator's module goes (nothing in flight any more). */
void mca_coll_adapt2_ucx_disconnect(void *state);
/* Progresses the worker; safe from any thread; returns events handled. */
int mca_coll_adapt2_ucx_progress(void);

#else

static inline int mca_coll_adapt2_ucx_connect(ompi_communicator_t *comm, adapt2_transport_ops_t *ops, void **state)
{
    (void) comm, (void) ops, (void) state;
    return OMPI_ERR_NOT_SUPPORTED;
}
static inline void mca_coll_adapt2_ucx_disconnect(void *state)
{
    (void) state;
}
static inline int mca_coll_adapt2_ucx_progress(void)
{
    return 0;
}

#endif

#endif
