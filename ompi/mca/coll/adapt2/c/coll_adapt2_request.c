/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * The request MPI_Wait/MPI_Test see for an adapt2 collective.
 *
 * The engine reports twice (adapt2_bridge.h): done, when this rank's part is
 * over (the MPI request completes: the user's buffers are free), then
 * finished, when all of the call's work is over. A detached call is done
 * long before it is finished. The request object lives until it is both
 * finished and freed by the user (MPI_Wait, MPI_Request_free), whichever
 * comes last: until then it holds the communicator, the op and the datatype
 * that detached work still uses.
 *
 * Completion reports that arrive on adapt2's progress thread while the
 * application did not ask for MPI_THREAD_MULTIPLE are handed to the
 * application's next call into MPI (coll_adapt2_progress.c): Open MPI's
 * request completion and reference counts are not thread-safe then.
 */
#include <ctype.h>
#include <limits.h>
#include <string.h>
#include <time.h>

#include "coll_adapt2.h"

#include "opal/runtime/opal_progress.h"
#include "ompi/runtime/mpiruntime.h"

enum {
    REQ_DONE = 1,     /* the MPI request completed */
    REQ_FINISHED = 2, /* the engine is finished with it */
    REQ_FREED = 4,    /* the user freed it */
    REQ_DETACHED = 8, /* done before finished */
};

OBJ_CLASS_INSTANCE(mca_coll_adapt2_request_t, ompi_coll_base_nbc_request_t, NULL, NULL);

static int32_t set_flags(mca_coll_adapt2_request_t *req, int32_t flags)
{
    return opal_atomic_fetch_or_32(&req->state, flags);
}

/* Requests are kept on a free list (grown on demand; the number in use is
 * the number of calls in flight, which the application bounds): a call
 * allocates nothing once as many were in flight before. */
int mca_coll_adapt2_requests_open(void)
{
    opal_free_list_t *list = &mca_coll_adapt2_component.requests;
    OBJ_CONSTRUCT(list, opal_free_list_t);
    return opal_free_list_init(list, sizeof(mca_coll_adapt2_request_t), opal_cache_line_size,
                               OBJ_CLASS(mca_coll_adapt2_request_t), 0, opal_cache_line_size,
                               0 /* first calls allocate */, -1 /* no limit */, 8, NULL, 0, NULL, NULL, NULL);
}

void mca_coll_adapt2_requests_close(void)
{
    OBJ_DESTRUCT(&mca_coll_adapt2_component.requests);
}

static void request_destroy(mca_coll_adapt2_request_t *req)
{
    mca_coll_adapt2_release_buffers(req);
    if (req->op) OBJ_RELEASE(req->op);
    if (req->unit_type) OBJ_RELEASE(req->unit_type);
    OBJ_RELEASE(req->comm);
    OMPI_REQUEST_FINI(&req->nbc.super);
    req->nbc.super.req_state = OMPI_REQUEST_INVALID;
    opal_free_list_return(&mca_coll_adapt2_component.requests, &req->nbc.super.super);
}

static int request_free(ompi_request_t **request)
{
    mca_coll_adapt2_request_t *req = (mca_coll_adapt2_request_t *) *request;
    *request = MPI_REQUEST_NULL;
    if (set_flags(req, REQ_FREED) & REQ_FINISHED) {
        request_destroy(req);
    }
    return OMPI_SUCCESS; /* otherwise request_finished destroys it */
}

static int request_cancel(ompi_request_t *request, int complete)
{
    (void) request;
    (void) complete;
    return MPI_ERR_REQUEST; /* collectives cannot be cancelled */
}

mca_coll_adapt2_request_t *mca_coll_adapt2_request_new(ompi_communicator_t *comm, mca_coll_adapt2_module_t *module)
{
    mca_coll_adapt2_request_t *req =
        (mca_coll_adapt2_request_t *) opal_free_list_get(&mca_coll_adapt2_component.requests);
    if (NULL == req) {
        return NULL;
    }
    OMPI_REQUEST_INIT(&req->nbc.super, false);
    /* What a reused request may still hold from its last call: the slots
     * Open MPI's datatype retention fills (MPI_Ibcast & co.). */
    req->nbc.cb.req_complete_cb = NULL;
    req->nbc.req_complete_cb_data = NULL;
    adapt2_nbc_forget_retained(&req->nbc);
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
    req->module = module;
    mca_coll_adapt2_call_started(module);
    memset(req->bufs, 0, sizeof req->bufs);
    req->op = NULL;
    req->unit_type = NULL;
    req->unit_true_lb = 0;
    req->state = 0;
    req->done_status = req->finished_status = 0;
    req->deferred = 0;
    req->grace = NULL;
    req->next_deferred = NULL;
    return req;
}

void mca_coll_adapt2_call_failed(ompi_communicator_t *comm, const char *call, int rc, const char *why)
{
    opal_output(0,
                "coll:adapt2: %s on %s failed on world rank %d: %s. The call's peers would wait "
                "for this rank forever: aborting the job (error %d)",
                call, comm->c_name, ompi_comm_rank(&ompi_mpi_comm_world.comm), why, rc);
    ompi_mpi_abort(comm, rc);
}

const char *mca_coll_adapt2_start_failure(int rc)
{
    const char *device = mca_coll_adapt2_engine_device_last_error();
    if (ADAPT2_STATUS_DEVICE_ERROR == rc && *device) {
        return device;
    }
    return "the engine could not start the call (out of memory or no GPU staging memory)";
}

/* The engine reports a failed call (inside its report, where it can say
 * why); a detached call's failure comes after its request completed. */
static void engine_failed(mca_coll_adapt2_request_t *req, int status)
{
    const char *why = mca_coll_adapt2_engine_call_failure();
    mca_coll_adapt2_call_failed(req->comm, (req->state & REQ_DETACHED) ? "a detached collective" : "a collective",
                                status, *why ? why : "the engine gave no reason");
}

static void complete(mca_coll_adapt2_request_t *req, int status)
{
    req->nbc.super.req_status.MPI_ERROR = status;
    if (set_flags(req, REQ_DONE) & REQ_FREED) {
        return; /* freed while running (MPI_Request_free): nobody to tell */
    }
    ompi_request_complete(&req->nbc.super, true);
}

static void finish(mca_coll_adapt2_request_t *req, int status)
{
    if (req->state & REQ_DETACHED) {
        mca_coll_adapt2_progress_detached(-1);
    }
    mca_coll_adapt2_module_t *module = req->module;
    if (set_flags(req, REQ_FINISHED) & REQ_FREED) {
        request_destroy(req);
    }
    /* Last: a drain waits for it, and until then the user's reference keeps
     * the communicator (the one request_destroy released was not the last). */
    mca_coll_adapt2_call_ended(module);
}

/* A request whose call could not be started: the engine will never report. */
void mca_coll_adapt2_request_discard(mca_coll_adapt2_request_t *req)
{
    mca_coll_adapt2_module_t *module = req->module;
    set_flags(req, REQ_FINISHED | REQ_FREED);
    request_destroy(req);
    mca_coll_adapt2_call_ended(module);
}

void mca_coll_adapt2_request_done(void *request, int status)
{
    mca_coll_adapt2_request_t *req = (mca_coll_adapt2_request_t *) request;
    if (ADAPT2_STATUS_DETACHED == status) {
        set_flags(req, REQ_DETACHED);
        mca_coll_adapt2_progress_detached(+1);
        status = OMPI_SUCCESS;
    }
    if (status < 0) {
        engine_failed(req, status);
    }
    req->done_status = status;
    if (mca_coll_adapt2_progress_must_defer()) {
        mca_coll_adapt2_progress_defer(req, ADAPT2_DEFER_DONE);
        return;
    }
    complete(req, status);
}

void mca_coll_adapt2_request_finished(void *request, int status)
{
    mca_coll_adapt2_request_t *req = (mca_coll_adapt2_request_t *) request;
    if (status < 0 && req->done_status >= 0) {
        engine_failed(req, status); /* a detached call's; others said so in done */
    }
    req->finished_status = status;
    if (mca_coll_adapt2_progress_must_defer()) {
        mca_coll_adapt2_progress_defer(req, ADAPT2_DEFER_FINISHED);
        return;
    }
    finish(req, status);
}

/* On an application thread: the reports the progress thread had to defer. */
void mca_coll_adapt2_request_run_deferred(mca_coll_adapt2_request_t *req, int events)
{
    if (events & ADAPT2_DEFER_DONE) {
        complete(req, req->done_status);
    }
    if (events & ADAPT2_DEFER_FINISHED) {
        finish(req, req->finished_status); /* may destroy req: last */
    }
}

/* A call that detached at once never enters the wait loop, and so never
 * progresses the PML: its own background sends, and the acknowledgements
 * that give the PML its send resources back, would wait for the next call
 * that does (measured: peers of a detached 4 KiB broadcast root waited up to
 * 3 ms). One progress pass per call keeps them moving. */
void mca_coll_adapt2_request_nudge(mca_coll_adapt2_request_t *req)
{
    if (req->state & REQ_DETACHED) {
        opal_progress();
    }
}

/* A blocking call with a grace period (adapt2_bridge.h): progress until it
 * completes, and end the period after coll_adapt2_detach_grace_us, so that
 * peers still missing then are served from a copy. */
static void wait_with_grace(mca_coll_adapt2_request_t *req)
{
    ompi_request_t *r = &req->nbc.super;
    const double grace = ADAPT2_INT(detach_grace_us);
    const double start = mca_coll_adapt2_now_us();
    bool fired = false;
    while (!REQUEST_COMPLETE(r)) {
        if (!fired && mca_coll_adapt2_now_us() - start >= grace) {
            mca_coll_adapt2_engine_grace_fire(req->grace);
            fired = true;
        }
        opal_progress();
    }
    mca_coll_adapt2_engine_grace_fire(req->grace); /* no-op unless the call never needed it */
    mca_coll_adapt2_engine_grace_release(req->grace);
    req->grace = NULL;
}

int mca_coll_adapt2_request_wait_and_free(mca_coll_adapt2_request_t *req)
{
    ompi_request_t *r = &req->nbc.super;
    if (req->grace) {
        wait_with_grace(req);
    }
    mca_coll_adapt2_request_nudge(req);
    ompi_request_wait_completion(r);
    int rc = r->req_status.MPI_ERROR;
    ompi_request_free(&r);
    return rc;
}

/* The engine's statuses are Open MPI's codes (it includes no Open MPI header). */
_Static_assert(ADAPT2_STATUS_PREVIOUS == OMPI_ERR_NOT_SUPPORTED, "the engine's hand-on status");
_Static_assert(ADAPT2_STATUS_BAD_PARAM == OMPI_ERR_BAD_PARAM, "the engine's bad-parameter status");

bool mca_coll_adapt2_hands_on_early(mca_coll_adapt2_module_t *module, ompi_communicator_t *comm, adapt2_call_t *call,
                                    size_t message_bytes, const char **why)
{
    adapt2_engine_comm_t *engine = mca_coll_adapt2_module_engine(module, comm);
    if (NULL == engine) {
        return false; /* the call's own path reports it */
    }
    call->send.bytes = call->recv.bytes = message_bytes;
    const char *rule = mca_coll_adapt2_engine_hands_on(engine, call);
    call->send.bytes = call->recv.bytes = 0;
    if (NULL != rule) {
        *why = rule;
    }
    return NULL != rule;
}

size_t mca_coll_adapt2_packed_bytes(ompi_datatype_t *type, size_t count)
{
    size_t size = 0;
    ompi_datatype_type_size(type, &size);
    return size * count;
}

int mca_coll_adapt2_start_call(mca_coll_adapt2_module_t *module, mca_coll_adapt2_request_t *req, adapt2_call_t *call,
                               const char **why)
{
    call->done = mca_coll_adapt2_request_done;
    call->finished = mca_coll_adapt2_request_finished;
    call->ctx = req;
    int rc = mca_coll_adapt2_engine_start(module->engine, call, why);
    if (OMPI_SUCCESS != rc && ADAPT2_STATUS_PREVIOUS != rc) {
        *why = mca_coll_adapt2_start_failure(rc);
    }
    return rc;
}

int mca_coll_adapt2_complete_start(mca_coll_adapt2_module_t *module, ompi_communicator_t *comm, const char *name,
                                   int rc, mca_coll_adapt2_request_t *req, const char *why, ompi_request_t **request,
                                   bool *fall_back)
{
    /* Every rank's first call on the communicator, whatever it does next. */
    if (!module->rules_check_posted) {
        mca_coll_adapt2_rules_check_post(module, comm);
    }
    *fall_back = OMPI_ERR_NOT_SUPPORTED == rc;
    if (*fall_back) {
        mca_coll_adapt2_note_fallback(comm, name, why);
        return OMPI_SUCCESS;
    }
    if (OMPI_SUCCESS != rc) {
        char call[64]; /* "MPI_Ibcast" for "ibcast" */
        snprintf(call, sizeof call, "MPI_%c%s", toupper((unsigned char) name[0]), name + 1);
        mca_coll_adapt2_call_failed(comm, call, rc, why ? why : "no reason given");
        return rc;
    }
    if (NULL == request) {
        return mca_coll_adapt2_request_wait_and_free(req);
    }
    *request = &req->nbc.super;
    mca_coll_adapt2_request_nudge(req);
    return OMPI_SUCCESS;
}
