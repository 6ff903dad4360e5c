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
 * request (a recycled UCX request keeps a stale link), so with ucx adapt2
 * keeps isend/irecv + set_callback; the window is real (test/mpi/soak.c hung
 * in 5 of about 250 runs), so adapt2 declines MPI_THREAD_MULTIPLE over pml
 * ucx unless coll_adapt2_ucx_thread_multiple is 1 (coll_adapt2_module.c).
 */
#include <limits.h>
#include <string.h>

#include "coll_adapt2.h"

#include "ompi/mca/pml/base/base.h"
#include "ompi/mca/pml/pml.h"

static bool use_persistent; /* decided once, when the first module is enabled */

void mca_coll_adapt2_pml_choose_arming(void)
{
    static bool chosen;
    if (chosen) {
        return;
    }
    chosen = true;
    const char *pml = mca_pml_base_selected_component.pmlm_version.mca_component_name;
    use_persistent = mca_coll_adapt2_component.thread_multiple && 0 == strcmp(pml, "ob1");
    if (mca_coll_adapt2_component.thread_multiple && !use_persistent) {
        ADAPT2_VERBOSE(1,
                       "MPI_THREAD_MULTIPLE with pml %s: completion callbacks are set after "
                       "posting (a completion on another thread in that window would be lost; "
                       "pml ob1 has no such window)",
                       pml);
    }
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
