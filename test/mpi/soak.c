/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * Soak test: MPI_THREAD_MULTIPLE, several threads per rank, each owning two
 * communicators (MPI requires the collectives of one communicator to start in
 * the same order on every rank, so a communicator is only ever used by one
 * thread). Each thread runs batches of non-blocking collectives (MPI_Ibcast,
 * MPI_Ireduce, MPI_Iallreduce, now and then a blocking one) with several
 * outstanding per communicator, random sizes from 1 byte to 1 MiB, contiguous
 * and vector types, completes them in a random order (MPI_Waitall, MPI_Wait,
 * MPI_Test polling, MPI_Waitany; the order differs per rank) and checks every
 * element on every rank, holes of the vector type included. Communicators are
 * freed (sometimes with calls still outstanding on them) and re-created from
 * the thread's other communicator as it goes, and datatypes are sometimes
 * freed before the calls that use them complete.
 *
 * Everything a collective call depends on (kind, type, op, count, root, which
 * communicator) comes from a random stream seeded by --seed and the thread's
 * number, the same on every rank; each rank's contribution is a hash of the
 * call, its rank in the communicator and the element's position, so every
 * rank computes every expected value locally.
 *
 * Memory: after each tenth of the calls every rank frees its threads'
 * communicators and reads its resident memory (VmRSS) and the bytes malloc
 * has handed out; the first tenth is the warm-up. Growing from the warm-up to
 * the end by more than the bounds (see check_memory) fails the run, as does
 * any wrong element or a call adapt2 did not run.
 *
 *   soak [--calls N (2000)] [--threads T (4)] [--seed S (1)] [--max-bytes B (1048576)]
 *        [--rss-slack-pct P (20)] [--rss-slack-mib M (16)] [--heap-slack-mib H (8)]
 *        [--rss-trace] (prints every reading, for a leak hunt)
 *        [--kinds bcast,reduce,allreduce] (the collectives drawn; all by default)
 *        [--declined] (adapt2 must run none of the calls: it declines
 *        MPI_THREAD_MULTIPLE over pml ucx where coll_adapt2_ucx_thread_multiple is 0)
 *        [--churn N (20)] (1 in N batches replaces its communicator; 0: never)
 *        [--no-vector] (contiguous types only: to compare with Open MPI's own
 *                       components, which compute reductions on the vector wrongly)
 * N is the number of collectives each rank takes part in, over all its threads.
 * Run it with --mca mpi_param_check 0: Open MPI 4.1's argument checks reject
 * predefined ops on derived datatypes (the vector of ints) although MPI allows
 * them.
 */
#include <getopt.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"

#define POISON 0xA5
#define MAX_OUTSTANDING 6 /* calls started on a communicator before completing any */
#define COMMS_PER_THREAD 2

/* ------------------------------------------------------------------ random */

/* splitmix64: small, good enough, and identical on every rank. */
static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint64_t next(uint64_t *state)
{
    *state += 0x9e3779b97f4a7c15ull;
    return mix(*state);
}

static int below(uint64_t *state, int n)
{
    return (int) (next(state) % (uint64_t) n);
}

/* Roughly log-uniform in [1, max]: as many tiny as huge messages. */
static long random_bytes(uint64_t *state, long max)
{
    int bits = 0;
    while ((1L << (bits + 1)) <= max) ++bits;
    int b = below(state, bits + 1);
    long n = (1L << b) + (long) (next(state) % (uint64_t) (1L << b));
    return n > max ? max : n;
}

/* ------------------------------------------------------------------ types */

enum unit { U_BYTE, U_INT, U_DOUBLE };
enum op { OP_SUM, OP_MAX, OP_MIN, OP_BXOR, NOPS };
static const char *op_names[NOPS] = {"sum", "max", "min", "bxor"};
static MPI_Op mpi_ops[NOPS];

/* A datatype as the test sees it: each element (extent bytes) holds nruns
 * runs of units; the bytes between them are holes nobody may write. */
typedef struct type {
    const char *name;
    MPI_Datatype type;
    enum unit unit;
    size_t unit_size, extent;
    int nruns;
    size_t run_offset[2], run_units[2];
    unsigned ops; /* bit per enum op: the reductions MPI allows on it */
} type_t;

