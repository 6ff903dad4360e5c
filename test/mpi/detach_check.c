/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * Decoupled ("detached") completion of MPI_Bcast/MPI_Ibcast (root and
 * interior ranks) and MPI_Reduce/MPI_Ireduce (non-root ranks): the call
 * completes once the rank's data is in adapt2's private copy, and the sends
 * and combines go on in the background (adapt2_bridge.h).
 *
 * Every element on every rank is checked. Each buffer a rank passes on is
 * trashed, freed and its memory taken by a trashed "squatter" allocation the
 * moment the call returns (derived datatypes are freed then too), so data
 * read from the user buffer after completion shows up at the receivers.
 *
 * "Returned before the sleeper entered" is shown causally, not by timing: a
 * sleeping rank sleeps a few ms, then keeps sleeping (usleep, no MPI call)
 * until the ranks that must not wait for it have posted on a notice board
 * in shared memory that they returned (and trashed their buffers); only
 * then does it enter the call. Had they waited for it, it gives up after
 * 5 s and the test fails. Where a rank must wait (detaching off, controls)
 * the sleeper gives up after 100 ms and must not have seen the posts.
 * CLOCK_MONOTONIC stamps (one clock for the node; MPI_Wtime has a
 * per-process origin in Open MPI 4.1) are gathered to rank 0, checked for
 * consistency with the posts and printed as a timeline on failure.
 *
 *   detach_check -t CASE [-n N] [-s MS] [--expect detach|coupled|limited]
 *                [--strict BYTES] [--refused yes|no] [--thread single|multiple]
 *                [--progress yes|no|auto]
 *
 * --expect detach (default; coll_adapt2_detach_max_message >= 1 MiB),
 * coupled (it is 0), limited (anything): which calls must detach follows
 * from coll_adapt2_detach_max_message, read through MPI_T. --strict: from
 * this size (default 64 KiB) sends are rendezvous, so they cannot complete
 * before the receiver enters: a call that returned first must have counted
 * a detached call (coll_adapt2_detached_calls), and one that may not detach
 * must wait for a sleeping child.
 *
 * CASE:
 *  delay     N (48) timed calls: bcast and reduce of 4 KiB, 64 KiB, 1 MiB
 *            from rotating roots, with one or two sleeping receivers (a
 *            reduce's sleeper is its root), and allreduce and user-op reduce
 *            as controls, which must never detach (counters unchanged on all
 *            ranks) and must wait for the sleeper. Each is followed by 4
 *            back-to-back calls with short random sleeps. Assertions: the
 *            root (bcast) / every non-root (reduce) returned before the
 *            sleeper entered; from --strict bytes the bcast root counted
 *            exactly one detached call and the non-roots at least one in all,
 *            the sleeper none.
 *  reuse     the same with bcast, ibcast, reduce, ireduce, of bytes and of a
 *            vector type (receivers of a vector bcast use either the vector
 *            or plain ints; holes checked); vector reduces need
 *            --mca mpi_param_check 0 (Open MPI 4.1.4 rejects MPI_SUM on
 *            derived types) and become int reduces without it.
 *  comms     N (300) back-to-back calls on three communicators (dup, parity
 *            split, reversed split), blocking and batches of up to 5
 *            outstanding non-blocking ones waited in a per-rank random
 *            order, varying kinds, roots and sizes (1 B - 1 MiB), random
 *            short sleeps; adapt2 ran every call (bcast_calls, reduce_calls);
 *            detached calls seen (none when detaching is off).
 *  cap       N (3) rounds of two parts, bcast from rank 0, then reduce to
 *            the last rank, which sleeps until the senders (bcast root,
 *            reduce non-roots) posted that 4 blocking 64 KiB calls returned
 *            (detached: they fill a cap of 256 KiB), then 20 ms more. The
 *            senders go on with a blocking 64 KiB call (pool full: it must
 *            wait for room, coll_adapt2_detach_waits), a non-blocking one, a
 *            1 MiB one and more. --refused yes (needs detach_max_bytes
 *            262144): every sender waited at least once and was refused at
 *            least once (coll_adapt2_detach_refused: the 1 MiB call does not
 *            fit) per part; --refused no (default cap 8 MiB): nobody waited
 *            or was refused. Some calls must have detached; data checked.
 *  finalize  on a new communicator, detached calls (bcast 1 MiB, reduce,
 *            vector ibcast, ireduce 1 MiB) then at once MPI_Comm_free (then,
 *            a second time, MPI_Comm_disconnect) while the last rank sleeps
 *            until the others posted that they are about to free it; calls
 *            on another communicator; last, detached calls on
 *            MPI_COMM_WORLD right before MPI_Finalize, entered by the last
 *            rank only once the others are about to finalize: it checks the
 *            data and prints "received the final data"; rank 0 prints
 *            "finalizing with N detached calls". All must exit 0.
 *  thread    3 rounds of a 1 MiB reduce to rank 0 over the pipeline tree
 *            0 <- 1 <- 2 <- ...: rank 1 returns (detached: its own data
 *            copied) and computes (usleep, no MPI call) until rank 0 posts
 *            that its reduce returned; ranks 2.. enter only once rank 1
 *            posted its return, so rank 1 must receive and combine rank 2's
 *            data after its call returned. Under MPI_THREAD_MULTIPLE with
 *            coll_adapt2_progress_thread 1, rank 0 must be done while rank 1
 *            computes (within 5 s); otherwise rank 0 must not be done within
 *            MS (300) ms of rank 1's computing. Then N (60) back-to-back
 *            mixed calls with random sleeps. --thread picks the thread
 *            level (default single); --progress says whether a progress
 *            thread runs (auto: coll_adapt2_progress_thread 1 and either
 *            MPI_THREAD_MULTIPLE or coll_adapt2_transport ucx).
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/mman.h>

#include "mpi_check.h"

#define POISON 0xA5 /* receive buffers and holes before the call */
#define TRASH 0x5A  /* send buffers after the call returned */
#define SQUAT 0xC3  /* memory reallocated after a send buffer was freed */
#define MAX_TIMED 512

enum kind { K_BCAST, K_VBCAST, K_REDUCE, K_VREDUCE, K_UREDUCE, K_ALLREDUCE };
static const char *kind_names[] = {"bcast", "vector bcast", "reduce", "vector reduce", "user-op reduce", "allreduce"};
enum expect { E_DETACH, E_COUPLED, E_LIMITED };

static struct {
    const char *test;
    int n;           /* iterations; 0: the case's default */
    double sleep_ms; /* 0: the case's default */
    int expect;
    size_t strict;
    int refused;  /* -1 any, 0 no, 1 yes */
    int progress; /* thread case: whether a progress thread runs (-1: auto) */
    int thread_multiple;
} opt = {.expect = E_DETACH, .strict = 65536, .refused = -1, .progress = -1};

static int rank, np;
static long long errors;
static long detach_min; /* coll_adapt2_detach_min_message */
static long detach_max; /* coll_adapt2_detach_max_message */
static int bcast_radix; /* coll_adapt2_bcast_radix */

/* Whether a broadcast or reduce of this many packed bytes may detach. */
static int detaches(size_t bytes)
{
    return (long) bytes > detach_min && (long) bytes <= detach_max;
}
static MPI_Op user_sum; /* a user-defined sum: never detaches */

/* ---- small tools ------------------------------------------------------- */

/* CLOCK_MONOTONIC is one clock for every process on the node. */
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + 1e-9 * (double) t.tv_nsec;
}

