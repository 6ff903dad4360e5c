/*
 * The direct path: a blocking broadcast that the engine plans as one whole
 * message with no hellos (engine/direct_route.cc) is the plan's tree walked
 * with the PML's own calls: receive the message from the parent, send it to
 * each child, wait for the sends. The user's datatype goes to the PML as is,
 * so no buffer is described, no request or schedule is made, and the call
 * costs little more than the point-to-point it posts (docs/design.md, "The
 * latency path").
 *
 * The route is planned by the engine once per (root, size) and kept in the
 * module with the parameter values it was planned with: a call whose root,
 * size and parameters are the same reuses it (one compare of the values:
 * MPI_T may change any of them between calls). Collectives on one
 * communicator never run concurrently (MPI), so the module's route needs no
 * lock.
 */
#include <string.h>

#include "coll_adapt2.h"

#include "ompi/mca/coll/base/coll_base_util.h"
#include "ompi/mca/pml/pml.h"

typedef struct mca_coll_adapt2_direct_t {
    mca_coll_adapt2_param_values_t values; /* the parameters the route was planned with */
    bool planned, direct;
    int root;
    size_t bytes;
    adapt2_direct_route_t route;
    ompi_request_t **sends; /* one per child */
    int slots;              /* the communicator's size: room in route.child and sends */
} mca_coll_adapt2_direct_t;

void mca_coll_adapt2_direct_free(mca_coll_adapt2_module_t *module)
{
    mca_coll_adapt2_direct_t *d = module->direct_bcast;
    if (d) {
        free(d->route.child);
        free(d->sends);
        free(d);
        module->direct_bcast = NULL;
    }
}

static mca_coll_adapt2_direct_t *direct_state(mca_coll_adapt2_module_t *module, int size)
{
    mca_coll_adapt2_direct_t *d = module->direct_bcast;
    if (d) {
        return d;
    }
    d = calloc(1, sizeof *d);
    if (d) {
        d->route.child = malloc((size_t) size * sizeof *d->route.child);
        d->sends = malloc((size_t) size * sizeof *d->sends);
        d->slots = size;
    }
    if (!d || !d->route.child || !d->sends) {
        if (d) {
            free(d->route.child);
            free(d->sends);
            free(d);
        }
        return NULL;
    }
    module->direct_bcast = d;
    return d;
}

static bool route_current(const mca_coll_adapt2_direct_t *d, int root, size_t bytes)
{
    /* (whether GPU support is on is decided once, before the first plan) */
    return d->planned && d->root == root && d->bytes == bytes &&
           0 == memcmp(&d->values, &mca_coll_adapt2_component.values, sizeof d->values);
}

/* Plans the route of a broadcast of `bytes` from `root` (the engine decides
 * whether it goes direct). NULL when it cannot be planned (out of memory):
 * the engine's path runs and reports. */
static mca_coll_adapt2_direct_t *plan_route(mca_coll_adapt2_module_t *module, ompi_communicator_t *comm,
                                            int root, size_t bytes)
{
    adapt2_engine_comm_t *engine = mca_coll_adapt2_module_engine(module, comm);
    mca_coll_adapt2_direct_t *d = engine ? direct_state(module, ompi_comm_size(comm)) : NULL;
    if (NULL == d) {
        return NULL;
    }
    adapt2_call_t call;
    memset(&call, 0, sizeof call);
    call.collective = ADAPT2_COLL_BCAST;
    call.root = root;
    call.recv.bytes = bytes;
    mca_coll_adapt2_tree_settings(&call.settings.tree, ADAPT2_P_bcast_algorithm, ADAPT2_P_bcast_segment_size);
    mca_coll_adapt2_call_facts(&call.facts, ADAPT2_STRING(bcast_algorithm), true, false);
    mca_coll_adapt2_topology_settings(&call.settings.tree, module);
    memcpy(&d->values, &mca_coll_adapt2_component.values, sizeof d->values);
    d->root = root;
    d->bytes = bytes;
    d->direct = 1 == mca_coll_adapt2_engine_direct_route(engine, &call, &d->route);
    d->planned = true;
    return d;
}

