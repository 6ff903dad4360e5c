/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * adapt2's own UCX transport (coll_adapt2_transport=ucx): byte transfers on a
 * private UCP worker instead of the PML, so that adapt2's progress thread can
 * drive detached collectives at any MPI thread level (coll_adapt2_progress.c)
 * without entering the PML.
 *
 * One UCP context and one worker per process, created by the first connect
 * and destroyed when the last connected communicator goes (in MPI_Finalize at
 * the latest). It coexists with pml ucx's own worker (tested with UCX 1.13).
 *
 * Locking. Application threads (posting, and progressing through the
 * opal_progress callback registered here) and the progress thread all use the
 * worker, at any MPI thread level, so all worker use is serialised by one
 * mutex of ours and the worker is created UCS_THREAD_MODE_SERIALIZED: UCX's
 * own MULTI-mode locks would only repeat ours. Completion callbacks run inside
 * ucp_worker_progress, i.e. under the mutex, and the engine may post from
 * them on the same thread: the mutex is made re-entrant by a thread-local
 * depth. Nested progress (UCX forbids it) is skipped, and progress only
 * tries the mutex: a thread that finds it taken knows the worker is being
 * driven and polls again later, so no progress path ever waits for another
 * thread. The engine's completion path takes no lock (its inbox is
 * lock-free), which is why completing operations under the mutex is safe.
 *
 * Tags. UCP matches on a 64-bit tag only (no source, no communicator), so
 * the tag carries them:
 *     [63..44] communicator context id   (20 bits)
 *     [43..24] source rank in it         (20 bits)
 *     [23..0]  low 24 bits of -tag       (adapt2's tags are negative, counting
 *                                         down from Open MPI's collective base)
 * and receives use a full mask. Two tags of one communicator alias only
 * 2^24 tags apart, far more than can be in flight. UCP matches the messages
 * of one endpoint with one tag in posting order (UCP's design notes: "tag
 * matching - order guaranteed"; openucx/ucx#6370), which is the engine's
 * contract: one endpoint per peer process makes that per sender.
 *
 * Endpoints are cached per peer process (keyed by its process name, checked
 * against its worker address) and shared by every communicator; a peer whose
 * address changed (it tore its worker down and made a new one) gets a new
 * endpoint, the old one is closed at teardown.
 */
#include "coll_adapt2_ucx.h" /* first: ompi_config.h sets the feature macros */

#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <ucp/api/ucp.h>

#include "opal/class/opal_hash_table.h"
#include "opal/runtime/opal_progress.h"

#define TAG_BITS 24
#define RANK_BITS 20
#define CID_BITS 20
#define TAG_FIELD_MASK ((UINT64_C(1) << TAG_BITS) - 1)
#define FULL_TAG_MASK (~UINT64_C(0))

_Static_assert(sizeof(opal_process_name_t) == sizeof(uint64_t), "process names key the endpoint cache");

/* A peer process's endpoint, and the address it was created from. */
typedef struct peer {
    ucp_ep_h ep;
    struct peer *next_retired; /* superseded endpoints, closed at teardown */
    size_t address_len;
    unsigned char address[];
} peer_t;

/* A connected communicator: the transport's ctx. */
typedef struct ucx_comm {
    uint64_t cid_bits; /* the context id, in place */
    int rank;
    int size;
    ucp_ep_h eps[]; /* by rank; owned by the cache */
} ucx_comm_t;

static struct {
    pthread_mutex_t lock; /* all of this, and every use of the worker */
    ucp_context_h context;
    ucp_worker_h worker;
    ucp_address_t *address;
    size_t address_len;
    opal_hash_table_t peers; /* process name -> peer_t */
    peer_t *retired;
    int users;             /* communicators connected or connecting */
    bool teardown_pending; /* users fell to 0 inside a worker call */
    bool init_failed;      /* UCX did not initialise here: do not retry */
} ucx = {.lock = PTHREAD_MUTEX_INITIALIZER};

static __thread int lock_depth; /* this thread's nesting in the mutex */

static void teardown_locked(void);

/* ---- the re-entrant lock --------------------------------------------------- */

static void worker_lock(void)
{
    if (0 == lock_depth++) {
        pthread_mutex_lock(&ucx.lock);
    }
}

/* The outermost release also tears down what the last disconnect left: a
 * disconnect can run inside a completion callback, and the worker cannot be
 * destroyed under ucp_worker_progress. */
static void worker_unlock(void)
{
    if (1 == lock_depth && ucx.teardown_pending && 0 == ucx.users) {
        teardown_locked();
    }
    if (0 == --lock_depth) {
        pthread_mutex_unlock(&ucx.lock);
    }
}

/* ---- completions ------------------------------------------------------------ */

static int to_ompi_status(ucs_status_t status, const char *what)
{
    if (UCS_OK == status) {
        return OMPI_SUCCESS;
    }
    ADAPT2_VERBOSE(1, "UCX %s failed: %s", what, ucs_status_string(status));
    return OMPI_ERROR;
}

static void send_done(void *request, ucs_status_t status, void *op)
{
    ucp_request_free(request);
    mca_coll_adapt2_engine_op_complete(op, to_ompi_status(status, "send"));
}

static void recv_done(void *request, ucs_status_t status, const ucp_tag_recv_info_t *info, void *op)
{
    (void) info;
    ucp_request_free(request);
    mca_coll_adapt2_engine_op_complete(op, to_ompi_status(status, "receive"));
}

/* What a post returned: done already (NULL, UCS_OK), failed (the operation
 * was not posted and will not complete), or a request whose callback will
 * complete it. Called after the mutex is released: the request may be
 * completed and freed by then, so only its value is looked at. */
static int posted(ucs_status_ptr_t request, void *op, const char *what)
{
    if (NULL == request) {
        mca_coll_adapt2_engine_op_complete(op, OMPI_SUCCESS);
        return OMPI_SUCCESS;
    }
    if (UCS_PTR_IS_ERR(request)) {
        return to_ompi_status(UCS_PTR_STATUS(request), what);
    }
    return OMPI_SUCCESS;
}

/* ---- the transport ---------------------------------------------------------- */

static uint64_t make_tag(const ucx_comm_t *c, int source, int tag)
{
    uint64_t low = (uint64_t) (0u - (uint32_t) tag) & TAG_FIELD_MASK;
    return c->cid_bits | ((uint64_t) source << TAG_BITS) | low;
}

static int ucx_isend(void *ctx, const void *buf, size_t len, int peer, int tag, void *op)
{
    ucx_comm_t *c = ctx;
    assert(peer >= 0 && peer < c->size);
    ucp_request_param_t param = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
        .cb.send = send_done,
        .user_data = op,
    };
    worker_lock();
    ucs_status_ptr_t request = ucp_tag_send_nbx(c->eps[peer], buf, len, make_tag(c, c->rank, tag), &param);
    worker_unlock();
    return posted(request, op, "send");
}

static int ucx_irecv(void *ctx, void *buf, size_t len, int peer, int tag, void *op)
{
    ucx_comm_t *c = ctx;
    assert(peer >= 0 && peer < c->size);
    ucp_tag_recv_info_t info; /* filled on immediate completion; unused */
    ucp_request_param_t param = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_RECV_INFO,
        .cb.recv = recv_done,
        .user_data = op,
        .recv_info.tag_info = &info,
    };
    worker_lock();
    ucs_status_ptr_t request = ucp_tag_recv_nbx(ucx.worker, buf, len, make_tag(c, peer, tag), FULL_TAG_MASK, &param);
    worker_unlock();
    return posted(request, op, "receive");
}