static void sleep_ms(double ms)
{
    if (ms > 0) usleep((useconds_t) (ms * 1000.0));
}

static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* What communicator rank r contributes at int k of call `id`: small enough
 * that the sum over 64 ranks cannot overflow. */
static int rval(int r, int id, size_t k)
{
    return (int) (mix(((uint64_t) id << 40) ^ ((uint64_t) r << 32) ^ (uint64_t) k) % 200001) - 100000;
}

static int printed;
static void report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void report(const char *fmt, ...)
{
    ++errors;
    if (printed++ >= 30) return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "rank %d: ", rank);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}

static long long counter(const char *name)
{
    long long v = adapt2_counter(name);
    if (v < 0) fail("no MPI_T counter %s: adapt2 not loaded, or older than the test", name);
    return v;
}
static long long detached(void)
{
    return counter("coll_adapt2_detached_calls");
}

/* A string control variable ("" if unknown). */
static void cvar_string(const char *name, char *out, size_t len)
{
    int index, count, provided, level;
    MPI_T_cvar_handle h;
    MPI_Query_thread(&level);
    MPI_T_init_thread(level, &provided);
    out[0] = 0;
    if (MPI_T_cvar_get_index(name, &index) == MPI_SUCCESS &&
        MPI_T_cvar_handle_alloc(index, NULL, &h, &count) == MPI_SUCCESS) {
        char *value = calloc((size_t) count + 1, 1);
        if (value && MPI_T_cvar_read(h, value) == MPI_SUCCESS) {
            strncpy(out, value, len - 1);
            out[len - 1] = 0;
        }
        free(value);
        MPI_T_cvar_handle_free(&h);
    }
    MPI_T_finalize();
}

/* Freed send buffers: their memory is taken at once by allocations of the
 * same size full of SQUAT, kept for a few calls. */
#define NSQUAT 4
static void *squatters[NSQUAT];
static int next_squat;
static void trash_and_free(void *p, size_t bytes)
{
    if (!p) return;
    memset(p, TRASH, bytes);
    free(p);
    free(squatters[next_squat]);
    squatters[next_squat] = malloc(bytes);
    if (squatters[next_squat]) memset(squatters[next_squat], SQUAT, bytes);
    next_squat = (next_squat + 1) % NSQUAT;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) fail("out of memory (%zu bytes)", n);
    return p;
}

static void user_sum_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void) dt;
    const int *a = in;
    int *b = inout;
    for (int i = 0; i < *len; ++i) b[i] += a[i];
}

/* ---- one collective call ------------------------------------------------ */

/* The vector layout: blocks of 3 ints every 5 ints. */
#define VBLOCK 3
#define VSTRIDE 5
static size_t vec_int_offset(size_t k)
{
    return (k / VBLOCK) * VSTRIDE + k % VBLOCK;
}

typedef struct call {
    int kind, nonblocking, id, root;
    size_t bytes; /* requested; packed bytes may be rounded for vectors */
    MPI_Comm comm;
    int crank, csize;
    /* filled by call_prepare */
    size_t nints;              /* ints in the message (all kinds but K_BCAST) */
    MPI_Datatype stype, rtype; /* datatypes: send side / receive side (vectors) */
    int scount, rcount;
    int svec, rvec; /* buffer laid out as the vector type */
    void *sbuf, *rbuf;
    size_t sbytes, rbytes; /* allocated */
    MPI_Request req;
} call_t;

static size_t vec_bytes(size_t nints)
{
    return (vec_int_offset(nints - 1) + 1) * sizeof(int);
}

static void call_prepare(call_t *c)
{
    MPI_Comm_rank(c->comm, &c->crank);
    MPI_Comm_size(c->comm, &c->csize);
    c->req = MPI_REQUEST_NULL;
    c->sbuf = c->rbuf = NULL;
    c->svec = c->rvec = 0;
    c->stype = c->rtype = MPI_DATATYPE_NULL;
    const int is_root = c->crank == c->root;
    if (c->kind == K_BCAST) {
        c->sbytes = c->bytes;
        c->sbuf = xmalloc(c->bytes);
        unsigned char *b = c->sbuf;
        for (size_t i = 0; i < c->bytes; ++i) b[i] = is_root ? pattern_byte(c->id, c->root, i) : POISON;
        c->stype = MPI_BYTE;
        c->scount = (int) c->bytes;
        return;
    }
    c->nints = c->bytes / sizeof(int);
    if (c->kind == K_VBCAST || c->kind == K_VREDUCE) c->nints = c->nints / VBLOCK * VBLOCK;
    if (c->nints < VBLOCK) c->nints = VBLOCK;
    MPI_Datatype vec = MPI_DATATYPE_NULL;
    if (c->kind == K_VBCAST || c->kind == K_VREDUCE) {
        MPI_Type_vector((int) (c->nints / VBLOCK), VBLOCK, VSTRIDE, MPI_INT, &vec);
        MPI_Type_commit(&vec);
    }
    if (c->kind == K_VBCAST) {
        /* The root and odd ranks use the vector, the others plain ints: one signature. */
        c->svec = is_root || c->crank % 2;
        c->stype = c->svec ? vec : MPI_INT;
        c->scount = c->svec ? 1 : (int) c->nints;
        if (!c->svec) MPI_Type_free(&vec);
        c->sbytes = c->svec ? vec_bytes(c->nints) : c->nints * sizeof(int);
        c->sbuf = xmalloc(c->sbytes);
        memset(c->sbuf, POISON, c->sbytes);
        if (is_root) {
            unsigned char *b = c->sbuf;
            for (size_t p = 0; p < c->nints * sizeof(int); ++p)
                b[vec_int_offset(p / 4) * 4 + p % 4] = pattern_byte(c->id, c->root, p);
        }
        return;
    }
    /* reductions: ints, MPI_SUM (or the user-defined sum) */
    c->svec = c->rvec = c->kind == K_VREDUCE;
    c->stype = c->rtype = c->svec ? vec : MPI_INT;
    c->scount = c->rcount = c->svec ? 1 : (int) c->nints;
    c->sbytes = c->svec ? vec_bytes(c->nints) : c->nints * sizeof(int);
    c->sbuf = xmalloc(c->sbytes);
    memset(c->sbuf, POISON, c->sbytes);
    int *s = c->sbuf;
    for (size_t k = 0; k < c->nints; ++k) s[c->svec ? vec_int_offset(k) : k] = rval(c->crank, c->id, k);
    if (is_root || c->kind == K_ALLREDUCE) {
        c->rbytes = c->sbytes;
        c->rbuf = xmalloc(c->rbytes);
        memset(c->rbuf, POISON, c->rbytes);
    }
}