#define NTYPES 4
static type_t types[NTYPES];
static int ntypes = NTYPES; /* 3 with --no-vector */
static unsigned kinds = 7;  /* bit per enum kind (--kinds) */

static size_t units_per_element(const type_t *t)
{
    return t->run_units[0] + (t->nruns > 1 ? t->run_units[1] : 0);
}

static void make_types(void)
{
    types[0] = (type_t){"byte", MPI_BYTE, U_BYTE, 1, 1, 1, {0}, {1}, 1u << OP_BXOR};
    types[1] = (type_t){"int", MPI_INT, U_INT, 4, 4, 1, {0}, {1}, 0xf};
    types[2] = (type_t){"double", MPI_DOUBLE, U_DOUBLE, 8, 8, 1, {0}, {1}, 1u << OP_SUM | 1u << OP_MAX | 1u << OP_MIN};
    /* 2 blocks of 3 ints, stride 5 ints: 24 data bytes in a 32-byte extent */
    types[3] = (type_t){"vector", MPI_DATATYPE_NULL, U_INT, 4, 32, 2, {0, 20}, {3, 3}, 0xf};
    MPI_Type_vector(2, 3, 5, MPI_INT, &types[3].type);
    MPI_Type_commit(&types[3].type);
    mpi_ops[OP_SUM] = MPI_SUM;
    mpi_ops[OP_MAX] = MPI_MAX;
    mpi_ops[OP_MIN] = MPI_MIN;
    mpi_ops[OP_BXOR] = MPI_BXOR;
}

/* ------------------------------------------------------------------ values */

/* Rank r's value of unit k in call `id`, as an integer: bytes take any value;
 * ints and doubles stay small (|v| <= 1000, doubles in quarters) so that sums
 * over any number of ranks are exact in any order. */
static int64_t contribution(const type_t *t, uint64_t id, int r, uint64_t k)
{
    uint64_t h = mix(id * 0x100000001b3ull ^ mix((uint64_t) r << 40 ^ k));
    if (t->unit == U_BYTE) return (int64_t) (h & 0xff);
    return (int64_t) (h % 2001) - 1000;
}

static int64_t combine(enum op op, int64_t a, int64_t b)
{
    switch (op) {
    case OP_SUM: return a + b;
    case OP_MAX: return a > b ? a : b;
    case OP_MIN: return a < b ? a : b;
    default: return a ^ b;
    }
}

/* The value every rank must hold after the call, for unit k. */
static int64_t expected(const type_t *t, uint64_t id, int is_reduction, enum op op, int root, int size, uint64_t k)
{
    if (!is_reduction) return contribution(t, id, root, k);
    int64_t acc = contribution(t, id, 0, k);
    for (int r = 1; r < size; ++r) acc = combine(op, acc, contribution(t, id, r, k));
    return acc;
}

static void store(const type_t *t, unsigned char *at, int64_t v)
{
    switch (t->unit) {
    case U_BYTE: *at = (unsigned char) v; break;
    case U_INT: {
        int x = (int) v;
        memcpy(at, &x, sizeof x);
        break;
    }
    default: {
        double x = (double) v / 4;
        memcpy(at, &x, sizeof x);
        break;
    }
    }
}

/* The value stored at `at`; a double that is no whole number of quarters
 * (or no number) reads as INT64_MIN, which no expected value is. */
static int64_t load(const type_t *t, const unsigned char *at)
{
    switch (t->unit) {
    case U_BYTE: return *at;
    case U_INT: {
        int x;
        memcpy(&x, at, sizeof x);
        return x;
    }
    default: {
        double x;
        memcpy(&x, at, sizeof x);
        x *= 4;
        return x > -1e15 && x < 1e15 && x == (double) (int64_t) x ? (int64_t) x : INT64_MIN;
    }
    }
}

/* ------------------------------------------------------------------ calls */

enum kind { BCAST, REDUCE, ALLREDUCE };
static const char *kind_names[] = {"bcast", "reduce", "allreduce"};

