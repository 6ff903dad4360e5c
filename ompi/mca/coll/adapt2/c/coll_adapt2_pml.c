/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * Byte transfers through the PML for the engine's transport. Completion is a
 * request callback that frees the PML request and hands the operation back to
 * the engine; it may run inside the posting call.
 *
 * Arming the callback: ompi_request_set_callback after isend/irecv leaves a
 * window in which another thread may complete the request unseen, which
 * matters only under MPI_THREAD_MULTIPLE. There, with ob1, adapt2 posts
 * persistent requests whose callback is set before they start: no window.
 * pml ucx's persistent receives in Open MPI 4.1 can complete the wrong
 * request (a recycled UCX request keeps a stale link), and set_callback after
 * posting lost completions there (test/mpi/soak.c hung in 5 of about 250
 * runs) and once gave wrong data (most likely a request completed and freed
 * on another thread, recycled, then looked at by set_callback as the
 * caller's). So with
 * any PML but ob1 under MPI_THREAD_MULTIPLE adapt2 sets no callback at all:
 * it keeps each request in a list that its progress function tests
 * (REQUEST_COMPLETE), and runs the completion itself once the request is
 * complete, on whichever thread polls: the request stays adapt2's until then.
 */
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "coll_adapt2.h"

#include "ompi/mca/pml/base/base.h"
#include "ompi/mca/pml/pml.h"

static bool use_persistent; /* decided once, when the first module is enabled */
static bool use_polling;

/* Requests posted without a callback (use_polling), with what completes them. */
typedef struct {
    ompi_request_t *req;
    ompi_request_complete_fn_t done;
    void *data;
} polled_t;
static struct {
    pthread_mutex_t lock;
    polled_t *items;
    size_t count, capacity;   /* the array grows, never shrinks: no allocation per send */
    volatile int32_t waiting; /* count, read without the lock */
} polled = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, 0};

static int poll_requests(void);

void mca_coll_adapt2_pml_choose_arming(void)
{
    static bool chosen;
    if (chosen) {
        return;
    }
    chosen = true;
    const char *pml = mca_pml_base_selected_component.pmlm_version.mca_component_name;
    use_persistent = mca_coll_adapt2_component.thread_multiple && 0 == strcmp(pml, "ob1");
    use_polling = mca_coll_adapt2_component.thread_multiple && !use_persistent;
    if (use_polling) {
        opal_progress_register(poll_requests);
        ADAPT2_VERBOSE(10,
                       "MPI_THREAD_MULTIPLE with pml %s: requests are polled from the progress "
                       "loop (a callback set after posting could miss a completion)",
                       pml);
    }
}

void mca_coll_adapt2_pml_close(void)
{
    if (use_polling) {
        opal_progress_unregister(poll_requests);
        use_polling = false;
    }
    free(polled.items);
    polled.items = NULL;
    polled.count = polled.capacity = 0;
}

static int keep_polled(ompi_request_t *req, ompi_request_complete_fn_t done, void *data)
{
    pthread_mutex_lock(&polled.lock);
    if (polled.count == polled.capacity) {
        const size_t capacity = polled.capacity ? 2 * polled.capacity : 256;
        polled_t *items = realloc(polled.items, capacity * sizeof *items);
        if (NULL == items) { /* no memory to keep it: the callback, window and all */
            pthread_mutex_unlock(&polled.lock);
            (void) ompi_request_set_callback(req, done, data);
            return OMPI_SUCCESS;
        }
        polled.items = items;
        polled.capacity = capacity;
    }
    polled.items[polled.count++] = (polled_t){req, done, data};
    opal_atomic_add_fetch_32(&polled.waiting, 1);
    pthread_mutex_unlock(&polled.lock);
    return OMPI_SUCCESS;
}

/* Takes the complete requests off the list (a batch at a time, under the
 * lock), then completes them outside it: a completion may post again. */