/* Registered with opal_progress, and called by the progress thread. */
int mca_coll_adapt2_ucx_progress(void)
{
    if (lock_depth > 0 || 0 != pthread_mutex_trylock(&ucx.lock)) {
        return 0; /* inside a worker call here (UCX forbids nesting), or driven elsewhere */
    }
    lock_depth = 1;
    int events = ucx.worker ? (int) ucp_worker_progress(ucx.worker) : 0;
    worker_unlock();
    return events;
}

/* ---- the process's context and worker --------------------------------------- */

static ucs_status_t create_worker_locked(void)
{
    ucp_worker_params_t params = {
        .field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
        .thread_mode = UCS_THREAD_MODE_SERIALIZED, /* our mutex serialises (see top) */
    };
    ucs_status_t status = ucp_worker_create(ucx.context, &params, &ucx.worker);
    if (UCS_OK != status) {
        return status;
    }
    ucp_worker_attr_t attr = {.field_mask = UCP_WORKER_ATTR_FIELD_THREAD_MODE};
    status = ucp_worker_query(ucx.worker, &attr);
    if (UCS_OK == status && UCS_THREAD_MODE_SINGLE == attr.thread_mode) {
        status = UCS_ERR_UNSUPPORTED; /* would tie the worker to one thread */
    }
    if (UCS_OK == status) {
        status = ucp_worker_get_address(ucx.worker, &ucx.address, &ucx.address_len);
    }
    return status;
}