/* One collective, as every rank of its communicator sees it. */
typedef struct call {
    enum kind kind;
    const type_t *t;
    enum op op;
    int count, root, inplace, blocking, free_type;
    int rank, size; /* in the communicator */
    uint64_t id;    /* the thread's call number: same on every rank */
    unsigned char *send, *recv;
    MPI_Request req;
} call_t;

/* Fills a buffer with rank r's contribution (data units only), or with the
 * poison everywhere when r < 0. */
static void fill(const call_t *c, unsigned char *buf, int r)
{
    const type_t *t = c->t;
    memset(buf, POISON, (size_t) c->count * t->extent);
    if (r < 0) return;
    uint64_t k = 0;
    for (int e = 0; e < c->count; ++e) {
        unsigned char *elem = buf + (size_t) e * t->extent;
        for (int run = 0; run < t->nruns; ++run) {
            for (size_t u = 0; u < t->run_units[run]; ++u, ++k)
                store(t, elem + t->run_offset[run] + u * t->unit_size, contribution(t, c->id, r, k));
        }
    }
}

/* Compares a buffer with the value of every unit (`want_rank` >= 0: that
 * rank's contribution; otherwise the call's result); holes must still hold
 * the poison. Prints the first few differences; returns their number. */
static long long verify(const call_t *c, const unsigned char *buf, int want_rank, const char *what, int tid)
{
    const type_t *t = c->t;
    long long errors = 0;
    uint64_t k = 0;
    for (int e = 0; e < c->count; ++e) {
        const unsigned char *elem = buf + (size_t) e * t->extent;
        size_t covered = 0;
        for (int run = 0; run < t->nruns; ++run) {
            for (size_t b = covered; b < t->run_offset[run]; ++b) {
                if (elem[b] != POISON && errors++ < 3)
                    fprintf(stderr, "soak: thread %d call %llu: %s: hole byte %zu of element %d written\n", tid,
                            (unsigned long long) c->id, what, b, e);
            }
            for (size_t u = 0; u < t->run_units[run]; ++u, ++k) {
                int64_t want = want_rank >= 0 ? contribution(t, c->id, want_rank, k)
                                              : expected(t, c->id, c->kind != BCAST, c->op, c->root, c->size, k);
                int64_t got = load(t, elem + t->run_offset[run] + u * t->unit_size);
                if (got != want && errors++ < 3)
                    fprintf(stderr, "soak: thread %d call %llu: %s: unit %llu is %lld, expected %lld\n", tid,
                            (unsigned long long) c->id, what, (unsigned long long) k, (long long) got,
                            (long long) want);
            }
            covered = t->run_offset[run] + t->run_units[run] * t->unit_size;
        }
    }
    return errors;
}

/* Draws a call from the thread's shared stream (same on every rank). */
static void draw_call(call_t *c, uint64_t *shared, long max_bytes, MPI_Comm comm, uint64_t id)
{
    memset(c, 0, sizeof *c);
    MPI_Comm_rank(comm, &c->rank);
    MPI_Comm_size(comm, &c->size);
    c->id = id;
    do c->kind = (enum kind) below(shared, 3);
    while (!(kinds & 1u << c->kind));
    do {
        c->t = &types[below(shared, ntypes)];
        c->op = (enum op) below(shared, NOPS);
    } while (c->kind != BCAST && !(c->t->ops & 1u << c->op));
    long units = random_bytes(shared, max_bytes) / (long) c->t->unit_size;
    long count = units / (long) units_per_element(c->t);
    c->count = count < 1 ? 1 : (int) count;
    c->root = below(shared, c->size);
    c->inplace = c->kind == ALLREDUCE && below(shared, 4) == 0;
    c->blocking = below(shared, 10) == 0;
    c->free_type = c->t == &types[3] && below(shared, 3) == 0;
}

