/*
 * Byte transfers through the PML for the engine's transport. Completion is a
 * request callback that frees the PML request and hands the operation back to
 * the engine; it may run inside the posting call.
 */
#include "coll_adapt2.h"

#include "ompi/mca/pml/pml.h"
#include "ompi/runtime/mpiruntime.h"

static int pml_done(ompi_request_t *req)
{
    void *op = req->req_complete_cb_data;
    int status = req->req_status.MPI_ERROR;
    ompi_request_free(&req);
    mca_coll_adapt2_engine_op_complete(op, status);
    return 1; /* the request is freed: the PML must not mark it complete */
}

/* Under MPI_THREAD_MULTIPLE another thread may complete a request between
 * isend returning and ompi_request_set_callback, and that completion would be
 * lost. A persistent request gets its callback before it starts, so there is
 * no such window; it costs a little more, so it is used only there. */
static int arm(ompi_request_t *req, void *op)
{
    if (ompi_mpi_thread_multiple) {
        req->req_complete_cb_data = op;
        req->req_complete_cb = pml_done;
        int rc = MCA_PML_CALL(start(1, &req));
        if (OMPI_SUCCESS != rc) {
            req->req_complete_cb = NULL;
            ompi_request_free(&req);
        }
        return rc;
    }
    return ompi_request_set_callback(req, pml_done, op);
}

int mca_coll_adapt2_c_pml_isend(void *comm, const void *buf, size_t len, int peer, int tag, void *op)
{
    ompi_request_t *req;
    int rc;
    if (ompi_mpi_thread_multiple) {
        rc = MCA_PML_CALL(isend_init((void *) buf, len, &ompi_mpi_byte.dt, peer, tag,
                                     MCA_PML_BASE_SEND_STANDARD, (ompi_communicator_t *) comm, &req));
    } else {
        rc = MCA_PML_CALL(isend((void *) buf, len, &ompi_mpi_byte.dt, peer, tag,
                                MCA_PML_BASE_SEND_STANDARD, (ompi_communicator_t *) comm, &req));
    }
    return OMPI_SUCCESS == rc ? arm(req, op) : rc;
}

int mca_coll_adapt2_c_pml_irecv(void *comm, void *buf, size_t len, int peer, int tag, void *op)
{
    ompi_request_t *req;
    int rc;
    if (ompi_mpi_thread_multiple) {
        rc = MCA_PML_CALL(irecv_init(buf, len, &ompi_mpi_byte.dt, peer, tag,
                                     (ompi_communicator_t *) comm, &req));
    } else {
        rc = MCA_PML_CALL(irecv(buf, len, &ompi_mpi_byte.dt, peer, tag,
                                (ompi_communicator_t *) comm, &req));
    }
    return OMPI_SUCCESS == rc ? arm(req, op) : rc;
}