static void call_start(call_t *c)
{
    switch (c->kind) {
    case K_BCAST:
    case K_VBCAST:
        if (c->nonblocking)
            MPI_Ibcast(c->sbuf, c->scount, c->stype, c->root, c->comm, &c->req);
        else
            MPI_Bcast(c->sbuf, c->scount, c->stype, c->root, c->comm);
        break;
    case K_REDUCE:
    case K_VREDUCE:
    case K_UREDUCE: {
        MPI_Op op = c->kind == K_UREDUCE ? user_sum : MPI_SUM;
        /* rbuf is NULL on non-roots: not significant there */
        if (c->nonblocking)
            MPI_Ireduce(c->sbuf, c->rbuf, c->scount, c->stype, op, c->root, c->comm, &c->req);
        else
            MPI_Reduce(c->sbuf, c->rbuf, c->scount, c->stype, op, c->root, c->comm);
        break;
    }
    case K_ALLREDUCE: MPI_Allreduce(c->sbuf, c->rbuf, c->scount, c->stype, MPI_SUM, c->comm); break;
    }
}

static void call_wait(call_t *c)
{
    if (c->req != MPI_REQUEST_NULL) MPI_Wait(&c->req, MPI_STATUS_IGNORE);
}

/* Right after completion: the buffers this rank passed on are trashed and
 * freed first (and derived datatypes freed), then what it received is
 * checked. */
static void call_finish(call_t *c)
{
    char what[160];
    snprintf(what, sizeof what, "call %d (%s%s, %zu bytes, root %d, comm rank %d of %d)", c->id,
             c->nonblocking ? "non-blocking " : "", kind_names[c->kind], c->bytes, c->root, c->crank, c->csize);
    const int is_root = c->crank == c->root;
    const int sends_only = (c->kind == K_BCAST || c->kind == K_VBCAST) ? is_root : c->kind != K_ALLREDUCE;
    if (c->svec || c->rvec) {
        MPI_Datatype t = c->svec ? c->stype : c->rtype;
        MPI_Type_free(&t);
    }
    if (sends_only) { /* bcast root, every reduce rank's send buffer */
        trash_and_free(c->sbuf, c->sbytes);
        c->sbuf = NULL;
    }
    long long bad = 0;
    size_t first = (size_t) -1;
    if (c->kind == K_BCAST && !is_root) {
        const unsigned char *b = c->sbuf;
        for (size_t i = 0; i < c->bytes; ++i) {
            if (b[i] != pattern_byte(c->id, c->root, i)) {
                if (!bad++) first = i;
            }
        }
        if (bad)
            report("%s: %lld of %zu bytes wrong, first at %zu (0x%02x, expected 0x%02x)", what, bad, c->bytes, first,
                   b[first], pattern_byte(c->id, c->root, first));
    } else if (c->kind == K_VBCAST && !is_root) {
        const unsigned char *b = c->sbuf;
        size_t packed = c->nints * sizeof(int);
        unsigned char *seen = calloc(c->sbytes, 1);
        for (size_t p = 0; p < packed; ++p) {
            size_t at = c->svec ? vec_int_offset(p / 4) * 4 + p % 4 : p;
            seen[at] = 1;
            if (b[at] != pattern_byte(c->id, c->root, p) && !bad++) first = p;
        }
        long long holes = 0;
        for (size_t i = 0; i < c->sbytes; ++i) holes += !seen[i] && b[i] != POISON;
        free(seen);
        if (bad) report("%s: %lld of %zu packed bytes wrong, first at %zu", what, bad, packed, first);
        if (holes) report("%s: %lld hole bytes overwritten", what, holes);
    } else if (c->rbuf) { /* reduce root, allreduce everyone */
        const int *r = c->rbuf;
        int got = 0, want = 0;
        for (size_t k = 0; k < c->nints; ++k) {
            int sum = 0;
            for (int q = 0; q < c->csize; ++q) sum += rval(q, c->id, k);
            int v = r[c->rvec ? vec_int_offset(k) : k];
            if (v != sum && !bad++) first = k, got = v, want = sum;
        }
        if (bad)
            report("%s: %lld of %zu sums wrong, first at int %zu (%d, expected %d)", what, bad, c->nints, first, got,
                   want);
        if (c->rvec) {
            const unsigned char *b = c->rbuf;
            long long holes = 0;
            for (size_t k = 0; k + 1 < c->nints; k += VBLOCK) {
                size_t from = (vec_int_offset(k) + VBLOCK) * 4, to = vec_int_offset(k + VBLOCK) * 4;
                for (size_t i = from; i < to && i < c->rbytes; ++i) holes += b[i] != POISON;
            }
            if (holes) report("%s: %lld hole bytes of the result overwritten", what, holes);
        }
    }
    free(c->sbuf);
    free(c->rbuf);
    c->sbuf = c->rbuf = NULL;
}

static void run_call(call_t *c)
{
    call_prepare(c);
    call_start(c);
    call_wait(c);
    call_finish(c);
}

/* ---- the notice board -------------------------------------------------- */

/* A page of memory shared by the ranks of the node: board[r] is the last
 * mark rank r posted. A rank "sleeping" in a call's stead waits on it with
 * usleep only, never calling MPI, so what it sees is causal evidence: a rank
 * that posted after returning from a call returned before the sleeper
 * entered it. */
static volatile long *board;
static long marks;

static void board_open(void)
{
    MPI_Comm node;
    int nsize;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &nsize);
    MPI_Comm_free(&node);
    if (nsize != np) fail("all ranks must run on one node (%d of %d do)", nsize, np);
    char path[64] = "/dev/shm/adapt2_detach_XXXXXX";
    int fd = -1;
    if (rank == 0) {
        fd = mkstemp(path);
        if (fd < 0) {
            strcpy(path, "/tmp/adapt2_detach_XXXXXX");
            fd = mkstemp(path);
        }
        if (fd < 0 || ftruncate(fd, 4096) != 0) fail("cannot create a shared file");
        for (int r = 1; r < np; ++r) MPI_Send(path, sizeof path, MPI_CHAR, r, 7, MPI_COMM_WORLD);
    } else {
        MPI_Recv(path, sizeof path, MPI_CHAR, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        fd = open(path, O_RDWR);
        if (fd < 0) fail("cannot open %s", path);
    }
    if ((size_t) np * sizeof(long) > 4096) fail("too many ranks");
    void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) fail("mmap %s", path);
    close(fd);
    board = p;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) unlink(path);
}