/* Prepares the buffers and starts the call (a blocking call also ends here). */
static void start_call(call_t *c, MPI_Comm comm)
{
    MPI_Datatype dt = c->t->type;
    if (c->free_type) { /* a type of its own, freed below before the call completes */
        MPI_Type_vector(2, 3, 5, MPI_INT, &dt);
        MPI_Type_commit(&dt);
    }
    switch (c->kind) {
    case BCAST:
        fill(c, c->recv, c->rank == c->root ? c->root : -1);
        if (c->blocking)
            MPI_Bcast(c->recv, c->count, dt, c->root, comm);
        else
            MPI_Ibcast(c->recv, c->count, dt, c->root, comm, &c->req);
        break;
    case REDUCE:
        fill(c, c->send, c->rank);
        fill(c, c->recv, -1);
        if (c->blocking)
            MPI_Reduce(c->send, c->recv, c->count, dt, mpi_ops[c->op], c->root, comm);
        else
            MPI_Ireduce(c->send, c->recv, c->count, dt, mpi_ops[c->op], c->root, comm, &c->req);
        break;
    case ALLREDUCE: {
        const void *send = c->inplace ? MPI_IN_PLACE : c->send;
        fill(c, c->inplace ? c->recv : c->send, c->rank);
        if (!c->inplace) fill(c, c->recv, -1);
        if (c->blocking)
            MPI_Allreduce(send, c->recv, c->count, dt, mpi_ops[c->op], comm);
        else
            MPI_Iallreduce(send, c->recv, c->count, dt, mpi_ops[c->op], comm, &c->req);
        break;
    }
    }
    if (c->blocking) c->req = MPI_REQUEST_NULL;
    if (c->free_type) MPI_Type_free(&dt);
}

/* After completion: the result where it is defined (every rank but a
 * reduce's non-roots), and send buffers left as they were. */
static long long check_call(const call_t *c, int tid)
{
    char what[160];
    snprintf(what, sizeof what, "%s%s %s %s count %d root %d on %d ranks%s", c->blocking ? "" : "i",
             kind_names[c->kind], c->t->name, c->kind == BCAST ? "-" : op_names[c->op], c->count, c->root, c->size,
             c->inplace ? " in place" : "");
    long long errors = 0;
    switch (c->kind) {
    case BCAST: errors += verify(c, c->recv, -1, what, tid); break;
    case REDUCE:
        errors += verify(c, c->send, c->rank, what, tid);
        if (c->rank == c->root) errors += verify(c, c->recv, -1, what, tid);
        break;
    case ALLREDUCE:
        if (!c->inplace) errors += verify(c, c->send, c->rank, what, tid);
        errors += verify(c, c->recv, -1, what, tid);
        break;
    }
    if (errors)
        fprintf(stderr, "soak: thread %d call %llu (%s): %lld errors\n", tid, (unsigned long long) c->id, what, errors);
    return errors;
}

/* ------------------------------------------------------------------ threads */

typedef struct worker {
    int id;
    MPI_Comm comms[COMMS_PER_THREAD];
    uint64_t shared; /* decisions every rank makes alike */
    uint64_t local;  /* this rank's own choices (completion order) */
    long max_bytes;
    int churn; /* 1 in `churn` batches replaces its communicator (0: never) */
    unsigned char *bufs[2 * MAX_OUTSTANDING];
    long long calls, adapt2_calls, errors, comms_made, target;
} worker_t;

/* Completes the batch's requests in one of four ways, in a random order that
 * differs per rank (any order is valid: every call has been started). */