static ucs_status_t create_context_locked(void)
{
    ucp_config_t *config;
    ucs_status_t status = ucp_config_read(NULL, NULL, &config);
    if (UCS_OK != status) {
        return status;
    }
    ucp_params_t params = {
        .field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED | UCP_PARAM_FIELD_NAME,
        .features = UCP_FEATURE_TAG,
        .mt_workers_shared = 0, /* one worker, ours */
        .name = "coll_adapt2",
    };
    status = ucp_init(&params, config, &ucx.context);
    ucp_config_release(config);
    return UCS_OK == status ? create_worker_locked() : status;
}

static void destroy_context_locked(void)
{
    if (ucx.address) {
        ucp_worker_release_address(ucx.worker, ucx.address);
    }
    if (ucx.worker) {
        ucp_worker_destroy(ucx.worker);
    }
    if (ucx.context) {
        ucp_cleanup(ucx.context);
    }
    ucx.address = NULL;
    ucx.address_len = 0;
    ucx.worker = NULL;
    ucx.context = NULL;
}

static int start_locked(void)
{
    ucs_status_t status = create_context_locked();
    if (UCS_OK != status) {
        ADAPT2_VERBOSE(1, "UCX did not initialise here (%s)", ucs_status_string(status));
        destroy_context_locked();
        ucx.init_failed = true;
        return OMPI_ERR_NOT_SUPPORTED;
    }
    OBJ_CONSTRUCT(&ucx.peers, opal_hash_table_t);
    opal_hash_table_init(&ucx.peers, 64);
    ucx.retired = NULL;
    /* Every MPI call (and so every blocking wait) then advances our worker. */
    opal_progress_register(mca_coll_adapt2_ucx_progress);
    ADAPT2_VERBOSE(10, "UCX: context and worker created (%zu-byte address)", ucx.address_len);
    return OMPI_SUCCESS;
}

/* Releases an endpoint without a handshake: its peer may have destroyed its
 * worker already (ranks tear down in MPI_Finalize in no particular order).
 * UCX asks for UCP_ERR_HANDLING_MODE_PEER around forced closes; over UCX
 * 1.13's shared-memory and TCP transports the peers report nothing without
 * it (test/mpi/ucx_transport.sh checks that UCX stays silent). */
static void close_endpoint_locked(ucp_ep_h ep)
{
    ucp_request_param_t param = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS, .flags = UCP_EP_CLOSE_FLAG_FORCE};
    ucs_status_ptr_t request = ucp_ep_close_nbx(ep, &param);
    if (NULL == request || UCS_PTR_IS_ERR(request)) {
        return;
    }
    while (UCS_INPROGRESS == ucp_request_check_status(request)) {
        ucp_worker_progress(ucx.worker);
    }
    ucp_request_free(request);
}

static void close_endpoints_locked(void)
{
    uint64_t key;
    void *value, *node;
    int rc = opal_hash_table_get_first_key_uint64(&ucx.peers, &key, &value, &node);
    while (OPAL_SUCCESS == rc) {
        peer_t *p = value;
        close_endpoint_locked(p->ep);
        free(p);
        rc = opal_hash_table_get_next_key_uint64(&ucx.peers, &key, &value, node, &node);
    }
    OBJ_DESTRUCT(&ucx.peers);
    while (ucx.retired) {
        peer_t *p = ucx.retired;
        ucx.retired = p->next_retired;
        close_endpoint_locked(p->ep);
        free(p);
    }
}

/* When the last communicator is gone: everything was drained before. */
static void teardown_locked(void)
{
    ucx.teardown_pending = false;
    opal_progress_unregister(mca_coll_adapt2_ucx_progress);
    close_endpoints_locked();
    destroy_context_locked();
    ADAPT2_VERBOSE(10, "UCX: worker and context destroyed");
}

/* A process that never released its last communicator (a request the
 * application never freed keeps one) must not leave our callback registered
 * once this DSO is unloaded. UCX itself is left alone here. */
