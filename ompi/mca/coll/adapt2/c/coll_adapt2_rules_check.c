/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * Every rank of a communicator must plan a call alike, so every rank must
 * read the same decision table (coll_adapt2_rules): ranks whose tables
 * differ may run different algorithms for one call and hang. The first
 * adapt2 collective on each communicator (every rank's first, whichever it
 * is and whatever adapt2 then does with it) posts a non-blocking allgather
 * of the tables' fingerprints through the component installed before
 * adapt2, never waited for inside a call: a progress callback looks for its
 * completion (without progressing itself), so rank 0 reports the ranks
 * whose table differs from its own even while a call their tables planned
 * differently hangs. The drains wait for checks in flight. Nothing is
 * exchanged where that component has no iallgather (said at verbose 10).
 */
#include <inttypes.h>
#include <stdlib.h>

#include "coll_adapt2.h"

#define ADAPT2_REPORT_RANKS 8 /* ranks named in a mismatch report; then "and more" */

typedef struct rules_check_t {
    struct rules_check_t *next;
    mca_coll_adapt2_module_t *module; /* retained until the check is done */
    int rank, size;
    char comm_name[MPI_MAX_OBJECT_NAME]; /* for the report: nothing reads the communicator then */
    ompi_request_t *req;
    uint64_t mine;
    uint64_t all[]; /* one per rank */
} rules_check_t;

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
    if (NULL == module->previous.iallgather) {
        ADAPT2_VERBOSE(10, "(%s) no previous iallgather: the ranks' decision tables are not compared", comm->c_name);
        return;
    }
    /* The communicator must drain before it is freed (the drain waits for
     * this check): the engine's creation arms that. */
    if (NULL == mca_coll_adapt2_module_engine(module, comm)) {
        ADAPT2_VERBOSE(10, "(%s) no engine: the ranks' decision tables are not compared", comm->c_name);
        return;
    }
    const int size = ompi_comm_size(comm);
    rules_check_t *c = malloc(sizeof *c + (size_t) size * sizeof c->all[0]);
    if (NULL == c) {
        ADAPT2_VERBOSE(10, "(%s) no memory to compare the ranks' decision tables", comm->c_name);
        return;
    }
    const char *origin;
    c->mine = mca_coll_adapt2_engine_rules_fingerprint(&origin);
    c->module = module;
    c->rank = ompi_comm_rank(comm);
    c->size = size;
    snprintf(c->comm_name, sizeof c->comm_name, "%s", comm->c_name);
    int rc = module->previous.iallgather(&c->mine, 1, MPI_UINT64_T, c->all, 1, MPI_UINT64_T, comm, &c->req,
                                         module->previous.iallgather_module);
    if (OMPI_SUCCESS != rc) {
        ADAPT2_VERBOSE(10, "(%s) the ranks' decision tables are not compared (iallgather: error %d)", comm->c_name, rc);
        free(c);
        return;
    }
    OBJ_RETAIN(module);
    module->rules_check_pending = 1;
    opal_atomic_add_fetch_32(&in_flight, 1);
    OPAL_THREAD_LOCK(&pending_lock);
    const bool first = !watching;
    watching = true;
    c->next = pending;
    pending = c;
    OPAL_THREAD_UNLOCK(&pending_lock);
    if (first) {
        opal_progress_register(mca_coll_adapt2_rules_check_progress);
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
        if ((only && c->module != only) || !REQUEST_COMPLETE(c->req)) {
            link = &c->next;
            continue;
        }
        *link = c->next;
        (void) ompi_request_free(&c->req);
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