static void complete(worker_t *w, call_t *calls, int n)
{
    MPI_Request reqs[MAX_OUTSTANDING];
    int order[MAX_OUTSTANDING], done = 0, index;
    for (int i = 0; i < n; ++i) {
        reqs[i] = calls[i].req;
        done += reqs[i] == MPI_REQUEST_NULL; /* blocking calls are over */
        order[i] = i;
    }
    for (int i = n - 1; i > 0; --i) {
        int j = below(&w->local, i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    switch (below(&w->local, 4)) {
    case 0: MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE); break;
    case 1:
        for (int i = 0; i < n; ++i) MPI_Wait(&reqs[order[i]], MPI_STATUS_IGNORE);
        break;
    case 2: /* poll: each pass tests the outstanding ones in the shuffled order */
        while (done < n) {
            for (int i = 0; i < n; ++i) {
                int flag = 0;
                if (reqs[order[i]] == MPI_REQUEST_NULL) continue;
                MPI_Test(&reqs[order[i]], &flag, MPI_STATUS_IGNORE);
                done += flag;
            }
        }
        break;
    default:
        for (int i = 0; i < n; ++i) MPI_Waitany(n, reqs, &index, MPI_STATUS_IGNORE);
        break;
    }
    for (int i = 0; i < n; ++i) {
        if (reqs[i] != MPI_REQUEST_NULL) {
            fprintf(stderr, "soak: thread %d: a completed request was not set to MPI_REQUEST_NULL\n", w->id);
            ++w->errors;
        }
        calls[i].req = MPI_REQUEST_NULL;
    }
}

/* A new communicator made from `from` (collective over it): a dup, the same
 * group in reverse order, or (from 4 ranks up) the halves by rank parity. */
static MPI_Comm new_comm(worker_t *w, MPI_Comm from)
{
    MPI_Comm comm;
    int rank, size;
    MPI_Comm_rank(from, &rank);
    MPI_Comm_size(from, &size);
    switch (below(&w->shared, size >= 4 ? 3 : 2)) {
    case 0: MPI_Comm_dup(from, &comm); break;
    case 1: MPI_Comm_split(from, 0, size - rank, &comm); break;
    default: MPI_Comm_split(from, rank % 2, rank, &comm); break;
    }
    ++w->comms_made;
    return comm;
}

/* One batch: 1..MAX_OUTSTANDING calls on one of the thread's communicators,
 * started together, completed in a random order, checked. Now and then the
 * communicator is replaced, freed before its calls complete. */
static void batch(worker_t *w)
{
    call_t calls[MAX_OUTSTANDING];
    int slot = below(&w->shared, COMMS_PER_THREAD), n = 1 + below(&w->shared, MAX_OUTSTANDING);
    MPI_Comm comm = w->comms[slot];
    for (int i = 0; i < n; ++i) {
        /* the thread is in the call's number: data crossing communicators shows */
        uint64_t id = ((uint64_t) w->id + 1) << 40 | (uint64_t) (w->calls + i);
        draw_call(&calls[i], &w->shared, w->max_bytes, comm, id);
        calls[i].send = w->bufs[2 * i];
        calls[i].recv = w->bufs[2 * i + 1];
        start_call(&calls[i], comm);
    }
    if (w->churn && below(&w->shared, w->churn) == 0) {
        /* replaced by one made from the other, and freed with the calls on */
        w->comms[slot] = new_comm(w, w->comms[1 - slot]);
        MPI_Comm_free(&comm);
    }
    complete(w, calls, n);
    for (int i = 0; i < n; ++i) w->errors += check_call(&calls[i], w->id);
    w->calls += n;
    if (calls[0].size > 1) w->adapt2_calls += n; /* adapt2 declines single-rank communicators */
}

static void *run(void *arg)
{
    worker_t *w = arg;
    while (w->calls < w->target) batch(w);
    return NULL;
}

/* Runs every thread until it has made `target` calls (deterministic: the
 * same on every rank). */
static void run_soak_threads(worker_t *w, int nthreads)
{
    pthread_t th[64];
    for (int t = 0; t < nthreads; ++t) pthread_create(&th[t], NULL, run, &w[t]);
    for (int t = 0; t < nthreads; ++t) pthread_join(th[t], NULL);
}

/* The thread's buffers, touched once so that they count in the warm-up's
 * resident memory and later growth is the library's. */
static void worker_init(worker_t *w, int id, uint64_t seed, long max_bytes, int rank)
{
    memset(w, 0, sizeof *w);
    w->id = id;
    w->shared = mix(seed * 1000003u + (uint64_t) id);
    w->local = mix(w->shared ^ ((uint64_t) rank + 1) * 0x51ed27u);
    w->max_bytes = max_bytes;
    size_t bytes = ((size_t) max_bytes / 24 + 1) * 32; /* the vector type's extent per data byte */
    for (int i = 0; i < 2 * MAX_OUTSTANDING; ++i) {
        w->bufs[i] = malloc(bytes);
        if (!w->bufs[i]) fail("out of memory");
        memset(w->bufs[i], POISON, bytes);
    }
}

/* Called by the main thread, for every worker in turn (dup of
 * MPI_COMM_WORLD: one thread at a time). */
static void worker_comms_new(worker_t *w)
{
    for (int i = 0; i < COMMS_PER_THREAD; ++i) MPI_Comm_dup(MPI_COMM_WORLD, &w->comms[i]);
}

static void worker_comms_free(worker_t *w)
{
    for (int i = 0; i < COMMS_PER_THREAD; ++i) MPI_Comm_free(&w->comms[i]);
}

static void worker_free(worker_t *w)
{
    for (int i = 0; i < 2 * MAX_OUTSTANDING; ++i) free(w->bufs[i]);
}

/* ------------------------------------------------------------------ memory */

/* Bytes malloc has handed out and not got back, in KiB (glibc: every arena,
 * mmapped blocks included); -1 elsewhere. Unlike RSS it does not move with
 * fragmentation, so it tells a leak from memory freed but kept. */
static long heap_in_use_kib(void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
    struct mallinfo2 m = mallinfo2();
    return (long) ((m.uordblks + m.hblkhd) / 1024);
#else
    return -1;
#endif
}

/* A field of /proc/self/status (VmRSS, RssAnon, RssShmem), in KiB. */
static long status_kib(const char *field)
{
    char line[256];
    long kib = -1;
    size_t n = strlen(field);
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, field, n) && line[n] == ':' && sscanf(line + n + 1, "%ld", &kib) == 1) break;
    }
    fclose(f);
    return kib;
}