static void post(long mark)
{
    __atomic_store_n(&board[rank], mark, __ATOMIC_RELEASE);
}

/* Waits, without calling MPI, until every rank in who[0..n) posted at least
 * `mark`, or `timeout_ms` passed. Returns 1 if they all did. */
static int await_marks(const int *who, int n, long mark, double timeout_ms)
{
    double until = now() + timeout_ms / 1000.0;
    for (;;) {
        int all = 1;
        for (int i = 0; i < n && all; ++i) all = __atomic_load_n(&board[who[i]], __ATOMIC_ACQUIRE) >= mark;
        if (all) return 1;
        if (now() > until) return 0;
        usleep(100);
    }
}

/* Waits longer than anything can take on a loaded machine when the marks
 * must come; shortly when they need not or must not (the sleeper then goes
 * in anyway). Once a mark that had to come did not, the test has failed:
 * later waits are short so that it ends soon. */
#define MUST_COME_MS 5000.0
#define SHORT_MS 100.0
static int missed_marks;
static int await_required(const int *who, int n, long mark)
{
    int ok = await_marks(who, n, mark, missed_marks ? SHORT_MS : MUST_COME_MS);
    missed_marks += !ok;
    return ok;
}

/* ---- timed calls ------------------------------------------------------- */

typedef struct spec {
    int kind, nonblocking;
    size_t bytes;
    int root;
    int nsleep, sleepers[2];
} spec_t;

static spec_t specs[MAX_TIMED];
static double rec_barrier[MAX_TIMED], rec_entry[MAX_TIMED], rec_ret[MAX_TIMED];
static double rec_delta[MAX_TIMED], rec_saw[MAX_TIMED];
static int ntimed;
static int call_ids = 1;

static int is_sleeper(const spec_t *s, int r)
{
    for (int i = 0; i < s->nsleep; ++i)
        if (s->sleepers[i] == r) return 1;
    return 0;
}

static int is_bcast(const spec_t *s)
{
    return s->kind == K_BCAST || s->kind == K_VBCAST;
}

/* The packed bytes of the call (vectors hold whole blocks of 3 ints). */
static size_t packed(const spec_t *s)
{
    if (s->kind == K_BCAST) return s->bytes;
    size_t n = s->bytes / sizeof(int);
    if (s->kind == K_VBCAST || s->kind == K_VREDUCE) n = n / VBLOCK * VBLOCK;
    return (n < VBLOCK ? VBLOCK : n) * sizeof(int);
}
static int is_reduce(const spec_t *s)
{
    return s->kind == K_REDUCE || s->kind == K_VREDUCE;
}

/* The ranks that must return before the sleepers enter (detached), or
 * that cannot (controls). */
static int watched(const spec_t *s, int *who)
{
    int n = 0;
    if (is_bcast(s)) {
        who[n++] = s->root;
        return n;
    }
    for (int r = 0; r < np; ++r)
        if (!is_sleeper(s, r)) who[n++] = r;
    return n;
}

/* Whether the sleepers must find the watched ranks returned (detaching). */
static int must_return(const spec_t *s)
{
    return (is_bcast(s) || is_reduce(s)) && detaches(packed(s));
}

/* Whether the sleepers must find the watched ranks still in the call. */
static int must_wait(const spec_t *s)
{
    if (s->kind == K_ALLREDUCE) return 1;                    /* needs everybody's data */
    if (s->kind == K_UREDUCE) return s->bytes >= opt.strict; /* user ops never detach */
    /* not detaching: rendezvous sends need the sleeper if it is a child of
     * the root, as in the flat trees adapt2 uses for up to radix + 1 ranks
     * (a reduce's sleeper is the root: its children must wait) */
    if (detaches(packed(s)) || s->bytes < opt.strict) return 0;
    return is_reduce(s) || (np <= 8 && bcast_radix >= np - 1);
}

/* All ranks leave a barrier. The sleepers sleep `ms`, then go on sleeping
 * until the watched ranks returned from the call (at most a long timeout;
 * a short one when they must not return). The others run the call at once
 * and post a mark when they returned and trashed their send buffers. */
static void run_timed(const spec_t *s, double ms)
{
    if (ntimed == MAX_TIMED) fail("too many timed calls");
    call_t c = {.kind = s->kind,
                .nonblocking = s->nonblocking,
                .id = call_ids++,
                .root = s->root,
                .bytes = s->bytes,
                .comm = MPI_COMM_WORLD};
    int who[64];
    int nwho = watched(s, who);
    long mark = ++marks;
    call_prepare(&c);
    MPI_Barrier(MPI_COMM_WORLD);
    rec_barrier[ntimed] = now();
    rec_saw[ntimed] = -1;
    if (is_sleeper(s, rank)) {
        sleep_ms(ms);
        rec_saw[ntimed] = must_return(s) ? await_required(who, nwho, mark) : await_marks(who, nwho, mark, SHORT_MS);
    }
    long long d0 = detached();
    rec_entry[ntimed] = now();
    call_start(&c);
    call_wait(&c);
    rec_ret[ntimed] = now();
    rec_delta[ntimed] = (double) (detached() - d0);
    call_finish(&c);
    if (!is_sleeper(s, rank)) post(mark);
    specs[ntimed++] = *s;
}

/* Everybody's records of one timed call, on rank 0. */
typedef struct stamps {
    const double *bar, *entry, *ret, *delta, *saw; /* [rank * MAX_TIMED + i] */
    int i;
} stamps_t;
#define BAR(r) st->bar[(r) *MAX_TIMED + st->i]
#define E(r) st->entry[(r) *MAX_TIMED + st->i]
#define R(r) st->ret[(r) *MAX_TIMED + st->i]
#define D(r) ((long long) st->delta[(r) *MAX_TIMED + st->i])
#define SAW(r) ((int) st->saw[(r) *MAX_TIMED + st->i])