__attribute__((destructor)) static void unregister_at_unload(void)
{
    if (ucx.worker) {
        opal_progress_unregister(mca_coll_adapt2_ucx_progress);
    }
}

/* A communicator starts using the worker (created if needed). */
static int join(void)
{
    worker_lock();
    int rc = OMPI_SUCCESS;
    if (ucx.init_failed) {
        rc = OMPI_ERR_NOT_SUPPORTED;
    } else if (NULL == ucx.worker) {
        rc = start_locked();
    }
    if (OMPI_SUCCESS == rc) {
        ucx.users++;
        ucx.teardown_pending = false;
    }
    worker_unlock();
    return rc;
}

/* ... and stops; the last one tears everything down, at once or (inside a
 * worker call on this thread) when that call releases the mutex. */
static void leave(void)
{
    worker_lock();
    if (0 == --ucx.users) {
        ucx.teardown_pending = true;
    }
    worker_unlock();
}

/* ---- endpoints -------------------------------------------------------------- */

static ucp_ep_h peer_endpoint_locked(ompi_proc_t *proc, const unsigned char *address, size_t len)
{
    uint64_t key;
    memcpy(&key, &proc->super.proc_name, sizeof key);
    peer_t *known = NULL;
    if (OPAL_SUCCESS == opal_hash_table_get_value_uint64(&ucx.peers, key, (void **) &known) &&
        known->address_len == len && 0 == memcmp(known->address, address, len)) {
        return known->ep;
    }
    peer_t *p = malloc(sizeof *p + len);
    if (NULL == p) {
        return NULL;
    }
    memcpy(p->address, address, len);
    p->address_len = len;
    ucp_ep_params_t params = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
                              .address = (const ucp_address_t *) p->address};
    ucs_status_t status = ucp_ep_create(ucx.worker, &params, &p->ep);
    if (UCS_OK != status) {
        ADAPT2_VERBOSE(1, "UCX: no endpoint to %s: %s", OPAL_NAME_PRINT(proc->super.proc_name),
                       ucs_status_string(status));
        free(p);
        return NULL;
    }
    if (known) { /* the peer has a new worker: the old endpoint may still be referenced */
        ADAPT2_VERBOSE(10, "UCX: %s has a new worker; endpoint replaced", OPAL_NAME_PRINT(proc->super.proc_name));
        known->next_retired = ucx.retired;
        ucx.retired = known;
    }
    opal_hash_table_set_value_uint64(&ucx.peers, key, p);
    return p->ep;
}

/* The communicator's endpoints from everybody's addresses (`stride` bytes
 * apart, lengths in `info`: {ok, length} per rank). NULL on failure. */
static ucx_comm_t *comm_create(ompi_communicator_t *comm, const unsigned char *addresses, size_t stride,
                               const int *info)
{
    int size = ompi_comm_size(comm);
    ucx_comm_t *c = malloc(sizeof *c + (size_t) size * sizeof(ucp_ep_h));
    if (NULL == c) {
        return NULL;
    }
    c->cid_bits = (uint64_t) adapt2_comm_cid(comm) << (TAG_BITS + RANK_BITS);
    c->rank = ompi_comm_rank(comm);
    c->size = size;
    worker_lock();
    for (int r = 0; r < size && c; ++r) {
        c->eps[r] = peer_endpoint_locked(ompi_comm_peer_lookup(comm, r), addresses + (size_t) r * stride,
                                         (size_t) info[2 * r + 1]);
        if (NULL == c->eps[r]) {
            free(c);
            c = NULL; /* endpoints made so far stay cached */
        }
    }
    worker_unlock();
    return c;
}

/* ---- connect / disconnect --------------------------------------------------- */

/* comm's allgather from before adapt2 (adapt2's own would connect first:
 * it runs on this transport). Connect may
 * run inside opal_progress: under MPI_THREAD_MULTIPLE, MPI_Comm_dup agrees
 * on the new context id with an iallreduce of the parent (adapt2's) called
 * from a progress callback, and a blocking wait there never returns (the
 * outer wait owns ompi_sync_wait_mt's progress). So the non-blocking
 * allgather, polled with opal_progress, which is safe at any depth. */
