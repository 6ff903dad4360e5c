/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * Blocking calls bounced through host memory (coll_adapt2_device_bounce_max).
 * With GPU support on, a blocking call small enough is planned as a host call
 * on every rank, whatever memory each rank's buffers are in (a rank cannot
 * know its peers'), so host buffers keep the direct paths and the host
 * algorithms on a machine with a GPU. A rank whose buffer is GPU memory
 * copies the span its data covers into pinned host memory before the call
 * and back after it: holes go in and come back unchanged. The engine decides
 * which calls bounce (mca_coll_adapt2_engine_device_bounces); this file only
 * moves the bytes.
 */
#include "coll_adapt2.h"

#include <stdio.h>
#include <string.h>

bool mca_coll_adapt2_bounce_wanted(size_t message_bytes)
{
    if (!mca_coll_adapt2_device_active()) {
        return false;
    }
    adapt2_call_facts_t facts;
    mca_coll_adapt2_call_facts(&facts, NULL, true, false);
    return 0 != mca_coll_adapt2_engine_device_bounces(&facts, message_bytes);
}

/* The bytes `count` elements of `dtype` at `buf` cover, holes included. */
static char *span_of(const void *buf, size_t count, ompi_datatype_t *dtype, size_t *bytes)
{
    ptrdiff_t lb, extent, true_lb, true_extent;
    ompi_datatype_get_extent(dtype, &lb, &extent);
    ompi_datatype_get_true_extent(dtype, &true_lb, &true_extent);
    const ptrdiff_t step = (ptrdiff_t) (count - 1) * extent;
    char *first = (char *) buf + true_lb + (step < 0 ? step : 0);
    char *end = (char *) buf + true_lb + true_extent + (step > 0 ? step : 0);
    *bytes = (size_t) (end - first);
    return first;
}

static bool copy_failed(mca_coll_adapt2_bounce_t *b, void *dst, const void *src, const char *what)
{
    if (0 == mca_coll_adapt2_engine_device_copy(b->engine, dst, src, b->bytes)) {
        return false;
    }
    snprintf(b->why, sizeof b->why, "copying %zu bytes of a GPU buffer %s host memory failed: %s", b->bytes, what,
             mca_coll_adapt2_engine_device_last_error());
    return true;
}

void *mca_coll_adapt2_bounce_take(mca_coll_adapt2_module_t *module, ompi_communicator_t *comm,
                                  mca_coll_adapt2_bounce_t *b, const void *buf, size_t count, ompi_datatype_t *dtype,
                                  int ways)
{
    memset(b, 0, sizeof *b);
    if (0 == count || MPI_IN_PLACE == buf) {
        return (void *) buf;
    }
    size_t bytes;
    char *first = span_of(buf, count, dtype, &bytes);
    if (0 == bytes || 0 == mca_coll_adapt2_engine_memory_type(first)) {
        return (void *) buf; /* host memory: the call uses it as it is */
    }
    b->engine = mca_coll_adapt2_module_engine(module, comm);
    b->host = b->engine ? mca_coll_adapt2_engine_bounce_borrow(b->engine, bytes) : NULL;
    if (NULL == b->host) {
        snprintf(b->why, sizeof b->why, "no pinned host memory for %zu bytes of a GPU buffer (%s)", bytes,
                 b->engine ? mca_coll_adapt2_engine_device_last_error() : "no engine state");
        return (void *) buf;
    }
    b->user = first;
    b->bytes = bytes;
    b->out = 0 != (ways & ADAPT2_BOUNCE_OUT);
    /* a result written into a type with holes must bring the holes back as
     * they were: its span goes in too */
    const bool whole = ompi_datatype_is_contiguous_memory_layout(dtype, (int) count);
    if (((ways & ADAPT2_BOUNCE_IN) || !whole) && copy_failed(b, b->host, first, "into")) {
        return (void *) buf;
    }
    return (char *) b->host + ((const char *) buf - first);
}

bool mca_coll_adapt2_bounce_pair(mca_coll_adapt2_module_t *module, ompi_communicator_t *comm,
                                 mca_coll_adapt2_bounce_t b[2], const void *sbuf, size_t scount,
                                 ompi_datatype_t *sdtype, void *rbuf, size_t rcount, ompi_datatype_t *rdtype,
                                 const void **s, void **r)
{
    memset(&b[1], 0, sizeof b[1]);
    *s = mca_coll_adapt2_bounce_take(module, comm, &b[0], sbuf, scount, sdtype, ADAPT2_BOUNCE_IN);
    *r = rbuf;
    if (mca_coll_adapt2_bounce_ok(b, 1)) {
        const int ways = ADAPT2_BOUNCE_OUT | (MPI_IN_PLACE == sbuf ? ADAPT2_BOUNCE_IN : 0);
        *r = mca_coll_adapt2_bounce_take(module, comm, &b[1], rbuf, rcount, rdtype, ways);
    }
    return mca_coll_adapt2_bounce_ok(b, 2);
}

int mca_coll_adapt2_bounce_end(ompi_communicator_t *comm, const char *call, mca_coll_adapt2_bounce_t *b, int n, int rc)
{
    const char *why = NULL;
    for (int i = 0; i < n; ++i) {
        if (b[i].why[0]) {
            why = b[i].why;
        } else if (NULL != b[i].host && OMPI_SUCCESS == rc && b[i].out &&
                   copy_failed(&b[i], b[i].user, b[i].host, "back from")) {
            why = b[i].why;
        }
        if (NULL != b[i].host) {
            mca_coll_adapt2_engine_bounce_give_back(b[i].engine, b[i].host, b[i].bytes);
            b[i].host = NULL;
        }
    }
    if (NULL != why) {
        rc = OMPI_SUCCESS == rc ? OMPI_ERROR : rc;
        mca_coll_adapt2_call_failed(comm, call, rc, why);
    }
    return rc;
}
