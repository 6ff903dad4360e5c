/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * The optional progress thread (coll_adapt2_progress_thread=1).
 *
 * A detached call (adapt2_bridge.h) still has sends, receives and combines
 * to do after it returned; without help they advance only when the
 * application calls into MPI again. The thread advances them while the
 * application computes: it sleeps while nothing is detached and polls every
 * coll_adapt2_progress_interval_us while something is.
 *
 * What it may drive depends on what is thread-safe:
 *  - MPI_THREAD_MULTIPLE: Open MPI's progress engine (opal_progress), which
 *    is then safe from any thread; adapt2's callbacks run on the thread too.
 *  - other thread levels with coll_adapt2_transport=ucx: only adapt2's own
 *    UCX worker (coll_adapt2_ucx.c, which serialises its users); the
 *    completions it causes that touch Open MPI objects (request completion,
 *    reference counts) are deferred to the application's next MPI call,
 *    through an opal_progress callback.
 *  - other thread levels over the PML: nothing is safe (Open MPI's locks are
 *    off and the PML may not be entered twice), so the thread is not started
 *    and the verbose output says so; detached calls then advance at the
 *    application's next MPI call.
 */
#include <pthread.h>
#include <time.h>

#include "coll_adapt2.h"
#include "coll_adapt2_ucx.h"

#include "opal/runtime/opal_progress.h"

typedef enum { PROGRESS_NONE, PROGRESS_OPAL, PROGRESS_UCX } progress_mode_t;

static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t thread;
    bool decided, running, stop;
    progress_mode_t mode;
    long interval_ns;
    volatile int32_t detached;           /* calls detached and not finished */
    mca_coll_adapt2_request_t *deferred; /* reports for an application thread */
    volatile int64_t cpu_ns, polls;      /* the thread's cost */
} progress = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .wake = PTHREAD_COND_INITIALIZER,
};

static __thread bool on_progress_thread;

static int64_t thread_cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (int64_t) t.tv_sec * 1000000000 + t.tv_nsec;
}

static void progress_once(void)
{
    if (PROGRESS_OPAL == progress.mode) {
        opal_progress();
    } else {
        mca_coll_adapt2_ucx_progress();
    }
}

static void *thread_main(void *arg)
{
    (void) arg;
    on_progress_thread = true;
    struct timespec nap = {0, progress.interval_ns};
    pthread_mutex_lock(&progress.lock);
    while (!progress.stop) {
        if (0 == progress.detached) {
            /* A wake-up can be missed only in the instant before the wait
             * (see progress_detached); the timeout bounds that delay. */
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_nsec += 10 * 1000 * 1000;
            if (until.tv_nsec >= 1000000000) {
                until.tv_sec += 1;
                until.tv_nsec -= 1000000000;
            }
            pthread_cond_timedwait(&progress.wake, &progress.lock, &until);
            continue;
        }
        pthread_mutex_unlock(&progress.lock);
        progress_once();
        progress.polls++;
        nanosleep(&nap, NULL);
        progress.cpu_ns = thread_cpu_ns();
        pthread_mutex_lock(&progress.lock);
    }
    pthread_mutex_unlock(&progress.lock);
    return NULL;
}

/* Runs the reports the thread deferred (on an application thread). */
static int run_deferred(void)
{
    if (NULL == progress.deferred) {
        return 0;
    }
    mca_coll_adapt2_request_t *list = __atomic_exchange_n(&progress.deferred, NULL, __ATOMIC_ACQ_REL);
    int n = 0;
    while (list) {
        mca_coll_adapt2_request_t *req = list;
        list = req->next_deferred; /* read first: req may be queued again */
        int events = opal_atomic_swap_32(&req->deferred, 0);
        mca_coll_adapt2_request_run_deferred(req, events & ~ADAPT2_DEFER_QUEUED);
        ++n;
    }
    return n;
}

