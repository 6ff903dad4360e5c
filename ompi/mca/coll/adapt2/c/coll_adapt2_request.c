/*
 * The request MPI_Wait/MPI_Test see for an adapt2 collective. The engine
 * reports completion once (mca_coll_adapt2_request_done); the user frees the
 * request, possibly before that (MPI_Request_free), in which case the
 * resources go when the engine is done.
 */
#include <string.h>

#include "coll_adapt2.h"

enum { REQ_ACTIVE = 0, REQ_COMPLETE = 1, REQ_FREED_EARLY = 2 };

OBJ_CLASS_INSTANCE(mca_coll_adapt2_request_t, ompi_coll_base_nbc_request_t, NULL, NULL);

static void request_destroy(mca_coll_adapt2_request_t *req)
{
    mca_coll_adapt2_release_buffers(req);
    OBJ_RELEASE(req->comm);
    OMPI_REQUEST_FINI(&req->nbc.super);
    req->nbc.super.req_state = OMPI_REQUEST_INVALID;
    OBJ_RELEASE(req);
}

static int request_free(ompi_request_t **request)
{
    mca_coll_adapt2_request_t *req = (mca_coll_adapt2_request_t *) *request;
    int32_t expected = REQ_ACTIVE;
    *request = MPI_REQUEST_NULL;
    if (opal_atomic_compare_exchange_strong_32(&req->state, &expected, REQ_FREED_EARLY)) {
        return OMPI_SUCCESS; /* still running: request_done destroys it */
    }
    request_destroy(req);
    return OMPI_SUCCESS;
}

static int request_cancel(ompi_request_t *request, int complete)
{
    (void) request;
    (void) complete;
    return MPI_ERR_REQUEST; /* collectives cannot be cancelled */
}

mca_coll_adapt2_request_t *mca_coll_adapt2_request_new(ompi_communicator_t *comm)
{
    mca_coll_adapt2_request_t *req = OBJ_NEW(mca_coll_adapt2_request_t);
    if (NULL == req) {
        return NULL;
    }
    OMPI_REQUEST_INIT(&req->nbc.super, false);
    req->nbc.super.req_state = OMPI_REQUEST_ACTIVE;
    req->nbc.super.req_type = OMPI_REQUEST_COLL;
    req->nbc.super.req_free = request_free;
    req->nbc.super.req_cancel = request_cancel;
    req->nbc.super.req_status.MPI_SOURCE = MPI_ANY_SOURCE;
    req->nbc.super.req_status.MPI_TAG = MPI_ANY_TAG;
    req->nbc.super.req_status.MPI_ERROR = MPI_SUCCESS;
    req->nbc.super.req_status._ucount = 0;
    req->nbc.super.req_status._cancelled = 0;
    req->comm = comm;
    OBJ_RETAIN(comm);
    memset(req->bufs, 0, sizeof req->bufs);
    req->op = NULL;
    req->unit_type = NULL;
    req->state = REQ_ACTIVE;
    return req;
}

void mca_coll_adapt2_request_done(void *request, int status)
{
    mca_coll_adapt2_request_t *req = (mca_coll_adapt2_request_t *) request;
    int32_t expected = REQ_ACTIVE;
    req->nbc.super.req_status.MPI_ERROR = status;
    if (opal_atomic_compare_exchange_strong_32(&req->state, &expected, REQ_COMPLETE)) {
        ompi_request_complete(&req->nbc.super, true);
    } else {
        request_destroy(req); /* freed by the user while running */
    }
}

int mca_coll_adapt2_request_wait_and_free(mca_coll_adapt2_request_t *req)
{
    ompi_request_t *r = &req->nbc.super;
    ompi_request_wait_completion(r);
    int rc = r->req_status.MPI_ERROR;
    ompi_request_free(&r);
    return rc;
}