static void verify_one(const spec_t *s, const stamps_t *st, int *orders, int *counts)
{
    char what[128];
    snprintf(what, sizeof what, "timed call %d: %s%s of %zu bytes, root %d, sleeper %d%s", st->i,
             s->nonblocking ? "non-blocking " : "", kind_names[s->kind], s->bytes, s->root, s->sleepers[0],
             s->nsleep > 1 ? " and another" : "");
    int who[64];
    int nwho = watched(s, who);
    const int big = s->bytes >= opt.strict;
    const int control = !is_bcast(s) && !is_reduce(s);
    for (int k = 0; k < s->nsleep; ++k) {
        int z = s->sleepers[k];
        if (must_wait(s)) {
            if (SAW(z))
                report("%s: %s returned before sleeper %d entered the call", what,
                       control ? "every other rank" : "with detaching off, every watched rank", z);
            ++*orders;
        } else if (must_return(s)) {
            if (!SAW(z))
                report(
                    "%s: sleeper %d gave up waiting for the %s to return from the call (it waited for the "
                    "sleeper?) and entered it",
                    what, z, is_bcast(s) ? "root" : "non-roots");
            ++*orders;
            /* the marks are causal: the clocks must agree */
            for (int i = 0; i < nwho && SAW(z); ++i)
                if (R(who[i]) >= E(z))
                    report(
                        "%s: rank %d's return is stamped after sleeper %d's entry, though it posted before: "
                        "CLOCK_MONOTONIC differs between processes?",
                        what, who[i], z);
        }
    }
    if (control || !detaches(packed(s))) {
        for (int r = 0; r < np; ++r)
            if (D(r) != 0) report("%s: rank %d counted %lld detached calls, expected none", what, r, D(r));
        ++*counts;
        return;
    }
    if (!big) return; /* eager sends may complete at once: no need to detach */
    if (is_bcast(s)) {
        /* The root detaches if a child of its is late; from the await size a root
         * whose children all entered serves them from the user's buffer and
         * an interior ancestor of the sleeper detaches instead. */
        long long sum = 0;
        for (int r = 0; r < np; ++r) sum += D(r);
        if (D(s->root) > 1 || sum < 1)
            report(
                "%s: root counted %lld detached calls, all ranks %lld; expected the root or an "
                "ancestor of the sleeper to detach once",
                what, D(s->root), sum);
    } else {
        long long sum = 0;
        for (int r = 0; r < np; ++r)
            if (r != s->root) sum += D(r);
        if (sum < 1) report("%s: no non-root counted a detached call", what);
    }
    if (is_reduce(s) && D(s->root) != 0) /* a bcast's sleeper may be an interior rank */
        report("%s: the root counted %lld detached calls", what, D(s->root));
    ++*counts;
}

/* Rank 0 checks every timed call; a failed call's timeline is printed (ms
 * after the first rank left the barrier). */
static void verify_timed(void)
{
    double *all[5] = {NULL, NULL, NULL, NULL, NULL};
    double *mine[5] = {rec_barrier, rec_entry, rec_ret, rec_delta, rec_saw};
    for (int k = 0; k < 5; ++k) {
        if (rank == 0) all[k] = xmalloc(sizeof(double) * np * MAX_TIMED);
        MPI_Gather(mine[k], MAX_TIMED, MPI_DOUBLE, all[k], MAX_TIMED, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    }
    if (rank != 0) return;
    int orders = 0, counts = 0;
    for (int i = 0; i < ntimed; ++i) {
        stamps_t stamps = {all[0], all[1], all[2], all[3], all[4], i}, *st = &stamps;
        long long before = errors;
        verify_one(&specs[i], st, &orders, &counts);
        if (errors == before) continue;
        double t0 = BAR(0);
        for (int r = 1; r < np; ++r)
            if (BAR(r) < t0) t0 = BAR(r);
        for (int r = 0; r < np; ++r)
            fprintf(stderr,
                    "    timed call %d, rank %d%s: left barrier %.3f, entered %.3f, returned %.3f ms; "
                    "%lld detached\n",
                    i, r, is_sleeper(&specs[i], r) ? " (sleeper)" : "", 1e3 * (BAR(r) - t0), 1e3 * (E(r) - t0),
                    1e3 * (R(r) - t0), D(r));
    }
    printf("detach_check: %d timed calls, %d return-order and %d counter checks\n", ntimed, orders, counts);
    for (int k = 0; k < 5; ++k) free(all[k]);
}
#undef BAR
#undef E
#undef R
#undef D
#undef SAW

/* ---- cases ------------------------------------------------------------- */

static const size_t three_sizes[] = {4096, 65536, 1 << 20};

/* Untimed back-to-back calls with short random sleeps on a random rank
 * (the same sequence on every rank). */
static void back_to_back(int count, uint64_t seed, MPI_Comm comm)
{
    static const int kinds[] = {K_BCAST, K_REDUCE, K_BCAST, K_REDUCE, K_VBCAST};
    int csize;
    MPI_Comm_size(comm, &csize);
    for (int j = 0; j < count; ++j) {
        uint64_t h = mix(seed * 1000 + (uint64_t) j);
        call_t c = {.kind = kinds[h % 5],
                    .nonblocking = (h >> 8) % 3 == 0,
                    .id = call_ids++,
                    .root = (int) ((h >> 16) % (uint64_t) csize),
                    .bytes = three_sizes[(h >> 24) % 3],
                    .comm = comm};
        if ((int) ((h >> 32) % (uint64_t) np) == rank) sleep_ms((double) ((h >> 40) % 3000) / 1000.0);
        run_call(&c);
    }
}

static void case_delay(void)
{
    static const int kinds[8] = {K_BCAST, K_REDUCE, K_BCAST, K_REDUCE, K_BCAST, K_REDUCE, K_ALLREDUCE, K_UREDUCE};
    int n = opt.n ? opt.n : 48;
    double ms = opt.sleep_ms > 0 ? opt.sleep_ms : 5;
    long long d0 = detached();
    int was_root_of_big_bcast = 0;
    for (int it = 0; it < n; ++it) {
        spec_t s = {.kind = kinds[it % 8], .bytes = three_sizes[(it + it / 8) % 3], .root = (it * 3 + it / 8) % np};
        if (s.kind == K_BCAST) {
            s.sleepers[0] = (s.root + 1 + it % (np - 1)) % np;
            s.nsleep = 1;
            int other = (s.sleepers[0] + 1) % np;
            if ((it / 8) % 2 && np > 3 && other != s.root) s.sleepers[s.nsleep++] = other;
            if (rank == s.root && s.bytes >= opt.strict) was_root_of_big_bcast = 1;
        } else {
            s.sleepers[0] = s.root; /* reduce: the root sleeps; allreduce: anyone */
            s.nsleep = 1;
        }
        run_timed(&s, ms);
        back_to_back(4, (uint64_t) it, MPI_COMM_WORLD);
    }
    long long d = detached() - d0;
    if (detaches(opt.strict) && was_root_of_big_bcast && d <= 0)
        report("root of broadcasts with a sleeping receiver, but coll_adapt2_detached_calls did not grow");
    if (detach_max == 0 && d != 0) report("%lld detached calls with detaching off", d);
    verify_timed();
}

static void case_reuse(void)
{
    static const struct {
        int kind, nb;
    } kinds[] = {
        {K_BCAST, 0},  {K_BCAST, 1},  {K_VBCAST, 0},  {K_VBCAST, 1},
        {K_REDUCE, 0}, {K_REDUCE, 1}, {K_VREDUCE, 0}, {K_VREDUCE, 1},
    };
    int n = opt.n ? opt.n : 48;
    double ms = opt.sleep_ms > 0 ? opt.sleep_ms : 5;
    /* Open MPI 4.1.4's argument checks reject MPI_SUM on derived datatypes */
    const int vreduce = adapt2_get_long("mpi_param_check") == 0;
    if (!vreduce && rank == 0)
        printf("detach_check reuse: vector reduces replaced by int reduces (run with --mca mpi_param_check 0)\n");
    for (int it = 0; it < n; ++it) {
        int kind = kinds[it % 8].kind == K_VREDUCE && !vreduce ? K_REDUCE : kinds[it % 8].kind;
        spec_t s = {.kind = kind,
                    .nonblocking = kinds[it % 8].nb,
                    .bytes = three_sizes[(it + it / 8) % 3],
                    .root = (it * 5 + it / 8) % np,
                    .nsleep = 1};
        s.sleepers[0] = is_bcast(&s) ? (s.root + 1 + it % (np - 1)) % np : s.root;
        run_timed(&s, ms);
    }
    verify_timed();
}

static void case_comms(void)
{
    int n = opt.n ? opt.n : 300;
    static const size_t sizes[] = {1, 100, 4096, 65536, 200000, 1 << 20};
    MPI_Comm comms[3];
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[0]);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &comms[1]);
    MPI_Comm_split(MPI_COMM_WORLD, 0, np - rank, &comms[2]);
    long long b0 = counter("coll_adapt2_bcast_calls"), r0 = counter("coll_adapt2_reduce_calls");
    long long d0 = detached();
    long long want_b = 0, want_r = 0;
    srand(977 + 31 * rank); /* per-rank wait order */
    int done = 0;
    while (done < n) {
        uint64_t h = mix(0xC0FFEEull + (uint64_t) done);
        int batch = h % 4 == 0 ? 2 + (int) ((h >> 4) % 4) : 1; /* outstanding non-blocking calls */
        call_t c[6];
        for (int j = 0; j < batch; ++j) {
            uint64_t g = mix(h + 7 * (uint64_t) j + 1);
            int ci = (int) (g % 3), csize;
            MPI_Comm_size(comms[ci], &csize);
            static const int kinds[] = {K_BCAST, K_REDUCE, K_VBCAST};
            c[j] = (call_t){.kind = kinds[(g >> 4) % 3],
                            .nonblocking = batch > 1 || (g >> 8) % 2,
                            .id = call_ids++,
                            .root = (int) ((g >> 12) % (uint64_t) csize),
                            .bytes = sizes[(g >> 20) % 6],
                            .comm = comms[ci]};
            if ((int) ((g >> 28) % (uint64_t) (np + 2)) == rank) sleep_ms((double) ((g >> 36) % 3000) / 1000.0);
            call_prepare(&c[j]);
            call_start(&c[j]);
            if (csize > 1) { /* adapt2 declines single-process communicators */
                if (c[j].kind == K_REDUCE)
                    ++want_r;
                else
                    ++want_b;
            }
        }
        int order[6];
        for (int j = 0; j < batch; ++j) order[j] = j;
        for (int j = batch - 1; j > 0; --j) {
            int k = rand() % (j + 1), t = order[j];
            order[j] = order[k];
            order[k] = t;
        }
        for (int j = 0; j < batch; ++j) {
            call_wait(&c[order[j]]);
            call_finish(&c[order[j]]);
        }
        done += batch;
    }
    long long b = counter("coll_adapt2_bcast_calls") - b0, r = counter("coll_adapt2_reduce_calls") - r0;
    if (b != want_b || r != want_r)
        report("adapt2 ran %lld bcasts and %lld reduces, expected %lld and %lld", b, r, want_b, want_r);
    long long all = 0, d = detached() - d0;
    MPI_Allreduce(&d, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (detaches(1 << 20) && all <= 0) report("no call detached on any rank");
    if (detach_max == 0 && d != 0) report("%lld detached calls with detaching off", d);
    for (int i = 0; i < 3; ++i) MPI_Comm_free(&comms[i]);
    if (rank == 0) printf("detach_check: %d calls on 3 communicators, %lld detached in all\n", done, all);
}