static int poll_requests(void)
{
    if (0 == polled.waiting || 0 != pthread_mutex_trylock(&polled.lock)) {
        return 0;
    }
    polled_t done[64];
    int n = 0;
    for (size_t i = 0; i < polled.count && n < 64;) {
        if (REQUEST_COMPLETE(polled.items[i].req)) {
            done[n++] = polled.items[i];
            polled.items[i] = polled.items[--polled.count];
        } else {
            ++i;
        }
    }
    opal_atomic_add_fetch_32(&polled.waiting, -n);
    pthread_mutex_unlock(&polled.lock);
    for (int i = 0; i < n; ++i) {
        done[i].req->req_complete_cb_data = done[i].data;
        (void) done[i].done(done[i].req); /* frees the request */
    }
    return n;
}

static int pml_done(ompi_request_t *req)
{
    void *op = req->req_complete_cb_data;
    int status = req->req_status.MPI_ERROR;
    ompi_request_free(&req);
    mca_coll_adapt2_engine_op_complete(op, status);
    return 1; /* the request is freed: the PML must not mark it complete */
}

static int arm(ompi_request_t *req, ompi_request_complete_fn_t done, void *data)
{
    if (use_polling) {
        return keep_polled(req, done, data);
    }
    if (!use_persistent) {
        /* Returns what `done` returned (1) when it ran at once: not an error. */
        (void) ompi_request_set_callback(req, done, data);
        return OMPI_SUCCESS;
    }
    req->req_complete_cb_data = data;
    req->req_complete_cb = done;
    int rc = MCA_PML_CALL(start(1, &req));
    if (OMPI_SUCCESS != rc) {
        req->req_complete_cb = NULL;
        ompi_request_free(&req);
    }
    return rc;
}

/* coll_adapt2_inject_send_failure=N: the Nth send of this process fails
 * (on the engine's transport and on the direct path alike). */
bool mca_coll_adapt2_pml_inject_failure(void)
{
    static volatile int32_t sends;
    if (0 == mca_coll_adapt2_component.values.inject_send_failure) {
        return false; /* the common case, without the checked read */
    }
    int n = ADAPT2_INT(inject_send_failure);
    return n > 0 && opal_atomic_add_fetch_32(&sends, 1) == n;
}

int mca_coll_adapt2_pml_isend_then(ompi_communicator_t *comm, const void *buf, size_t len, int peer, int tag,
                                   ompi_request_complete_fn_t done, void *data)
{
    ompi_request_t *req;
    if (mca_coll_adapt2_pml_inject_failure()) {
        return OMPI_ERR_UNREACH;
    }
    int rc = use_persistent ? MCA_PML_CALL(isend_init((void *) buf, len, &ompi_mpi_byte.dt, peer, tag,
                                                      MCA_PML_BASE_SEND_STANDARD, comm, &req))
                            : MCA_PML_CALL(isend((void *) buf, len, &ompi_mpi_byte.dt, peer, tag,
                                                 MCA_PML_BASE_SEND_STANDARD, comm, &req));
    return OMPI_SUCCESS == rc ? arm(req, done, data) : rc;
}

static int pml_isend(void *comm, const void *buf, size_t len, int peer, int tag, void *op)
{
    return mca_coll_adapt2_pml_isend_then((ompi_communicator_t *) comm, buf, len, peer, tag, pml_done, op);
}

static int pml_irecv(void *comm, void *buf, size_t len, int peer, int tag, void *op)
{
    ompi_request_t *req;
    ompi_communicator_t *c = (ompi_communicator_t *) comm;
    int rc = use_persistent ? MCA_PML_CALL(irecv_init(buf, len, &ompi_mpi_byte.dt, peer, tag, c, &req))
                            : MCA_PML_CALL(irecv(buf, len, &ompi_mpi_byte.dt, peer, tag, c, &req));
    return OMPI_SUCCESS == rc ? arm(req, pml_done, op) : rc;
}

void mca_coll_adapt2_pml_ops(ompi_communicator_t *comm, adapt2_transport_ops_t *ops)
{
    ops->ctx = comm;
    ops->isend = pml_isend;
    ops->irecv = pml_irecv;
}