/* A PML call failed: the peers wait for this rank, so say who, where and why. */
static int direct_failed(ompi_communicator_t *comm, const mca_coll_adapt2_direct_t *d, int rc,
                         const char *what, int peer)
{
    char why[256];
    snprintf(why, sizeof why, "rank %d of %d, bcast of %zu bytes (root %d) on the direct path: %s rank %d failed "
             "with error %d", ompi_comm_rank(comm), ompi_comm_size(comm), d->bytes, d->root, what, peer, rc);
    mca_coll_adapt2_call_failed(comm, "MPI_Bcast", rc, why);
    return rc;
}

static int run_bcast(mca_coll_adapt2_direct_t *d, void *buf, int count, ompi_datatype_t *dtype,
                     ompi_communicator_t *comm)
{
    const adapt2_direct_route_t *r = &d->route;
    const int tag = ompi_coll_base_nbc_reserve_tags(comm, 1);
    int rc;
    if (r->parent >= 0) {
        rc = MCA_PML_CALL(recv(buf, count, dtype, r->parent, tag, comm, MPI_STATUS_IGNORE));
        if (OMPI_SUCCESS != rc) {
            return direct_failed(comm, d, rc, "receiving the message from its parent,", r->parent);
        }
    }
    int posted = 0;
    for (; posted < r->children; ++posted) {
        rc = mca_coll_adapt2_pml_inject_failure()
                 ? OMPI_ERR_UNREACH
                 : MCA_PML_CALL(isend(buf, count, dtype, r->child[posted], tag, MCA_PML_BASE_SEND_STANDARD,
                                      comm, &d->sends[posted]));
        if (OMPI_SUCCESS != rc) {
            (void) ompi_request_wait_all(posted, d->sends, MPI_STATUSES_IGNORE);
            return direct_failed(comm, d, rc, "posting the send to its child,", r->child[posted]);
        }
    }
    rc = ompi_request_wait_all(posted, d->sends, MPI_STATUSES_IGNORE);
    if (OMPI_SUCCESS != rc) {
        return direct_failed(comm, d, rc, "completing its sends to its children, the first being", r->child[0]);
    }
    return OMPI_SUCCESS;
}

/* coll_adapt2_direct_path, read without the checked read's call unless it
 * is neither 0 nor 1 (then that reports it and gives the default). */
static bool direct_path_on(void)
{
    const int value = mca_coll_adapt2_component.values.direct_path;
    return 1 == value || (0 != value && 1 == ADAPT2_INT(direct_path));
}

bool mca_coll_adapt2_direct_bcast(void *buf, int count, ompi_datatype_t *datatype, int root,
                                  ompi_communicator_t *comm, mca_coll_adapt2_module_t *module, int *rc)
{
    if (!direct_path_on() || ADAPT2_TRANSPORT_PML != module->transport ||
        root < 0 || root >= ompi_comm_size(comm)) {
        return false;
    }
    const size_t bytes = mca_coll_adapt2_packed_bytes(datatype, (size_t) count);
    mca_coll_adapt2_direct_t *d = module->direct_bcast;
    if (NULL == d || !route_current(d, root, bytes)) {
        d = plan_route(module, comm, root, bytes);
    }
    if (NULL == d || !d->direct) {
        return false;
    }
    if (!module->rules_check_posted) { /* every rank's first call, whatever path it takes */
        mca_coll_adapt2_rules_check_post(module, comm);
    }
    if (mca_coll_adapt2_component.values.verbose >= 20) {
        ADAPT2_VERBOSE(20, "(%s) bcast of %zu bytes from %d: direct path, %s", comm->c_name, bytes, root,
                       d->route.plan);
    }
    *rc = run_bcast(d, buf, count, datatype, comm);
    mca_coll_adapt2_engine_direct_done(module->engine, bytes, &d->route);
    return true;
}