/* One part of the cap case: `senders` (the bcast root, or the reduce's
 * non-roots) run FILL blocking 64 KiB calls to the sleeping last rank and
 * post; the sleeper wakes 20 ms after all posted. Then a blocking 64 KiB
 * call (no room: it must wait for the sleeper to take older ones), a
 * non-blocking one (no room: refused, or detached if room came), a 1 MiB
 * one (larger than a small cap: refused) and more 64 KiB ones. Returns this
 * rank's growth of detach_waits and detach_refused. */
#define FILL 4
static void cap_part(int reduce, long long *waits, long long *refused)
{
    const int sleeper = np - 1;
    int who[64], n = 0;
    for (int r = 0; r < np - 1; ++r)
        if (reduce || r == 0) who[n++] = r;
    const int sender = rank != sleeper && (reduce || rank == 0);
    long mark = ++marks;
    long long w0 = counter("coll_adapt2_detach_waits"), f0 = counter("coll_adapt2_detach_refused");
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == sleeper) {
        if (!await_required(who, n, mark)) report("cap: the senders' first %d calls did not detach", FILL);
        sleep_ms(20);
    }
    static const size_t kb64 = 65536;
    const size_t sizes[] = {kb64, kb64, kb64, kb64, kb64, kb64, 1 << 20, kb64, kb64};
    for (int j = 0; j < (int) (sizeof sizes / sizeof sizes[0]); ++j) {
        call_t c = {.kind = reduce ? K_REDUCE : K_BCAST,
                    .nonblocking = j == FILL + 1 || j == FILL + 4,
                    .id = call_ids++,
                    .root = reduce ? sleeper : 0,
                    .bytes = sizes[j],
                    .comm = MPI_COMM_WORLD};
        run_call(&c);
        if (j == FILL - 1 && sender) post(mark);
    }
    *waits = counter("coll_adapt2_detach_waits") - w0;
    *refused = counter("coll_adapt2_detach_refused") - f0;
}

/* coll_adapt2_detach_max_bytes: --refused yes needs a cap of FILL x 64 KiB
 * (the case fills it exactly): every sender must wait once (blocking call,
 * pool full) and be refused at least once (1 MiB); --refused no: a cap of
 * 8 MiB or more, where nothing waits and nothing is refused. */
