/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * Every rank of a communicator must plan a call alike, so every rank must
 * read the same decision table (coll_adapt2_rules): ranks whose tables
 * differ may run different algorithms for one call and hang. The first
 * adapt2 collective on each communicator (every rank's first, whichever it
 * is and whatever adapt2 then does with it) sends the rank's table
 * fingerprint to rank 0 (a non-blocking send; rank 0 posts a receive from
 * each rank), on a tag reserved like a non-blocking collective's, never
 * waited for inside a call: a progress callback looks for their completion
 * (without progressing itself), so rank 0 reports the ranks whose table
 * differs from its own even while a call their tables planned differently
 * hangs. The drains wait for checks in flight. Plain point-to-point, not
 * the previous component's iallgather: libnbc keeps its progress callback
 * registered until the communicator is freed, so every later progress loop
 * of the application (MPI_COMM_WORLD's: all of them) paid for it (8% of a
 * reduce leaf's samples in a barrier loop, `perf`).
 */
#include <inttypes.h>
#include <stdlib.h>

#include "coll_adapt2.h"

#include "ompi/mca/coll/base/coll_base_util.h"
#include "ompi/mca/pml/pml.h"

#define ADAPT2_REPORT_RANKS 8 /* ranks named in a mismatch report; then "and more" */

typedef struct rules_check_t {
    struct rules_check_t *next;
    mca_coll_adapt2_module_t *module; /* retained until the check is done */
    int rank, size;
    char comm_name[MPI_MAX_OBJECT_NAME]; /* for the report: nothing reads the communicator then */
    int nreqs;
    ompi_request_t **reqs; /* rank 0: a receive from each other rank; the others: their send */
    uint64_t mine;
    uint64_t all[]; /* rank 0: one per rank (its own first); the others: none */
} rules_check_t;

/* The fingerprints' messages: each rank's to rank 0. */
static int post_messages(rules_check_t *c, ompi_communicator_t *comm)
{
    const int tag = ompi_coll_base_nbc_reserve_tags(comm, 1);
    if (0 != c->rank) {
        const int rc =
            MCA_PML_CALL(isend(&c->mine, 1, MPI_UINT64_T, 0, tag, MCA_PML_BASE_SEND_STANDARD, comm, &c->reqs[0]));
        c->nreqs = OMPI_SUCCESS == rc ? 1 : 0;
        return rc;
    }
    c->all[0] = c->mine;
    for (c->nreqs = 0; c->nreqs < c->size - 1; ++c->nreqs) {
        const int rc =
            MCA_PML_CALL(irecv(&c->all[c->nreqs + 1], 1, MPI_UINT64_T, c->nreqs + 1, tag, comm, &c->reqs[c->nreqs]));
        if (OMPI_SUCCESS != rc) {
            return rc;
        }
    }
    return OMPI_SUCCESS;
}

static bool messages_complete(const rules_check_t *c)
{
    for (int i = 0; i < c->nreqs; ++i) {
        if (!REQUEST_COMPLETE(c->reqs[i])) {
            return false;
        }
    }
    return true;
}

static opal_mutex_t pending_lock = OPAL_MUTEX_STATIC_INIT;
static rules_check_t *volatile pending; /* posted, not seen complete (read unlocked: a hint) */
static volatile int32_t in_flight;      /* checks posted and not done (the drains wait for them) */
static bool watching;                   /* the progress callback is registered (set under the lock) */

/* Rank 0 names the ranks whose table differs from its own. */
static void compare(const rules_check_t *c)
{
    const int size = c->size;
    if (0 != c->rank) {
        return;
    }
    char ranks[256] = "";
    int differ = 0;
    size_t used = 0;
    for (int r = 1; r < size; ++r) {
        if (c->all[r] == c->all[0]) {
            continue;
        }
        if (differ++ < ADAPT2_REPORT_RANKS && used < sizeof ranks) {
            used += (size_t) snprintf(ranks + used, sizeof ranks - used, "%s%d", used ? ", " : "", r);
        }
    }
    if (0 == differ) {
        ADAPT2_VERBOSE(20, "(%s) every rank has the same decision table", c->comm_name);
        return;
    }
    const char *origin;
    (void) mca_coll_adapt2_engine_rules_fingerprint(&origin);
    opal_output(0,
                "coll:adapt2: (%s) the decision tables differ between ranks (MCA parameter "
                "coll_adapt2_rules): rank 0's (%s, fingerprint %016" PRIx64
                ") is not that of "
                "rank(s) %s%s; calls planned differently may hang: give every rank the same file",
                c->comm_name, origin[0] ? origin : "the built-in rules", c->all[0], ranks,
                differ > ADAPT2_REPORT_RANKS ? " and more" : "");
}

void mca_coll_adapt2_rules_check_post(mca_coll_adapt2_module_t *module, ompi_communicator_t *comm)
{
    if (module->rules_check_posted) {
        return;
    }
    module->rules_check_posted = true;
    /* The communicator must drain before it is freed (the drain waits for
     * this check): the engine's creation arms that. */
    if (NULL == mca_coll_adapt2_module_engine(module, comm)) {
        ADAPT2_VERBOSE(10, "(%s) no engine: the ranks' decision tables are not compared", comm->c_name);
        return;
    }
    const int size = ompi_comm_size(comm), rank = ompi_comm_rank(comm);
    const size_t peers = 0 == rank ? (size_t) size - 1 : 1; /* messages */
    const size_t values = 0 == rank ? (size_t) size : 0;
    rules_check_t *c = malloc(sizeof *c + values * sizeof c->all[0] + peers * sizeof c->reqs[0]);
    if (NULL == c) {
        ADAPT2_VERBOSE(10, "(%s) no memory to compare the ranks' decision tables", comm->c_name);
        return;
    }
    const char *origin;
    c->mine = mca_coll_adapt2_engine_rules_fingerprint(&origin);
    c->module = module;
    c->rank = rank;
    c->size = size;
    c->reqs = (ompi_request_t **) (c->all + values);
    snprintf(c->comm_name, sizeof c->comm_name, "%s", comm->c_name);
    int rc = post_messages(c, comm);
    if (OMPI_SUCCESS != rc) {
        /* rank 0 with some receives posted compares what they bring (the
         * other ranks' messages stay unmatched) */
        ADAPT2_VERBOSE(1,
                       "(%s) rank %d of %d: the ranks' decision tables are not compared: posting the "
                       "fingerprint's message %s rank %d failed with error %d",
                       comm->c_name, rank, size, 0 == rank ? "from" : "to", 0 == rank ? c->nreqs + 1 : 0, rc);
        if (0 == c->nreqs) {
            free(c);
            return;
        }
        c->size = c->nreqs + 1; /* compare what comes */
    }
    OBJ_RETAIN(module);
    module->rules_check_pending = 1;
    opal_atomic_add_fetch_32(&in_flight, 1);
    OPAL_THREAD_LOCK(&pending_lock);
    c->next = pending;
    pending = c;
    if (!watching) { /* (un)registered under the lock: a check posted meanwhile keeps it */
        watching = true;
        opal_progress_register(mca_coll_adapt2_rules_check_progress);
    }
    OPAL_THREAD_UNLOCK(&pending_lock);
}

/* With no check left the callback leaves opal_progress: every progress loop
 * of the process (the application's point-to-point waits too) would
 * otherwise call it for the rest of the job. The next communicator's first
 * call registers it again. (Open MPI lets a callback unregister itself.) */
static void stop_watching_when_idle(void)
{
    OPAL_THREAD_LOCK(&pending_lock);
    const bool stop = watching && NULL == pending;
    if (stop) {
        watching = false;
        opal_progress_unregister(mca_coll_adapt2_rules_check_progress);
    }
    OPAL_THREAD_UNLOCK(&pending_lock);
    if (stop) {
        ADAPT2_VERBOSE(20, "no decision-table check in flight: its progress callback is off");
    }
}

/* Takes the checks that completed off the list (only `only`'s, unless
 * NULL). Nothing here progresses: this runs inside opal_progress. */
static rules_check_t *take_completed(const mca_coll_adapt2_module_t *only)
{
    rules_check_t *done = NULL, **link;
    OPAL_THREAD_LOCK(&pending_lock);
    for (link = (rules_check_t **) &pending; *link;) {
        rules_check_t *c = *link;
        if ((only && c->module != only) || !messages_complete(c)) {
            link = &c->next;
            continue;
        }
        *link = c->next;
        for (int i = 0; i < c->nreqs; ++i) {
            (void) ompi_request_free(&c->reqs[i]);
        }
        c->next = done;
        done = c;
    }
    OPAL_THREAD_UNLOCK(&pending_lock);
    return done;
}

void mca_coll_adapt2_rules_check_poll(const mca_coll_adapt2_module_t *only)
{
    if (NULL == pending) {
        return;
    }
    rules_check_t *done = take_completed(only);
    while (done) {
        rules_check_t *next = done->next;
        compare(done);
        done->module->rules_check_pending = 0;
        opal_atomic_add_fetch_32(&in_flight, -1);
        OBJ_RELEASE(done->module);
        free(done);
        done = next;
    }
    stop_watching_when_idle();
}

int mca_coll_adapt2_rules_checks_in_flight(void)
{
    return in_flight;
}

int mca_coll_adapt2_rules_check_progress(void)
{
    mca_coll_adapt2_rules_check_poll(NULL);
    return 0;
}

void mca_coll_adapt2_rules_check_close(void)
{
    OPAL_THREAD_LOCK(&pending_lock);
    const bool was = watching;
    watching = false;
    OPAL_THREAD_UNLOCK(&pending_lock);
    if (was) {
        opal_progress_unregister(mca_coll_adapt2_rules_check_progress);
    }
}

/* A process that never released a communicator must not leave the callback
 * registered once this DSO is unloaded. */
__attribute__((destructor)) static void unregister_at_unload(void)
{
    mca_coll_adapt2_rules_check_close();
}