static progress_mode_t choose_mode(int transport)
{
    mca_coll_adapt2_component_t *c = &mca_coll_adapt2_component;
    if (!ADAPT2_INT(progress_thread)) {
        return PROGRESS_NONE;
    }
    if (ADAPT2_TRANSPORT_UCX == transport) {
        ADAPT2_VERBOSE(10, "progress thread: drives adapt2's UCX worker%s",
                       c->thread_multiple ? ""
                                          : "; request completions go to the application's "
                                            "next MPI call");
        return PROGRESS_UCX;
    }
    if (c->thread_multiple) {
        ADAPT2_VERBOSE(10, "progress thread: drives opal_progress (MPI_THREAD_MULTIPLE)");
        return PROGRESS_OPAL;
    }
    ADAPT2_VERBOSE(1,
                   "progress thread not started: driving the PML from a second thread is "
                   "safe only under MPI_THREAD_MULTIPLE (or use coll_adapt2_transport=ucx); "
                   "detached collectives advance at the application's next MPI call");
    return PROGRESS_NONE;
}

/* Once per process, when the first communicator gets its engine. */
void mca_coll_adapt2_progress_start(int transport)
{
    mca_coll_adapt2_component_t *c = &mca_coll_adapt2_component;
    pthread_mutex_lock(&progress.lock);
    if (progress.decided) {
        pthread_mutex_unlock(&progress.lock);
        return;
    }
    progress.decided = true;
    progress.mode = choose_mode(transport);
    /* before the first engine's first call, and before the thread exists (engine/threads.h) */
    const bool may_race = c->thread_multiple || PROGRESS_NONE != progress.mode;
    mca_coll_adapt2_engine_set_threads_may_race(may_race);
    ADAPT2_VERBOSE(10, "engine: %s",
                   may_race ? "threads may race (locked inbox and mutexes)"
                            : "one thread at a time (inbox and mutexes without locked instructions)");
    progress.interval_ns = 1000L * ADAPT2_INT(progress_interval_us);
    if (PROGRESS_NONE != progress.mode) {
        if (!c->thread_multiple) {
            opal_progress_register(run_deferred);
        }
        progress.running = 0 == pthread_create(&progress.thread, NULL, thread_main, NULL);
        if (!progress.running) {
            opal_output(0, "coll:adapt2: could not start the progress thread; running without");
        }
    }
    pthread_mutex_unlock(&progress.lock);
}

/* At MPI_Finalize, after everything detached has finished. */
void mca_coll_adapt2_progress_stop(void)
{
    pthread_mutex_lock(&progress.lock);
    bool running = progress.running;
    progress.stop = true;
    progress.running = false;
    pthread_cond_signal(&progress.wake);
    pthread_mutex_unlock(&progress.lock);
    if (running) {
        pthread_join(progress.thread, NULL);
        ADAPT2_VERBOSE(10, "progress thread: %lld polls, %.3f ms of CPU", (long long) progress.polls,
                       progress.cpu_ns / 1e6);
    }
    run_deferred();
    if (PROGRESS_NONE != progress.mode && !mca_coll_adapt2_component.thread_multiple) {
        opal_progress_unregister(run_deferred);
    }
}

/* Called from completion callbacks: never waits for the lock. */
void mca_coll_adapt2_progress_detached(int delta)
{
    int32_t now = opal_atomic_add_fetch_32(&progress.detached, delta);
    if (delta > 0 && 1 == now && progress.running && 0 == pthread_mutex_trylock(&progress.lock)) {
        pthread_cond_signal(&progress.wake);
        pthread_mutex_unlock(&progress.lock);
    }
}

bool mca_coll_adapt2_progress_must_defer(void)
{
    return on_progress_thread && !mca_coll_adapt2_component.thread_multiple;
}

/* Queues an event of `req` for run_deferred; a request is in the list at
 * most once, with all its pending events. */
void mca_coll_adapt2_progress_defer(mca_coll_adapt2_request_t *req, int event)
{
    int32_t old = opal_atomic_fetch_or_32(&req->deferred, event | ADAPT2_DEFER_QUEUED);
    if (old & ADAPT2_DEFER_QUEUED) {
        return;
    }
    mca_coll_adapt2_request_t *head = __atomic_load_n(&progress.deferred, __ATOMIC_ACQUIRE);
    do {
        req->next_deferred = head;
    } while (!__atomic_compare_exchange_n(&progress.deferred, &head, req, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
}

uint64_t mca_coll_adapt2_progress_cpu_ns(void)
{
    return (uint64_t) progress.cpu_ns;
}

uint64_t mca_coll_adapt2_progress_polls(void)
{
    return (uint64_t) progress.polls;
}