static void case_cap(void)
{
    int rounds = opt.n ? opt.n : 3;
    long cap = adapt2_get_long("coll_adapt2_detach_max_bytes");
    if (opt.refused == 1 && cap != FILL * 65536)
        fail("--refused yes needs --mca coll_adapt2_detach_max_bytes %d", FILL * 65536);
    if (opt.refused == 0 && cap < (8L << 20)) fail("--refused no needs a cap of at least 8 MiB");
    if (!detaches(1 << 20)) fail("the cap case needs detaching on");
    long long d0 = detached(), totals[3] = {0, 0, 0};
    for (int round = 0; round < rounds; ++round) {
        for (int reduce = 0; reduce < 2; ++reduce) {
            long long waits, refused;
            cap_part(reduce, &waits, &refused);
            const int sender = rank != np - 1 && (reduce || rank == 0);
            const char *what = reduce ? "reduce non-root" : "bcast root";
            if (opt.refused == 1 && sender && waits < 1)
                report("round %d, cap %ld: %s: its blocking call found the pool full but did not wait (%lld)", round,
                       cap, what, waits);
            if (opt.refused == 1 && sender && refused < 1)
                report("round %d, cap %ld: %s: the 1 MiB call was not refused (%lld)", round, cap, what, refused);
            if (opt.refused == 0 && (waits || refused))
                report("round %d, cap %ld: %lld waits and %lld refusals, expected none", round, cap, waits, refused);
            totals[0] += waits;
            totals[1] += refused;
        }
    }
    totals[2] = detached() - d0;
    long long all[3];
    MPI_Allreduce(totals, all, 3, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (opt.refused == 1 && all[1] <= 0) report("cap %ld: no call was refused detaching", cap);
    if (all[2] <= 0) report("cap %ld: no call detached", cap);
    if (rank == 0)
        printf("detach_check: cap %ld bytes: %lld calls waited for room, %lld refused detaching, %lld detached\n", cap,
               all[0], all[1], all[2]);
}

/* The last rank waits (sleeping, no MPI call) until all others have run
 * their calls and posted `mark`, then 20 ms more: they are in whatever they
 * called next. Returns whether the marks came. */
static int sleeper_waits_for_all(long mark)
{
    int who[64], n = 0;
    for (int r = 0; r < np - 1; ++r) who[n++] = r;
    int ok = detaches(1 << 20) ? await_required(who, n, mark) : await_marks(who, n, mark, SHORT_MS);
    sleep_ms(20);
    if (!ok && detaches(1 << 20)) report("the other ranks did not return from their calls while the last rank slept");
    return ok;
}

/* Calls on a new communicator that detach everywhere but on the last rank,
 * which enters them only once the others are inside MPI_Comm_free (or
 * MPI_Comm_disconnect) of the communicator. Those drain what is in flight
 * (coll_adapt2_lifecycle.c): no rank may return from them before the last
 * rank entered the calls, as each still has sends to it (the 64 KiB reduce
 * to it, a rendezvous straight to the root in the flat tree, which
 * test/mpi/detach.sh forces: auto takes a binary tree on more than 4 ranks). */
static void detached_then_free(int disconnect)
{
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    const int sleeper = np - 1;
    long mark = ++marks, freed = ++marks;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == sleeper) {
        sleeper_waits_for_all(mark);
        for (int r = 0; r < np - 1 && detaches(65536) && bcast_radix >= np - 1; ++r)
            if (__atomic_load_n(&board[r], __ATOMIC_ACQUIRE) >= freed)
                report(
                    "rank %d returned from %s while its detached sends to rank %d were still waiting for it: "
                    "nothing drained",
                    r, disconnect ? "MPI_Comm_disconnect" : "MPI_Comm_free", sleeper);
    }
    long long d0 = detached();
    call_t c = {.kind = K_BCAST, .id = call_ids++, .root = 0, .bytes = 1 << 20, .comm = comm};
    run_call(&c);
    long long d_bcast = detached() - d0;
    c = (call_t){.kind = K_REDUCE, .id = call_ids++, .root = sleeper, .bytes = 65536, .comm = comm};
    run_call(&c);
    c = (call_t){.kind = K_VBCAST, .nonblocking = 1, .id = call_ids++, .root = 1 % np, .bytes = 65536, .comm = comm};
    run_call(&c);
    c = (call_t){.kind = K_REDUCE, .nonblocking = 1, .id = call_ids++, .root = sleeper, .bytes = 1 << 20, .comm = comm};
    run_call(&c);
    if (rank != sleeper) post(mark);
    if (disconnect)
        MPI_Comm_disconnect(&comm);
    else
        MPI_Comm_free(&comm);
    if (rank != sleeper) post(freed);
    if (comm != MPI_COMM_NULL) report("communicator not MPI_COMM_NULL after it was freed");
    if (rank == 0 && detaches(1 << 20) && d_bcast != 1)
        report("%s: the 1 MiB bcast to a sleeping rank counted %lld detached calls, expected 1",
               disconnect ? "disconnect" : "free", d_bcast);
}

static void case_finalize(void)
{
    const int sleeper = np - 1;
    MPI_Comm other;
    MPI_Comm_split(MPI_COMM_WORLD, 0, np - rank, &other);
    detached_then_free(0);
    back_to_back(12, 4242, other); /* go on on another communicator */
    detached_then_free(1);
    back_to_back(12, 4343, other);
    MPI_Comm_free(&other);
    if (total_errors(errors, MPI_COMM_WORLD)) fail("errors before the final calls");

    /* The last calls before MPI_Finalize: detached on all but the sleeper,
     * which enters them when the others are in MPI_Finalize. */
    long mark = ++marks;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == sleeper) sleeper_waits_for_all(mark);
    long long d0 = detached();
    call_t c = {.kind = K_BCAST, .id = call_ids++, .root = 0, .bytes = 1 << 20, .comm = MPI_COMM_WORLD};
    run_call(&c);
    c = (call_t){.kind = K_REDUCE,
                 .nonblocking = 1,
                 .id = call_ids++,
                 .root = sleeper,
                 .bytes = 1 << 20,
                 .comm = MPI_COMM_WORLD};
    run_call(&c);
    c = (call_t){.kind = K_REDUCE, .id = call_ids++, .root = sleeper, .bytes = 65536, .comm = MPI_COMM_WORLD};
    run_call(&c);
    long long d = detached() - d0;
    if (errors) fail("%lld errors in the final calls", errors);
    if (rank == sleeper) {
        printf("detach_check finalize: rank %d received the final data\n", rank);
    } else if (rank == 0) {
        if (detaches(1 << 20) && d < 1) fail("the final calls did not detach (%lld)", d);
        printf("detach_check finalize: rank 0 finalizing with %lld detached calls\n", d);
    }
    fflush(stdout);
    if (rank != sleeper) post(mark);
}

/* A 1 MiB reduce to rank 0 over the pipeline tree 0 <- 1 <- 2 <- ...: rank
 * 1 returns at once (its own data copied) and computes without calling MPI
 * until rank 0 posts that its reduce returned; ranks 2.. enter only after
 * rank 1 returned, so rank 1 must combine rank 2's data after its call: with
 * a progress thread that happens while it computes, without one only at its
 * next MPI call. */