/* glibc's malloc as the measurement needs it. Blocks from 128 KiB up are
 * mmapped and go back to the system when freed: by default glibc raises that
 * threshold to the largest block freed so far (1 MiB here), after which such
 * blocks live in the arenas and RSS follows their high-water mark, not what
 * is allocated. Before each reading, malloc_trim() gives back what the
 * arenas hold free: with random sizes in many threads that fragmentation
 * otherwise creeps up for tens of thousands of calls (measured without
 * these two: idle RSS +33 MiB over 20,000 calls while the bytes allocated
 * stayed within 0.1 MiB; with them, within +-4 MiB). A leak is still
 * allocated, so it still shows. */
static void malloc_setup(void)
{
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 128 << 10);
#endif
}

static void release_free_memory(void)
{
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

/* Before reading memory: calls that completed early on this rank may still
 * hold copies for late peers ("decoupled completion"); once every rank is
 * past all its calls and barriers have been progressed, those are released. */
static void settle(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Readings after each tenth of the calls, in KiB. "live": with the threads'
 * communicators alive; the others once they are freed. */
typedef struct memory {
    long live[10], idle[10], anon[10], shmem[10], heap[10];
} memory_t;

static void print_series(int rank, const char *what, const long *kib)
{
    char line[256];
    int n = snprintf(line, sizeof line, "soak: rank %d: after each tenth, %s (MiB):", rank, what);
    for (int i = 0; i < 10; ++i) n += snprintf(line + n, sizeof line - (size_t) n, " %.1f", kib[i] / 1024.0);
    printf("%s\n", line);
}

static void print_memory(int rank, const memory_t *m)
{
    print_series(rank, "VmRSS, communicators alive", m->live);
    print_series(rank, "VmRSS", m->idle);
    print_series(rank, "RssAnon", m->anon);
    print_series(rank, "RssShmem", m->shmem);
    print_series(rank, "malloc'ed", m->heap);
}

/* The bounds, on the readings taken with the communicators freed (the
 * live ones also count what communicators legitimately cache, which depends
 * on which of them last ran large calls: adapt2's staging pool, up to
 * coll_adapt2_pool_max_bytes each, and its copies for late peers; they
 * swing by tens of MiB from one tenth to the next).
 * VmRSS may grow by slack_pct % of the warm-up's figure plus slack_mib:
 * past the warm-up nothing should grow for good (the test's buffers are
 * allocated and touched before it, communicators come and go but hundreds
 * are made before the end); what still moves is Open MPI's and UCX's free
 * lists, which grow in chunks when a rare burst (6 outstanding 1 MiB calls)
 * first comes after the warm-up, pages of the shared-memory transport
 * touched late, and thread stacks: a few MiB (measured: within +-4 MiB over
 * 8,000 calls). A leak of one segment per call, of a request per call over
 * the long run, or of what a communicator holds, exceeds it.
 * The bytes malloc'ed may grow by heap_slack_mib: they do not fragment
 * (measured: +0.1 MiB over 8,000 calls); this catches leaks of 1.5 KiB per
 * call in the CI run, 100 bytes per call in the long one. */
static long long check_memory(int rank, const memory_t *m, long slack_pct, long slack_mib, long heap_slack_mib)
{
    long warm = m->idle[0], end = m->idle[9];
    long bound = warm + warm * slack_pct / 100 + slack_mib * 1024;
    long heap_growth = m->heap[9] - m->heap[0];
    long long errors = 0;
    printf(
        "soak: rank %d: VmRSS after warm-up %.1f MiB, at the end %.1f MiB (%+.1f MiB, bound %+.1f MiB); "
        "malloc'ed %+.1f MiB; with the communicators alive %.1f and %.1f MiB\n",
        rank, warm / 1024.0, end / 1024.0, (end - warm) / 1024.0, (bound - warm) / 1024.0, heap_growth / 1024.0,
        m->live[0] / 1024.0, m->live[9] / 1024.0);
    if (warm < 0 || end > bound) {
        fprintf(stderr, "soak: rank %d: VmRSS grew from %ld to %ld KiB, above the bound %ld KiB\n", rank, warm, end,
                bound);
        ++errors;
    }
    if (m->heap[0] >= 0 && heap_growth > heap_slack_mib * 1024) {
        fprintf(stderr, "soak: rank %d: the bytes malloc'ed grew by %ld KiB, above %ld MiB: a leak\n", rank,
                heap_growth, heap_slack_mib);
        ++errors;
    }
    return errors;
}

/* ------------------------------------------------------------------ main */

static long long adapt2_calls_so_far(void)
{
    return adapt2_counter("coll_adapt2_bcast_calls") + adapt2_counter("coll_adapt2_reduce_calls") +
           adapt2_counter("coll_adapt2_allreduce_calls");
}

typedef struct options {
    long calls, max_bytes, slack_mib, slack_pct, heap_slack_mib;
    int threads, rss_trace, no_vector, churn, declined;
    uint64_t seed;
} options_t;

static void parse(int argc, char **argv, options_t *o)
{
    static struct option longopts[] = {{"calls", 1, 0, 'c'},
                                       {"threads", 1, 0, 't'},
                                       {"seed", 1, 0, 's'},
                                       {"max-bytes", 1, 0, 'b'},
                                       {"rss-slack-mib", 1, 0, 'm'},
                                       {"rss-slack-pct", 1, 0, 'p'},
                                       {"rss-trace", 0, 0, 'r'},
                                       {"no-vector", 0, 0, 'v'},
                                       {"churn", 1, 0, 'n'},
                                       {"kinds", 1, 0, 'k'},
                                       {"heap-slack-mib", 1, 0, 'h'},
                                       {"declined", 0, 0, 'd'},
                                       {0, 0, 0, 0}};
    int ch;
    *o = (options_t){.calls = 2000,
                     .max_bytes = 1 << 20,
                     .slack_mib = 16,
                     .slack_pct = 20,
                     .heap_slack_mib = 8,
                     .threads = 4,
                     .seed = 1,
                     .churn = 20};
    while ((ch = getopt_long(argc, argv, "c:t:s:b:m:p:rvn:k:h:d", longopts, NULL)) != -1) {
        switch (ch) {
        case 'c': o->calls = atol(optarg); break;
        case 't': o->threads = atoi(optarg); break;
        case 's': o->seed = strtoull(optarg, NULL, 0); break;
        case 'b': o->max_bytes = atol(optarg); break;
        case 'm': o->slack_mib = atol(optarg); break;
        case 'p': o->slack_pct = atol(optarg); break;
        case 'h': o->heap_slack_mib = atol(optarg); break;
        case 'r': o->rss_trace = 1; break;
        case 'v': o->no_vector = 1; break;
        case 'n': o->churn = atoi(optarg); break;
        case 'd': o->declined = 1; break;
        case 'k':
            kinds = 0;
            for (char *tok = strtok(optarg, ","); tok; tok = strtok(NULL, ","))
                for (int k = 0; k < 3; ++k) kinds |= strcmp(tok, kind_names[k]) ? 0 : 1u << k;
            if (!kinds) fail("--kinds: bcast, reduce, allreduce");
            break;
        default: fail("usage: see the comment at the top of soak.c");
        }
    }
    if (o->calls < 1 || o->threads < 1 || o->threads > 64 || o->max_bytes < 1) fail("bad options");
}

/* Runs the calls in tenths (each thread gets an equal share of each; the
 * first tenth is the warm-up) and reads the memory after each. New
 * communicators are made for every tenth: the readings are taken with the
 * threads' communicators freed. */
static void run_tenths(worker_t *w, const options_t *o, memory_t *m)
{
    for (int tenth = 1; tenth <= 10; ++tenth) {
        for (int t = 0; t < o->threads; ++t) {
            worker_comms_new(&w[t]);
            w[t].target = (o->calls * tenth / 10 + o->threads - 1) / o->threads;
        }
        run_soak_threads(w, o->threads);
        settle();
        m->live[tenth - 1] = status_kib("VmRSS");
        for (int t = 0; t < o->threads; ++t) worker_comms_free(&w[t]);
        settle();
        release_free_memory();
        m->idle[tenth - 1] = status_kib("VmRSS");
        m->anon[tenth - 1] = status_kib("RssAnon");
        m->shmem[tenth - 1] = status_kib("RssShmem");
        m->heap[tenth - 1] = heap_in_use_kib();
    }
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    options_t o;
    memory_t m;
    malloc_setup();
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) fail("MPI_THREAD_MULTIPLE not provided");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    parse(argc, argv, &o);
    make_types();
    if (o.no_vector) ntypes = NTYPES - 1;
    worker_t *w = calloc((size_t) o.threads, sizeof *w);
    for (int t = 0; t < o.threads; ++t) {
        worker_init(&w[t], t, o.seed, o.max_bytes, rank);
        w[t].churn = o.churn;
    }
    long long base = adapt2_calls_so_far(), fallbacks0 = adapt2_counter("coll_adapt2_fallbacks");
    if (base < 0) fail("adapt2 is not loaded");
    double t0 = MPI_Wtime();
    run_tenths(w, &o, &m);
    double seconds = MPI_Wtime() - t0;

    long long calls = 0, mine = 0, errors = 0, comms = 0;
    for (int t = 0; t < o.threads; ++t) {
        calls += w[t].calls;
        mine += w[t].adapt2_calls;
        errors += w[t].errors;
        comms += w[t].comms_made;
    }
    /* Making a communicator runs an (i)allreduce of Open MPI's own on the
     * parent, which adapt2 runs and counts too: at least ours, none handed on. */
    long long ran = adapt2_calls_so_far() - base, fell = adapt2_counter("coll_adapt2_fallbacks") - fallbacks0;
    if (o.declined ? ran != 0 : ran < mine || fell != 0) {
        fprintf(stderr, "soak: rank %d: adapt2 ran %lld calls for our %lld (%lld fell back)%s\n", rank, ran, mine, fell,
                o.declined ? "; expected it to decline every communicator (--declined)" : "");
        ++errors;
    }
    if (o.rss_trace) print_memory(rank, &m);
    errors += check_memory(rank, &m, o.slack_pct, o.slack_mib, o.heap_slack_mib);
    fflush(stdout);

    long ends[2] = {m.idle[0], m.idle[9]}, max_rss[2];
    MPI_Reduce(ends, max_rss, 2, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    long long total = total_errors(errors, MPI_COMM_WORLD);
    if (rank == 0)
        printf(
            "soak: np %d, %d threads, seed %llu: %lld calls per rank (%lld communicators made) in %.1f s; "
            "VmRSS (max over ranks) %.1f MiB after warm-up, %.1f MiB at the end: %s\n",
            size, o.threads, (unsigned long long) o.seed, calls, comms, seconds, max_rss[0] / 1024.0,
            max_rss[1] / 1024.0, total ? "FAILED" : "ok");
    for (int t = 0; t < o.threads; ++t) worker_free(&w[t]);
    MPI_Type_free(&types[3].type);
    free(w);
    MPI_Finalize();
    return total ? 1 : 0;
}
