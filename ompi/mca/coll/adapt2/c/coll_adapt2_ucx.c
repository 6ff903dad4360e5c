/* adapt2's own UCX transport: not written yet (falls back to the PML). */
#include "coll_adapt2_ucx.h"

int mca_coll_adapt2_ucx_connect(ompi_communicator_t *comm, adapt2_transport_ops_t *ops, void **state)
{
    (void) comm, (void) ops, (void) state;
    return OMPI_ERR_NOT_SUPPORTED;
}

void mca_coll_adapt2_ucx_disconnect(void *state) { (void) state; }

int mca_coll_adapt2_ucx_progress(void) { return 0; }