#define TROUNDS 3
static void case_thread(void)
{
    if (np < 3) fail("the thread case needs at least 3 ranks");
    double compute_ms = opt.sleep_ms > 0 ? opt.sleep_ms : 300;
    int provided;
    char transport[32];
    MPI_Query_thread(&provided);
    cvar_string("coll_adapt2_transport", transport, sizeof transport);
    /* coll_adapt2_progress.c: the thread drives opal_progress under
     * MPI_THREAD_MULTIPLE, adapt2's own UCX worker with transport=ucx (if
     * adapt2 has UCX: else --progress no), and is not started otherwise */
    const int thread = opt.progress >= 0 ? opt.progress
                                         : adapt2_get_long("coll_adapt2_progress_thread") == 1 &&
                                               (provided == MPI_THREAD_MULTIPLE || !strcmp(transport, "ucx"));
    adapt2_set_string("coll_adapt2_reduce_algorithm", "pipeline");
    int one = 1, zero = 0;
    for (int round = 0; round < TROUNDS; ++round) {
        call_t c = {.kind = K_REDUCE, .id = call_ids++, .root = 0, .bytes = 1 << 20, .comm = MPI_COMM_WORLD};
        long mark = ++marks;
        call_prepare(&c);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank >= 2 && !(detaches(1 << 20) ? await_required(&one, 1, mark) : await_marks(&one, 1, mark, SHORT_MS)) &&
            detaches(1 << 20))
            report("round %d: rank 1 did not return from its reduce before its child entered", round);
        long long d0 = detached();
        double t_in = now();
        call_start(&c);
        call_wait(&c);
        double t_out = now();
        long long d = detached() - d0;
        if (rank == 0) post(mark);
        if (rank == 1) {
            post(mark);
            /* computes: no MPI call until rank 0 is done or the time is up */
            int saw = thread ? await_required(&zero, 1, mark) : await_marks(&zero, 1, mark, compute_ms);
            double t_wake = now();
            if (detaches(1 << 20) && d != 1)
                report("round %d: rank 1 counted %lld detached calls, expected 1", round, d);
            if (thread && !saw)
                report(
                    "round %d: with the progress thread, rank 0's reduce did not complete in %.0f ms while "
                    "rank 1 computed",
                    round, MUST_COME_MS);
            if (!thread && saw)
                report(
                    "round %d: without a progress thread, rank 0's reduce completed while rank 1 (which "
                    "must combine rank 2's data) made no MPI call",
                    round);
            printf("detach_check thread: round %d: %s; rank 1 in its reduce %.3f ms, computed %.1f ms%s\n", round,
                   thread ? "progress thread" : "no progress thread", 1e3 * (t_out - t_in), 1e3 * (t_wake - t_out),
                   saw ? " until rank 0 was done" : " (rank 0 not done)");
            fflush(stdout);
        }
        call_finish(&c);
    }
    adapt2_set_string("coll_adapt2_reduce_algorithm", "auto");
    back_to_back(opt.n ? opt.n : 60, 777, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    static struct option longopts[] = {{"expect", 1, 0, 'e'}, {"strict", 1, 0, 'S'},   {"refused", 1, 0, 'r'},
                                       {"thread", 1, 0, 'T'}, {"progress", 1, 0, 'P'}, {0, 0, 0, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "t:n:s:", longopts, NULL)) != -1) {
        switch (ch) {
        case 't': opt.test = optarg; break;
        case 'n': opt.n = atoi(optarg); break;
        case 's': opt.sleep_ms = atof(optarg); break;
        case 'e':
            opt.expect = !strcmp(optarg, "coupled") ? E_COUPLED : !strcmp(optarg, "limited") ? E_LIMITED : E_DETACH;
            break;
        case 'S': opt.strict = (size_t) atol(optarg); break;
        case 'r': opt.refused = !strcmp(optarg, "yes") ? 1 : !strcmp(optarg, "no") ? 0 : -1; break;
        case 'T': opt.thread_multiple = !strcmp(optarg, "multiple"); break;
        case 'P': opt.progress = !strcmp(optarg, "yes") ? 1 : !strcmp(optarg, "no") ? 0 : -1; break;
        default: fprintf(stderr, "usage: see the comment at the top of detach_check.c\n"); return 2;
        }
    }
    if (!opt.test) {
        fprintf(stderr, "detach_check: -t CASE required\n");
        return 2;
    }
    int provided;
    MPI_Init_thread(&argc, &argv, opt.thread_multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
    if (opt.thread_multiple && provided != MPI_THREAD_MULTIPLE) fail("MPI_THREAD_MULTIPLE not provided");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np < 2) fail("needs at least 2 ranks");
    MPI_Op_create(user_sum_fn, 1, &user_sum);
    counter("coll_adapt2_bcast_calls"); /* fails unless adapt2 is loaded */
    detach_min = adapt2_get_long("coll_adapt2_detach_min_message");
    detach_max = adapt2_get_long("coll_adapt2_detach_max_message");
    bcast_radix = (int) adapt2_get_long("coll_adapt2_bcast_radix");
    /* What this program proves, that no broadcast root or reduce non-root
     * waits for a late peer, holds for every call only without watching
     * (engine/late_peers.h: a watching rank's first call with a late peer
     * waits for it); watch_check tests that. */
    adapt2_set_long("coll_adapt2_detach_watch_min_bytes", LONG_MAX);
    adapt2_set_long("coll_adapt2_direct_watch_max", 0); /* the direct path's watching broadcasts too */
    if (opt.expect == E_COUPLED && detach_max != 0)
        fail("--expect coupled needs --mca coll_adapt2_detach_max_message 0");
    if (opt.expect == E_DETACH && detach_max < (1 << 20))
        fail("--expect detach needs coll_adapt2_detach_max_message >= 1 MiB (is %ld): pass --expect limited",
             detach_max);
    board_open();

    const int finalize = !strcmp(opt.test, "finalize");
    if (!strcmp(opt.test, "delay"))
        case_delay();
    else if (!strcmp(opt.test, "reuse"))
        case_reuse();
    else if (!strcmp(opt.test, "comms"))
        case_comms();
    else if (!strcmp(opt.test, "cap"))
        case_cap();
    else if (finalize)
        case_finalize();
    else if (!strcmp(opt.test, "thread"))
        case_thread();
    else
        fail("unknown case %s", opt.test);

    long long total = 0;
    if (!finalize) { /* finalize: nothing may come between the last calls and MPI_Finalize */
        total = total_errors(errors, MPI_COMM_WORLD);
        if (rank == 0) printf("detach_check %s: np %d: %s\n", opt.test, np, total ? "FAILED" : "ok");
    }
    MPI_Op_free(&user_sum);
    for (int i = 0; i < NSQUAT; ++i) free(squatters[i]);
    MPI_Finalize();
    return total ? 1 : 0;
}