static int allgather(ompi_communicator_t *comm, const void *mine, void *all, int count, ompi_datatype_t *type)
{
    mca_coll_base_comm_coll_t *coll = comm->c_coll;
    mca_coll_base_module_iallgather_fn_t iallgather = coll->coll_iallgather;
    mca_coll_base_module_t *module = coll->coll_iallgather_module;
    if (mca_coll_adapt2_iallgather == iallgather) {
        mca_coll_adapt2_module_t *adapt2 = (mca_coll_adapt2_module_t *) module;
        iallgather = adapt2->previous.iallgather;
        module = adapt2->previous.iallgather_module;
    }
    ompi_request_t *req;
    int rc = iallgather(mine, count, type, all, count, type, comm, &req, module);
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    while (!REQUEST_COMPLETE(req)) {
        opal_progress();
    }
    rc = req->req_status.MPI_ERROR;
    ompi_request_free(&req);
    return rc;
}

/* Every rank learns whether every rank says ok. */
static int agree(ompi_communicator_t *comm, int ok, int *all_ok)
{
    int size = ompi_comm_size(comm);
    int *flags = malloc((size_t) size * sizeof(int));
    if (NULL == flags) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    int rc = allgather(comm, &ok, flags, 1, &ompi_mpi_int.dt);
    *all_ok = OMPI_SUCCESS == rc;
    for (int r = 0; r < size && *all_ok; ++r) {
        *all_ok = flags[r];
    }
    free(flags);
    return rc;
}

static bool fits_tag_layout(ompi_communicator_t *comm)
{
    return adapt2_comm_cid(comm) < (UINT32_C(1) << CID_BITS) && ompi_comm_size(comm) <= (1 << RANK_BITS);
}

/* Exchanges {ok, address length}, then the addresses, padded to the
 * longest; then every rank says whether it made its endpoints. */
static int exchange_and_connect(ompi_communicator_t *comm, int ok, int *info, ucx_comm_t **out)
{
    int size = ompi_comm_size(comm);
    int mine[2] = {ok, ok ? (int) ucx.address_len : 0};
    int rc = allgather(comm, mine, info, 2, &ompi_mpi_int.dt);
    int longest = 0;
    for (int r = 0; r < size && OMPI_SUCCESS == rc; ++r) {
        if (!info[2 * r]) {
            rc = OMPI_ERR_NOT_SUPPORTED; /* the same verdict on every rank */
        }
        longest = info[2 * r + 1] > longest ? info[2 * r + 1] : longest;
    }
    if (OMPI_SUCCESS != rc) {
        return rc;
    }
    unsigned char *all = malloc((size_t) longest * (size_t) (size + 1));
    if (NULL == all) {
        return OMPI_ERR_OUT_OF_RESOURCE; /* unrecoverable: the peers will wait in the allgather */
    }
    unsigned char *padded = all + (size_t) longest * (size_t) size;
    memset(padded, 0, (size_t) longest);
    memcpy(padded, ucx.address, ucx.address_len);
    rc = allgather(comm, padded, all, longest, &ompi_mpi_byte.dt);
    *out = OMPI_SUCCESS == rc ? comm_create(comm, all, (size_t) longest, info) : NULL;
    free(all);
    int all_ok;
    rc = agree(comm, NULL != *out, &all_ok);
    return OMPI_SUCCESS == rc && !all_ok ? OMPI_ERR_NOT_SUPPORTED : rc;
}

int mca_coll_adapt2_ucx_connect(ompi_communicator_t *comm, adapt2_transport_ops_t *ops, void **state)
{
    *state = NULL;
    int *info = malloc(2 * (size_t) ompi_comm_size(comm) * sizeof(int));
    if (NULL == info) {
        return OMPI_ERR_OUT_OF_RESOURCE; /* unrecoverable: the peers will wait in the allgather */
    }
    bool joined = OMPI_SUCCESS == join();
    ucx_comm_t *c = NULL;
    int rc = exchange_and_connect(comm, joined && fits_tag_layout(comm), info, &c);
    free(info);
    if (OMPI_SUCCESS != rc) {
        free(c);
        if (joined) {
            leave();
        }
        return rc;
    }
    ops->ctx = c;
    ops->isend = ucx_isend;
    ops->irecv = ucx_irecv;
    *state = c;
    return OMPI_SUCCESS;
}

void mca_coll_adapt2_ucx_disconnect(void *state)
{
    free(state); /* the endpoints belong to the cache */
    leave();
}
