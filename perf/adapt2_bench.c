/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * adapt2_bench: an OSU-style latency benchmark for MPI collectives
 * (bcast, ibcast, reduce, ireduce, allreduce, iallreduce, allgather,
 * iallgather, reduce_scatter_block, ireduce_scatter_block).
 *
 * Plain MPI only (no adapt2 headers): the component under test is chosen at
 * run time with mpirun's --mca flags (see perf/compare.py).
 *
 * Methodology (OSU micro-benchmarks): per iteration, time only the
 * collective (MPI_Wtime around it; for non-blocking collectives post + wait),
 * then an untimed MPI_Barrier.  Each collective has SOURCES (the ranks whose
 * data goes in: the root of a broadcast, every rank of a reduction or an
 * allgather) and RECEIVERS (the ranks that hold the result: every rank of a
 * broadcast, an allreduce, an allgather or a reduce_scatter_block, the root
 * of a reduce).  A size is the bytes of one rank's block where there is one
 * per rank: allgather: each rank's contribution (the send count; it receives
 * np blocks); reduce_scatter_block: each rank's result (the recvcount; it
 * sends np blocks).  Per size we report
 *   avg_us / min_us / max_us   the per-rank average over iterations, then
 *                              averaged / min / max over ranks (OSU columns);
 *   last_us                    the mean over iterations of the per-iteration
 *                              maximum over the RECEIVERS of the time in the
 *                              call (elementwise MPI_MAX of the per-iteration
 *                              times): how long until the LAST receiver holds
 *                              the result (bcast, allreduce: the last rank;
 *                              reduce: the root);
 *   last_median_us             the median over iterations of those maxima
 *                              (robust to scheduler noise on oversubscribed
 *                              nodes);
 *   span_us / span_median_us   mean / median over iterations of (the latest
 *                              return on any receiver) minus (the earliest
 *                              call on any source): the end-to-end time from
 *                              the first data offered until the last result
 *                              (bcast: the root's call to the latest return),
 *                              including ranks that enter late.  Needs one
 *                              clock for all ranks: CLOCK_MONOTONIC, so only
 *                              when all ranks share a node ("nan" otherwise).
 * "last" is a max of per-rank durations: a rank that enters the broadcast
 * after its data has arrived (eager messages) shows a short time, so at small
 * sizes "last" can be far below the end-to-end span.
 *
 * Validation (-c), untimed, every iteration:
 *   broadcasts: the root fills a pattern of (size, iteration, element), the
 *     other ranks poison their buffer first; every rank checks every element.
 *   reductions: every rank fills its send buffer with integers that depend on
 *     (rank, element, size, iteration) and are chosen so that the result is
 *     EXACT in the datatype, for every order of evaluation (see
 *     reduction_value); the receivers poison their receive buffer first and
 *     check every element against the serially computed result, and every
 *     rank checks that its send buffer is unchanged.
 *   allgather: rank r's send buffer is elements r*count.. of one pattern of
 *     np*count elements of (size, iteration, element); every rank poisons its
 *     receive buffer first, then checks every element of every block, and
 *     that its send buffer is unchanged.
 *   reduce_scatter_block: a reduction of np*count elements (as above, element
 *     index b*count+j for block b); rank r checks every element of its block
 *     r, and that its whole send buffer is unchanged.
 *
 * Collectives are described by a table (coll_table): adding one means writing
 * one run function (and a prepare/check pair for validation) and one table
 * entry.
 */
#include "bench_args.h"
#include <mpi.h>

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SMALL_MSG_LIMIT 8192 /* OSU: LARGE_MESSAGE_SIZE */
#define DEFAULT_ITERS 1000
#define DEFAULT_WARMUP 100
#define DEFAULT_ITERS_L 100
#define DEFAULT_WARMUP_L 10
#define DEFAULT_MIN_SIZE 1
#define DEFAULT_MAX_SIZE (1UL << 20)
#define MAX_ACTIVE 8 /* reductions: contributing ranks per element */

/* ------------------------------------------------------------------------ */
/* datatypes and the broadcast validation pattern                            */

/* Value of element j for (size, iteration), reduced modulo `mod` so that it
 * is exactly representable in every datatype we support. */
static inline uint64_t pattern_value(size_t j, size_t size, int iter, uint64_t mod)
{
    uint64_t v = (uint64_t) j * 2654435761u + (uint64_t) size * 40503u + (uint64_t) iter * 977u + 17u;
    v ^= v >> 29;
    return v % mod;
}

/* fill: buf[j] = pattern (+ poison) mod m;  check: first j with buf[j] !=
 * pattern, or -1.  `poison` = 1 gives a value that differs from the
 * expected one at every element (used for receive buffers before the
 * collective, so stale data cannot pass the check).
 * store / load: element j as an exact integer (reductions); every value we
 * store is exactly representable in a double. */
#define DEFINE_TYPE_FUNCS(NAME, CTYPE, MOD, FMT, CAST)                                                    \
    static void fill_##NAME(void *b, size_t n, size_t size, int iter, int poison)                         \
    {                                                                                                     \
        CTYPE *p = (CTYPE *) b;                                                                           \
        for (size_t j = 0; j < n; j++)                                                                    \
            p[j] = (CTYPE) ((pattern_value(j, size, iter, (MOD)) + (uint64_t) poison) % (MOD));           \
    }                                                                                                     \
    static long check_##NAME(const void *b, size_t n, size_t size, int iter, char *what, size_t what_len) \
    {                                                                                                     \
        const CTYPE *p = (const CTYPE *) b;                                                               \
        for (size_t j = 0; j < n; j++) {                                                                  \
            CTYPE e = (CTYPE) pattern_value(j, size, iter, (MOD));                                        \
            if (p[j] != e) {                                                                              \
                snprintf(what, what_len, "expected " FMT ", got " FMT, (CAST) e, (CAST) p[j]);            \
                return (long) j;                                                                          \
            }                                                                                             \
        }                                                                                                 \
        return -1;                                                                                        \
    }                                                                                                     \
    static void store_##NAME(void *b, size_t j, int64_t v)                                                \
    {                                                                                                     \
        ((CTYPE *) b)[j] = (CTYPE) v;                                                                     \
    }                                                                                                     \
    static double load_##NAME(const void *b, size_t j)                                                    \
    {                                                                                                     \
        return (double) ((const CTYPE *) b)[j];                                                           \
    }

DEFINE_TYPE_FUNCS(char, char, 127u, "%d", int)              /* 0..126 */
DEFINE_TYPE_FUNCS(int, int, 2147483647u, "%d", int)         /* 0..2^31-2 */
DEFINE_TYPE_FUNCS(float, float, (1u << 24), "%.1f", double) /* exact ints */
DEFINE_TYPE_FUNCS(double, double, (UINT64_C(1) << 53), "%.1f", double)

typedef struct {
    const char *name;
    MPI_Datatype (*mpi_type)(void); /* MPI_* handles are not constants in every MPI */
    size_t size;
    void (*fill)(void *, size_t, size_t, int, int);
    long (*check)(const void *, size_t, size_t, int, char *, size_t);
    void (*store)(void *, size_t, int64_t);
    double (*load)(const void *, size_t);
    /* Reductions: every partial result stays within [-limit, limit], where
     * all integers are exact (char: 127, also below op/avx's saturation);
     * 2^log2_limit <= limit bounds products. */
    int64_t limit;
    int log2_limit;
} type_desc_t;

/* MPI_CHAR in reductions: not a "C integer" type of the MPI standard, but
 * Open MPI reduces it as a signed 8-bit integer, and OSU uses it too. */
static MPI_Datatype t_char(void)
{
    return MPI_CHAR;
}
static MPI_Datatype t_int(void)
{
    return MPI_INT;
}
static MPI_Datatype t_float(void)
{
    return MPI_FLOAT;
}
static MPI_Datatype t_double(void)
{
    return MPI_DOUBLE;
}

#define TYPE_FUNCS(NAME) fill_##NAME, check_##NAME, store_##NAME, load_##NAME
static const type_desc_t type_table[] = {
    {"char", t_char, sizeof(char), TYPE_FUNCS(char), 127, 6},
    {"int", t_int, sizeof(int), TYPE_FUNCS(int), INT_MAX, 30},
    {"float", t_float, sizeof(float), TYPE_FUNCS(float), INT64_C(1) << 24, 24},
    {"double", t_double, sizeof(double), TYPE_FUNCS(double), INT64_C(1) << 53, 53},
};
#define NTYPES (sizeof(type_table) / sizeof(type_table[0]))

static const type_desc_t *find_type(const char *name)
{
    for (size_t i = 0; i < NTYPES; i++)
        if (!strcmp(name, type_table[i].name)) return &type_table[i];
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* reduction ops and the reduction validation values                         */

typedef enum { OP_SUM, OP_MAX, OP_MIN, OP_PROD } op_kind_t;

typedef struct {
    const char *name;
    op_kind_t kind;
    MPI_Op (*mpi_op)(void);
} op_desc_t;

static MPI_Op o_sum(void)
{
    return MPI_SUM;
}
static MPI_Op o_max(void)
{
    return MPI_MAX;
}
static MPI_Op o_min(void)
{
    return MPI_MIN;
}
static MPI_Op o_prod(void)
{
    return MPI_PROD;
}

static const op_desc_t op_table[] = {
    {"sum", OP_SUM, o_sum},
    {"max", OP_MAX, o_max},
    {"min", OP_MIN, o_min},
    {"prod", OP_PROD, o_prod},
};
#define NOPS (sizeof(op_table) / sizeof(op_table[0]))

static uint64_t mix64(uint64_t x) /* splitmix64 finalizer */
{
    x += UINT64_C(0x9e3779b97f4a7c15);
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

/* What the reduction of (type, op, np) looks like.  For element j only
 * `active` consecutive ranks (cyclically from a first rank that depends on
 * (j, size, iteration), so every rank is active for many elements)
 * contribute a value other than the op's identity, each in
 * [-range, range]:
 *   sum   range = limit / active: every partial sum, in any order, is an
 *         integer of magnitude <= limit (char: never beyond 127, so op/avx's
 *         saturating 8-bit sums give the same result);
 *   prod  values -2, -1, 1, 2 and active <= log2_limit: partial products
 *         are +-2^k, k <= active;
 *   max, min  any integer of magnitude <= limit; the identity of the
 *         inactive ranks is -limit (max) / +limit (min).
 * All of these are exact in every type, so the result is exact too. */
typedef struct {
    op_kind_t op;
    int np, active;
    int64_t range, identity;
} red_plan_t;

static red_plan_t make_plan(const type_desc_t *t, const op_desc_t *op, int np)
{
    red_plan_t p;
    p.op = op->kind;
    p.np = np;
    p.active = np < MAX_ACTIVE ? np : MAX_ACTIVE;
    switch (op->kind) {
    case OP_SUM:
        p.identity = 0;
        p.range = t->limit / p.active;
        break;
    case OP_PROD:
        if (p.active > t->log2_limit) p.active = t->log2_limit;
        p.identity = 1;
        p.range = 2;
        break;
    case OP_MAX:
        p.identity = -t->limit;
        p.range = t->limit;
        break;
    default:
        p.identity = t->limit;
        p.range = t->limit;
        break;
    }
    return p;
}

static inline uint64_t elem_seed(size_t j, size_t size, int iter)
{
    return mix64((uint64_t) j * UINT64_C(0x100000001b3) ^ (uint64_t) size * 40503u ^ ((uint64_t) (int64_t) iter << 40));
}

/* First active rank of element j. */
static inline int first_active(const red_plan_t *p, uint64_t seed)
{
    return (int) (mix64(seed ^ UINT64_C(0x5bd1e995)) % (uint64_t) p->np);
}

/* The value rank r contributes to element j (seed = elem_seed(j, ...)). */
static inline int64_t reduction_value(const red_plan_t *p, uint64_t seed, int first, int r)
{
    int k = (r - first + p->np) % p->np;
    if (k >= p->active) return p->identity;
    uint64_t h = mix64(seed + (uint64_t) r * UINT64_C(0x9e3779b97f4a7c15));
    if (p->op == OP_PROD) {
        static const int64_t v[4] = {-2, -1, 1, 2};
        return v[h & 3];
    }
    return (int64_t) (h % (uint64_t) (2 * p->range + 1)) - p->range;
}

static inline int64_t combine(op_kind_t op, int64_t a, int64_t b)
{
    switch (op) {
    case OP_SUM: return a + b;
    case OP_PROD: return a * b;
    case OP_MAX: return a > b ? a : b;
    default: return a < b ? a : b;
    }
}

/* The serially computed result for element j. */
static int64_t reduction_expected(const red_plan_t *p, uint64_t seed)
{
    int first = first_active(p, seed);
    int64_t acc = p->identity;
    for (int k = 0; k < p->active; k++) acc = combine(p->op, acc, reduction_value(p, seed, first, (first + k) % p->np));
    return acc;
}

/* ------------------------------------------------------------------------ */
/* collectives                                                               */

/* Who holds the data before the collective and who gets the result. */
typedef enum {
    ROOT_SENDS,    /* bcast: source the root, receivers all ranks */
    ROOT_RECEIVES, /* reduce: sources all ranks, receiver the root */
    NO_ROOT        /* allreduce, allgather, reduce_scatter_block: sources and
                      receivers all ranks */
} flow_t;

typedef struct {
    MPI_Comm comm;
    int rank, nprocs, root;
    const type_desc_t *type;
    MPI_Datatype dtype;
    const op_desc_t *op; /* reductions */
    MPI_Op mpi_op;
    red_plan_t plan;  /* reductions, validation */
    void *sbuf;       /* send / in-place buffer (bcast: the buffer) */
    void *rbuf;       /* receive buffer (unused by bcast) */
    void *ebuf;       /* validation: the expected result (reductions), the whole
                         pattern (allgather) */
    int thread_level; /* provided by MPI_Init[_thread] */
} bench_ctx_t;

typedef struct coll_desc {
    const char *name;
    const char *help;
    int blocking; /* informational: 0 = post + MPI_Wait timed together */
    flow_t flow;
    int reduction; /* takes -o */
    const char *default_type;
    /* One collective on `count` elements (timed). */
    int (*run)(bench_ctx_t *c, size_t count);
    /* Validation, untimed: set the buffers up for (size, iter) ... */
    void (*prepare)(bench_ctx_t *c, size_t count, size_t size, int iter);
    /* ... and afterwards return the first wrong index on this rank, or -1. */
    long (*check)(bench_ctx_t *c, size_t count, size_t size, int iter, char *what, size_t what_len);
    /* The send / receive buffer holds one block of `size` bytes per rank
     * (reduce_scatter_block / allgather), else one block. */
    int send_np_blocks, recv_np_blocks;
} coll_desc_t;

static int is_source(const coll_desc_t *d, const bench_ctx_t *c)
{
    return d->flow != ROOT_SENDS || c->rank == c->root;
}

static int is_receiver(const coll_desc_t *d, const bench_ctx_t *c)
{
    return d->flow != ROOT_RECEIVES || c->rank == c->root;
}

static int wait_for(int rc, MPI_Request *req)
{
    if (MPI_SUCCESS != rc) return rc;
    return MPI_Wait(req, MPI_STATUS_IGNORE);
}

static int run_bcast(bench_ctx_t *c, size_t count)
{
    return MPI_Bcast(c->sbuf, (int) count, c->dtype, c->root, c->comm);
}

static int run_ibcast(bench_ctx_t *c, size_t count)
{
    MPI_Request req;
    return wait_for(MPI_Ibcast(c->sbuf, (int) count, c->dtype, c->root, c->comm, &req), &req);
}

static int run_reduce(bench_ctx_t *c, size_t count)
{
    return MPI_Reduce(c->sbuf, c->rbuf, (int) count, c->dtype, c->mpi_op, c->root, c->comm);
}

static int run_ireduce(bench_ctx_t *c, size_t count)
{
    MPI_Request req;
    return wait_for(MPI_Ireduce(c->sbuf, c->rbuf, (int) count, c->dtype, c->mpi_op, c->root, c->comm, &req), &req);
}

static int run_allreduce(bench_ctx_t *c, size_t count)
{
    return MPI_Allreduce(c->sbuf, c->rbuf, (int) count, c->dtype, c->mpi_op, c->comm);
}

static int run_iallreduce(bench_ctx_t *c, size_t count)
{
    MPI_Request req;
    return wait_for(MPI_Iallreduce(c->sbuf, c->rbuf, (int) count, c->dtype, c->mpi_op, c->comm, &req), &req);
}

static int run_allgather(bench_ctx_t *c, size_t count)
{
    return MPI_Allgather(c->sbuf, (int) count, c->dtype, c->rbuf, (int) count, c->dtype, c->comm);
}

static int run_iallgather(bench_ctx_t *c, size_t count)
{
    MPI_Request req;
    return wait_for(MPI_Iallgather(c->sbuf, (int) count, c->dtype, c->rbuf, (int) count, c->dtype, c->comm, &req),
                    &req);
}

/* count: the elements of each rank's result block (recvcount). */
static int run_reduce_scatter_block(bench_ctx_t *c, size_t count)
{
    return MPI_Reduce_scatter_block(c->sbuf, c->rbuf, (int) count, c->dtype, c->mpi_op, c->comm);
}

static int run_ireduce_scatter_block(bench_ctx_t *c, size_t count)
{
    MPI_Request req;
    return wait_for(MPI_Ireduce_scatter_block(c->sbuf, c->rbuf, (int) count, c->dtype, c->mpi_op, c->comm, &req), &req);
}

static void prepare_bcast(bench_ctx_t *c, size_t count, size_t size, int iter)
{
    c->type->fill(c->sbuf, count, size, iter, c->rank == c->root ? 0 : 1);
}

static long check_bcast(bench_ctx_t *c, size_t count, size_t size, int iter, char *what, size_t what_len)
{
    return c->type->check(c->sbuf, count, size, iter, what, what_len);
}

/* This rank's contribution to element j of the reduction. */
static int64_t contribution(const bench_ctx_t *c, size_t j, size_t size, int iter)
{
    uint64_t seed = elem_seed(j, size, iter);
    return reduction_value(&c->plan, seed, first_active(&c->plan, seed), c->rank);
}

/* sbuf: this rank's contributions to elements 0..nsend-1.  A receiver: into
 * ebuf the expected result of elements from..from+count-1, into rbuf a value
 * that differs from it at every element. */
static void prepare_elements(bench_ctx_t *c, size_t nsend, size_t from, size_t count, size_t size, int iter,
                             int receiver)
{
    const type_desc_t *t = c->type;
    for (size_t j = 0; j < nsend; j++) t->store(c->sbuf, j, contribution(c, j, size, iter));
    for (size_t j = 0; receiver && j < count; j++) {
        int64_t e = reduction_expected(&c->plan, elem_seed(from + j, size, iter));
        t->store(c->ebuf, j, e);
        t->store(c->rbuf, j, e == t->limit ? e - 1 : e + 1);
    }
}

/* A receiver: rbuf == ebuf (count elements).  Every rank: sbuf (nsend
 * elements) unchanged. */
static long check_elements(bench_ctx_t *c, size_t nsend, size_t count, size_t size, int iter, int receiver, char *what,
                           size_t what_len)
{
    const type_desc_t *t = c->type;
    for (size_t j = 0; receiver && j < count; j++) {
        if (t->load(c->rbuf, j) != t->load(c->ebuf, j)) {
            snprintf(what, what_len, "result: expected %.17g, got %.17g", t->load(c->ebuf, j), t->load(c->rbuf, j));
            return (long) j;
        }
    }
    for (size_t j = 0; j < nsend; j++) {
        double mine = (double) contribution(c, j, size, iter);
        if (t->load(c->sbuf, j) != mine) {
            snprintf(what, what_len, "send buffer modified: expected %.17g, got %.17g", mine, t->load(c->sbuf, j));
            return (long) j;
        }
    }
    return -1;
}

/* reduce, allreduce: count elements in, count out (at the receivers). */
static void prepare_reduction(bench_ctx_t *c, size_t count, size_t size, int iter)
{
    prepare_elements(c, count, 0, count, size, iter, c->root < 0 || c->rank == c->root);
}

static long check_reduction(bench_ctx_t *c, size_t count, size_t size, int iter, char *what, size_t what_len)
{
    return check_elements(c, count, count, size, iter, c->root < 0 || c->rank == c->root, what, what_len);
}

/* reduce_scatter_block: np*count elements in; rank r gets elements
 * r*count..(r+1)*count-1 of the result. */
static void prepare_reduce_scatter_block(bench_ctx_t *c, size_t count, size_t size, int iter)
{
    prepare_elements(c, count * (size_t) c->nprocs, (size_t) c->rank * count, count, size, iter, 1);
}

static long check_reduce_scatter_block(bench_ctx_t *c, size_t count, size_t size, int iter, char *what, size_t what_len)
{
    return check_elements(c, count * (size_t) c->nprocs, count, size, iter, 1, what, what_len);
}

/* allgather: one pattern of np*count elements into ebuf, this rank's block r
 * (elements r*count..) into sbuf, the pattern poisoned into rbuf. */
static void prepare_allgather(bench_ctx_t *c, size_t count, size_t size, int iter)
{
    size_t n = count * (size_t) c->nprocs, bytes = count * c->type->size;
    c->type->fill(c->ebuf, n, size, iter, 0);
    memcpy(c->sbuf, (char *) c->ebuf + (size_t) c->rank * bytes, bytes);
    c->type->fill(c->rbuf, n, size, iter, 1);
}

/* Every element of every block of rbuf; sbuf unchanged. */
static long check_allgather(bench_ctx_t *c, size_t count, size_t size, int iter, char *what, size_t what_len)
{
    const type_desc_t *t = c->type;
    char detail[128];
    long bad = t->check(c->rbuf, count * (size_t) c->nprocs, size, iter, detail, sizeof(detail));
    if (bad >= 0) {
        snprintf(what, what_len, "block %ld element %ld: %s", bad / (long) count, bad % (long) count, detail);
        return bad;
    }
    size_t mine = (size_t) c->rank * count;
    for (size_t j = 0; j < count; j++) {
        if (t->load(c->sbuf, j) != t->load(c->ebuf, mine + j)) {
            snprintf(what, what_len, "send buffer modified: expected %.17g, got %.17g", t->load(c->ebuf, mine + j),
                     t->load(c->sbuf, j));
            return (long) j;
        }
    }
    return -1;
}

#define BCAST_ENTRY(NAME, HELP, BLOCKING, RUN)                                             \
    {                                                                                      \
        NAME, HELP, BLOCKING, ROOT_SENDS, 0, "char", RUN, prepare_bcast, check_bcast, 0, 0 \
    }
#define REDUCTION_ENTRY(NAME, HELP, BLOCKING, FLOW, RUN)                                      \
    {                                                                                         \
        NAME, HELP, BLOCKING, FLOW, 1, "float", RUN, prepare_reduction, check_reduction, 0, 0 \
    }
#define ALLGATHER_ENTRY(NAME, HELP, BLOCKING, RUN)                                              \
    {                                                                                           \
        NAME, HELP, BLOCKING, NO_ROOT, 0, "char", RUN, prepare_allgather, check_allgather, 0, 1 \
    }
#define RSB_ENTRY(NAME, HELP, BLOCKING, RUN)                                                                           \
    {                                                                                                                  \
        NAME, HELP, BLOCKING, NO_ROOT, 1, "float", RUN, prepare_reduce_scatter_block, check_reduce_scatter_block, 1, 0 \
    }
static const coll_desc_t coll_table[] = {
    BCAST_ENTRY("bcast", "MPI_Bcast", 1, run_bcast),
    BCAST_ENTRY("ibcast", "MPI_Ibcast + MPI_Wait", 0, run_ibcast),
    REDUCTION_ENTRY("reduce", "MPI_Reduce", 1, ROOT_RECEIVES, run_reduce),
    REDUCTION_ENTRY("ireduce", "MPI_Ireduce + MPI_Wait", 0, ROOT_RECEIVES, run_ireduce),
    REDUCTION_ENTRY("allreduce", "MPI_Allreduce", 1, NO_ROOT, run_allreduce),
    REDUCTION_ENTRY("iallreduce", "MPI_Iallreduce + MPI_Wait", 0, NO_ROOT, run_iallreduce),
    ALLGATHER_ENTRY("allgather", "MPI_Allgather", 1, run_allgather),
    ALLGATHER_ENTRY("iallgather", "MPI_Iallgather + MPI_Wait", 0, run_iallgather),
    RSB_ENTRY("reduce_scatter_block", "MPI_Reduce_scatter_block", 1, run_reduce_scatter_block),
    RSB_ENTRY("ireduce_scatter_block", "MPI_Ireduce_scatter_block + MPI_Wait", 0, run_ireduce_scatter_block),
};
#define NCOLLS (sizeof(coll_table) / sizeof(coll_table[0]))

/* ------------------------------------------------------------------------ */
/* options                                                                   */

typedef struct {
    const coll_desc_t *coll;
    const type_desc_t *type; /* NULL until -T or the collective's default */
    const op_desc_t *op;     /* NULL: no -o given */
    size_t min_size, max_size;
    int iters_small, iters_large;   /* -i N or -i SMALL:LARGE */
    int warmup_small, warmup_large; /* -x N or -x SMALL:LARGE */
    int full;
    int validate;
    int root, root_given;
    int thread_multiple; /* -t: MPI_Init_thread(MPI_THREAD_MULTIPLE) */
    int help;
} options_t;

#define OPTSTRING ":k:m:i:x:T:o:r:cfth"

static void usage(FILE *f, const char *prog)
{
    fprintf(f,
            "Usage: %s [options]\n"
            "OSU-style latency benchmark for MPI collectives (times in microseconds).\n"
            "  -k NAME        collective:",
            prog);
    for (size_t i = 0; i < NCOLLS; i++) fprintf(f, " %s%s", coll_table[i].name, i ? "" : " (default)");
    fprintf(f,
            "\n"
            "                 (the i* ones: post + MPI_Wait, timed together)\n"
            "  -m [MIN:]MAX   message sizes in bytes, powers of two from MIN to MAX\n"
            "                 (K, M, G suffixes allowed; default %d:%lu); allgather:\n"
            "                 the bytes each rank contributes (send count; it receives\n"
            "                 np times that), reduce_scatter_block: the bytes of each\n"
            "                 rank's result block (recvcount; it sends np times that)\n"
            "  -i N|S:L       timed iterations (default %d up to %d bytes, %d above;\n"
            "                 N sets both, S:L sets small and large separately)\n"
            "  -x N|S:L       warm-up iterations (default %d up to %d bytes, %d above)\n"
            "  -T TYPE        datatype: char, int, float, double; the default depends on\n"
            "                 the collective, as in OSU: char for bcast and allgather\n"
            "                 (and their i* forms), float for the reductions (reduce,\n"
            "                 allreduce, reduce_scatter_block, and i*); a size is skipped\n"
            "                 if smaller than one element, count = size/extent\n"
            "  -o OP          reduction op (reductions only): sum (default, as OSU), max,\n"
            "                 min, prod\n"
            "  -r ROOT        root rank of bcast/ibcast/reduce/ireduce (default 0; the\n"
            "                 result of a reduce is only at the root)\n"
            "  -c             validate (untimed, after every iteration; exit status 1 on\n"
            "                 the first mismatch): bcast: the root fills a pattern that\n"
            "                 depends on size and iteration, every rank checks every\n"
            "                 element; reductions: every rank contributes integers that\n"
            "                 depend on rank, element and iteration and keep the result\n"
            "                 exact in the datatype in any order of evaluation; the root\n"
            "                 (reduce) or every rank (allreduce; reduce_scatter_block: its\n"
            "                 block) checks every element against the serially computed\n"
            "                 result, and every rank checks that its send buffer is\n"
            "                 unchanged; allgather: every rank contributes a block of one\n"
            "                 pattern, checks every element of every block it receives\n"
            "                 and that its send buffer is unchanged\n"
            "  -f             full statistics: extra columns last_min_us last_p90_us\n"
            "  -t             MPI_Init_thread(MPI_THREAD_MULTIPLE) instead of MPI_Init\n"
            "                 (what adapt2's progress thread needs to drive Open MPI's\n"
            "                 progress); the header reports the level provided (thread=)\n"
            "  -h             this help\n"
            "Note: as in OSU, -c is validation; the collective is chosen with -k.\n"
            "Output: '#' comment lines (the one starting '# size ' names the columns),\n"
            "then one line per size: size avg_us min_us max_us last_us last_median_us\n"
            "iters span_us span_median_us [last_min_us last_p90_us] (microseconds;\n"
            "last: until the last rank holding the result has it (reduce: the root);\n"
            "see the comment at the top of the source for their meaning).\n",
            DEFAULT_MIN_SIZE, DEFAULT_MAX_SIZE, DEFAULT_ITERS, SMALL_MSG_LIMIT, DEFAULT_ITERS_L, DEFAULT_WARMUP,
            SMALL_MSG_LIMIT, DEFAULT_WARMUP_L);
}

/* "N" -> (N, N);  "S:L" -> (S, L). */
static int parse_pair(const char *s, int min, int *small, int *large)
{
    const char *colon = strchr(s, ':');
    if (!colon) {
        if (!parse_int(s, min, small)) return 0;
        *large = *small;
        return 1;
    }
    char buf[64];
    size_t n = (size_t) (colon - s);
    if (n >= sizeof(buf)) return 0;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return parse_int(buf, min, small) && parse_int(colon + 1, min, large);
}

/* -m [MIN:]MAX.  Returns NULL or an error message (in msg). */
static const char *parse_sizes(const char *arg, options_t *o, char *msg, size_t len)
{
    const char *colon = strchr(arg, ':');
    if (colon) {
        char buf[64];
        size_t n = (size_t) (colon - arg);
        if (n >= sizeof(buf)) return "bad message size";
        memcpy(buf, arg, n);
        buf[n] = '\0';
        if (!parse_size(buf, &o->min_size) || !parse_size(colon + 1, &o->max_size)) {
            snprintf(msg, len, "bad message size range '%s'", arg);
            return msg;
        }
    } else if (!parse_size(arg, &o->max_size)) {
        snprintf(msg, len, "bad message size '%s'", arg);
        return msg;
    }
    return NULL;
}

/* Cross-option checks after getopt.  Returns NULL or an error message. */
static const char *finish_args(options_t *o, int nprocs, char *msg, size_t len)
{
    if (o->min_size < 1 || o->max_size < 1) return "message sizes must be at least 1 byte";
    if (o->min_size > o->max_size) return "minimum message size is larger than the maximum";
    if (o->max_size > (size_t) INT_MAX) return "maximum message size exceeds INT_MAX bytes";
    if ((o->coll->send_np_blocks || o->coll->recv_np_blocks) && o->max_size > (size_t) INT_MAX / (size_t) nprocs) {
        snprintf(msg, len, "%s: np * maximum message size exceeds INT_MAX bytes", o->coll->name);
        return msg;
    }
    if (o->root >= nprocs) {
        snprintf(msg, len, "root %d is not a rank (np=%d)", o->root, nprocs);
        return msg;
    }
    if (o->op && !o->coll->reduction) {
        snprintf(msg, len, "-o applies to reductions only, not to %s", o->coll->name);
        return msg;
    }
    if (o->root_given && o->coll->flow == NO_ROOT) {
        snprintf(msg, len, "-r does not apply to %s (it has no root)", o->coll->name);
        return msg;
    }
    if (!o->type) o->type = find_type(o->coll->default_type);
    if (!o->op && o->coll->reduction) o->op = &op_table[0];
    return NULL;
}

/* Returns NULL on success, or an error message. */
static const char *parse_args(int argc, char **argv, int nprocs, options_t *o)
{
    static char msg[256];
    const char *err;
    int opt;
    memset(o, 0, sizeof(*o));
    o->coll = &coll_table[0];
    o->min_size = DEFAULT_MIN_SIZE;
    o->max_size = DEFAULT_MAX_SIZE;
    o->iters_small = DEFAULT_ITERS;
    o->iters_large = DEFAULT_ITERS_L;
    o->warmup_small = DEFAULT_WARMUP;
    o->warmup_large = DEFAULT_WARMUP_L;

    opterr = 0; /* we print our own messages, on rank 0 only */
    while ((opt = getopt(argc, argv, OPTSTRING)) != -1) {
        switch (opt) {
        case 'k':
            o->coll = NULL;
            for (size_t i = 0; i < NCOLLS; i++)
                if (!strcmp(optarg, coll_table[i].name)) o->coll = &coll_table[i];
            if (!o->coll) {
                snprintf(msg, sizeof(msg), "unknown collective '%s'", optarg);
                return msg;
            }
            break;
        case 'm':
            if ((err = parse_sizes(optarg, o, msg, sizeof(msg)))) return err;
            break;
        case 'i':
            if (!parse_pair(optarg, 1, &o->iters_small, &o->iters_large)) {
                snprintf(msg, sizeof(msg), "bad iteration count '%s'", optarg);
                return msg;
            }
            break;
        case 'x':
            if (!parse_pair(optarg, 0, &o->warmup_small, &o->warmup_large)) {
                snprintf(msg, sizeof(msg), "bad warm-up count '%s'", optarg);
                return msg;
            }
            break;
        case 'T':
            if (!(o->type = find_type(optarg))) {
                snprintf(msg, sizeof(msg), "unknown datatype '%s'", optarg);
                return msg;
            }
            break;
        case 'o':
            o->op = NULL;
            for (size_t i = 0; i < NOPS; i++)
                if (!strcmp(optarg, op_table[i].name)) o->op = &op_table[i];
            if (!o->op) {
                snprintf(msg, sizeof(msg), "unknown reduction op '%s'", optarg);
                return msg;
            }
            break;
        case 'r':
            if (!parse_int(optarg, 0, &o->root)) {
                snprintf(msg, sizeof(msg), "bad root '%s'", optarg);
                return msg;
            }
            o->root_given = 1;
            break;
        case 'c': o->validate = 1; break;
        case 'f': o->full = 1; break;
        case 't': o->thread_multiple = 1; break;
        case 'h': o->help = 1; return NULL;
        case ':': snprintf(msg, sizeof(msg), "option -%c needs an argument", optopt); return msg;
        default: snprintf(msg, sizeof(msg), "unknown option -%c", optopt); return msg;
        }
    }
    if (optind < argc) {
        snprintf(msg, sizeof(msg), "unexpected argument '%s'", argv[optind]);
        return msg;
    }
    return finish_args(o, nprocs, msg, sizeof(msg));
}

/* ------------------------------------------------------------------------ */
/* measurement                                                               */

/* A clock shared by all processes of a node (MPI_Wtime in Open MPI 4.1 is
 * relative to a per-process origin, so it cannot be compared across ranks). */
static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

/* q-quantile of a sorted array (nearest rank, q in [0,1]); median = mean of
 * the two middle elements for even n. */
static double quantile_sorted(const double *v, int n, double q)
{
    if (n <= 0) return 0.0;
    if (q == 0.5) return (n % 2) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    int k = (int) (q * n + 0.999999) - 1;
    if (k < 0) k = 0;
    if (k >= n) k = n - 1;
    return v[k];
}

/* Per-iteration records of one size (this rank's, then reduced on rank 0). */
typedef struct {
    double *times;                    /* time in the call (MPI_Wtime) */
    double *tlast;                    /* receivers: time in the call, others -1 (MPI_MAX) */
    double *t_start;                  /* sources: CLOCK_MONOTONIC at the call, others +huge (MPI_MIN) */
    double *t_end;                    /* receivers: CLOCK_MONOTONIC at the return, others -huge (MPI_MAX) */
    double *r_last, *r_start, *r_end; /* folded over ranks on rank 0 */
    double *all;                      /* rank 0: gathered, nprocs * n */
} records_t;

static int records_alloc(records_t *r, int n, int nprocs, int rank)
{
    double **per_iter[] = {&r->times, &r->tlast, &r->t_start, &r->t_end, &r->r_last, &r->r_start, &r->r_end};
    int ok = 1;
    for (size_t i = 0; i < sizeof(per_iter) / sizeof(per_iter[0]); i++)
        ok &= (*per_iter[i] = malloc(sizeof(double) * (size_t) n)) != NULL;
    r->all = malloc(sizeof(double) * (0 == rank ? (size_t) n * (size_t) nprocs : 1));
    return ok && r->all;
}

static void records_free(records_t *r)
{
    free(r->times);
    free(r->tlast);
    free(r->t_start);
    free(r->t_end);
    free(r->r_last);
    free(r->r_start);
    free(r->r_end);
    free(r->all);
}

static void print_header(const options_t *o, const bench_ctx_t *c, int one_node)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    char root[32] = "-";
    int len = 0;
    MPI_Get_library_version(lib, &len);
    for (int i = 0; i < len; i++)
        if (lib[i] == '\n' || lib[i] == '\r') {
            lib[i] = '\0';
            break;
        }
    if (o->coll->flow != NO_ROOT) snprintf(root, sizeof(root), "%d", o->root);
    printf(
        "# adapt2_bench collective=%s np=%d root=%s type=%s op=%s validate=%d "
        "sizes=%zu:%zu iters=%d:%d warmup=%d:%d small_limit=%d thread=%s\n",
        o->coll->name, c->nprocs, root, o->type->name, o->op ? o->op->name : "-", o->validate, o->min_size, o->max_size,
        o->iters_small, o->iters_large, o->warmup_small, o->warmup_large, SMALL_MSG_LIMIT,
        thread_level_name(c->thread_level));
    printf("# library: %s\n", lib);
    if (o->thread_multiple && c->thread_level != MPI_THREAD_MULTIPLE)
        printf("# warning: -t asked for MPI_THREAD_MULTIPLE, the library provides %s\n",
               thread_level_name(c->thread_level));
    const char *recv = o->coll->flow == ROOT_RECEIVES ? "the root" : "all ranks";
    const char *src = o->coll->flow == ROOT_SENDS ? "the root's call" : "the earliest call";
    printf(
        "# times in microseconds; avg/min/max: per-rank mean over iterations, "
        "then mean/min/max over ranks; last: per-iteration max over the ranks that "
        "receive the result (%s), mean (last_us) and median (last_median_us) over "
        "iterations; span: latest return on a receiving rank minus %s, mean and median "
        "over iterations%s\n",
        recv, src, one_node ? "" : " (nan: ranks on several nodes, no common clock)");
    printf("# %-10s %12s %12s %12s %12s %14s %8s %12s %14s", "size", "avg_us", "min_us", "max_us", "last_us",
           "last_median_us", "iters", "span_us", "span_median_us");
    if (o->full) printf(" %12s %12s", "last_min_us", "last_p90_us");
    printf("\n");
    fflush(stdout);
}

/* The benchmark's own bookkeeping (validation verdicts, statistics) uses
 * point-to-point messages and MPI_Gather only, never the collectives under
 * test (adapt2's: ompi/mca/coll/adapt2/collectives.def): a broken reduce,
 * allreduce or allgather must not garble its own verdict or numbers. */
#define BOOKKEEPING_TAG 4242

/* The OR of `local` over all ranks: rank 0 collects every rank's flag with
 * MPI_Recv, then sends the OR back to each. */
static int any_rank(MPI_Comm comm, int nprocs, int local)
{
    int rank, any = local;
    MPI_Comm_rank(comm, &rank);
    if (0 != rank) {
        MPI_Send(&local, 1, MPI_INT, 0, BOOKKEEPING_TAG, comm);
        MPI_Recv(&any, 1, MPI_INT, 0, BOOKKEEPING_TAG, comm, MPI_STATUS_IGNORE);
        return any;
    }
    for (int r = 1; r < nprocs; r++) {
        int flag;
        MPI_Recv(&flag, 1, MPI_INT, r, BOOKKEEPING_TAG, comm, MPI_STATUS_IGNORE);
        any |= flag;
    }
    for (int r = 1; r < nprocs; r++) MPI_Send(&any, 1, MPI_INT, r, BOOKKEEPING_TAG, comm);
    return any;
}

/* Untimed: checks this iteration's result everywhere; 1 if any rank failed. */
static int validate_iteration(const options_t *o, bench_ctx_t *c, size_t count, size_t size, int it, int warmup)
{
    char what[160] = "";
    long bad = o->coll->check(c, count, size, it, what, sizeof(what));
    if (bad >= 0) {
        char op[16] = "", root[16] = "-";
        if (o->op) snprintf(op, sizeof(op), " op %s", o->op->name);
        if (c->root >= 0) snprintf(root, sizeof(root), "%d", c->root);
        fprintf(stderr,
                "VALIDATION FAILED: rank %d %s size %zu type %s%s root %s %s %d: "
                "first bad element %ld: %s\n",
                c->rank, o->coll->name, size, o->type->name, op, root, it < 0 ? "warm-up iteration" : "iteration",
                it < 0 ? it + warmup : it, bad, what);
    }
    return any_rank(c->comm, c->nprocs, bad >= 0) || bad >= 0;
}

/* Runs warm-up + timed iterations of one size into rec.  1: validation failed. */
static int measure_size(const options_t *o, bench_ctx_t *c, records_t *rec, size_t size, size_t count, int iters,
                        int warmup)
{
    int source = is_source(o->coll, c), receiver = is_receiver(o->coll, c);
    MPI_Barrier(c->comm);
    for (int it = -warmup; it < iters; it++) {
        if (o->validate) o->coll->prepare(c, count, size, it);
        double m0 = mono_now();
        double t0 = MPI_Wtime();
        int rc = o->coll->run(c, count);
        double t = MPI_Wtime() - t0;
        double m1 = mono_now();
        if (MPI_SUCCESS != rc) {
            fprintf(stderr, "rank %d: %s of %zu bytes failed (error %d)\n", c->rank, o->coll->name, size, rc);
            MPI_Abort(c->comm, 1);
        }
        if (o->validate && validate_iteration(o, c, count, size, it, warmup)) return 1;
        if (it >= 0) {
            rec->times[it] = t;
            rec->tlast[it] = receiver ? t : -1.0;
            rec->t_start[it] = source ? m0 : 1e300;
            rec->t_end[it] = receiver ? m1 : -1e300;
        }
        MPI_Barrier(c->comm);
    }
    return 0;
}

/* Gathers n doubles of every rank onto rank 0 (all: nprocs * n there) and
 * folds them elementwise into out (MPI_MAX if want_max, else MPI_MIN). */
static void gather_fold(bench_ctx_t *c, const double *mine, double *all, int n, int want_max, double *out)
{
    MPI_Gather(mine, n, MPI_DOUBLE, all, n, MPI_DOUBLE, 0, c->comm);
    if (0 != c->rank) return;
    for (int i = 0; i < n; i++) {
        double v = all[i];
        for (int r = 1; r < c->nprocs; r++) {
            double x = all[(size_t) r * (size_t) n + (size_t) i];
            v = want_max ? (x > v ? x : v) : (x < v ? x : v);
        }
        out[i] = v;
    }
}

/* Collects the records of one size on rank 0, which prints its line. */
static void report_size(const options_t *o, bench_ctx_t *c, records_t *rec, size_t size, int iters, int one_node)
{
    double sum = 0.0, amin = 0.0, amax = 0.0, asum = 0.0;
    for (int i = 0; i < iters; i++) sum += rec->times[i];
    double avg = sum / iters;
    MPI_Gather(&avg, 1, MPI_DOUBLE, rec->all, 1, MPI_DOUBLE, 0, c->comm);
    for (int r = 0; 0 == c->rank && r < c->nprocs; r++) {
        double v = rec->all[r];
        amin = r == 0 || v < amin ? v : amin;
        amax = r == 0 || v > amax ? v : amax;
        asum += v;
    }
    gather_fold(c, rec->tlast, rec->all, iters, 1, rec->r_last);
    gather_fold(c, rec->t_end, rec->all, iters, 1, rec->r_end);
    gather_fold(c, rec->t_start, rec->all, iters, 0, rec->r_start);
    if (0 != c->rank) return;

    double *span = rec->r_end, *last = rec->r_last, ssum = 0.0, lsum = 0.0;
    for (int i = 0; i < iters; i++) {
        span[i] -= rec->r_start[i];
        ssum += span[i];
        lsum += last[i];
    }
    qsort(span, (size_t) iters, sizeof(double), cmp_double);
    qsort(last, (size_t) iters, sizeof(double), cmp_double);
    double span_mean = one_node ? 1e6 * ssum / iters : NAN;
    double span_med = one_node ? 1e6 * quantile_sorted(span, iters, 0.5) : NAN;
    printf("  %-10zu %12.2f %12.2f %12.2f %12.2f %14.2f %8d", size, 1e6 * asum / c->nprocs, 1e6 * amin, 1e6 * amax,
           1e6 * lsum / iters, 1e6 * quantile_sorted(last, iters, 0.5), iters);
    printf(" %12.2f %14.2f", span_mean, span_med);
    if (o->full) printf(" %12.2f %12.2f", 1e6 * last[0], 1e6 * quantile_sorted(last, iters, 0.9));
    printf("\n");
    fflush(stdout);
}

/* span_us needs all ranks on one node (one CLOCK_MONOTONIC). */
static int all_on_one_node(MPI_Comm comm, int nprocs)
{
    int node_size = 0;
    MPI_Comm node_comm;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_comm);
    MPI_Comm_size(node_comm, &node_size);
    MPI_Comm_free(&node_comm);
    return node_size == nprocs;
}

/* Loops over the sizes; 1 if validation failed. */
static int run_sizes(const options_t *o, bench_ctx_t *c, records_t *rec, int one_node)
{
    for (size_t size = o->min_size; size <= o->max_size; size *= 2) {
        size_t count = size / o->type->size;
        if (0 == count) {
            if (0 == c->rank) printf("# skipped size %zu: smaller than one %s\n", size, o->type->name);
        } else {
            int small = size <= SMALL_MSG_LIMIT;
            int iters = small ? o->iters_small : o->iters_large;
            int warmup = small ? o->warmup_small : o->warmup_large;
            if (measure_size(o, c, rec, size, count, iters, warmup)) return 1;
            report_size(o, c, rec, size, iters, one_node);
        }
        if (size > o->max_size / 2) break; /* no overflow on the doubling */
    }
    return 0;
}

int main(int argc, char **argv)
{
    int rank, nprocs;
    options_t o;

    /* -t decides how MPI starts, so it is looked for before MPI_Init. */
    int provided = bench_mpi_init(&argc, &argv, option_given(argc, argv, OPTSTRING, 't'));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

    const char *err = parse_args(argc, argv, nprocs, &o); /* every rank parses the same argv */
    int stop = bench_stop_for_usage(rank, err, o.help, argv[0], usage);
    if (stop >= 0) return stop;

    bench_ctx_t c;
    memset(&c, 0, sizeof(c));
    c.comm = MPI_COMM_WORLD;
    c.rank = rank;
    c.nprocs = nprocs;
    c.root = o.coll->flow == NO_ROOT ? -1 : o.root;
    c.type = o.type;
    c.dtype = o.type->mpi_type();
    c.op = o.op;
    c.thread_level = provided;
    if (o.op) {
        c.mpi_op = o.op->mpi_op();
        c.plan = make_plan(o.type, o.op, nprocs);
    }

    int max_iters = o.iters_small > o.iters_large ? o.iters_small : o.iters_large;
    /* allgather receives, reduce_scatter_block sends, np blocks of max_size */
    size_t sbytes = o.max_size * (o.coll->send_np_blocks ? (size_t) nprocs : 1);
    size_t rbytes = o.max_size * (o.coll->recv_np_blocks ? (size_t) nprocs : 1);
    records_t rec;
    memset(&rec, 0, sizeof(rec));
    if (!records_alloc(&rec, max_iters, nprocs, rank) || posix_memalign(&c.sbuf, 4096, sbytes) ||
        posix_memalign(&c.rbuf, 4096, rbytes) ||
        (o.validate && posix_memalign(&c.ebuf, 4096, sbytes > rbytes ? sbytes : rbytes))) {
        fprintf(stderr, "rank %d: out of memory (max size %zu)\n", rank, o.max_size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(c.sbuf, 0, sbytes); /* touch the pages before timing */
    memset(c.rbuf, 0, rbytes);

    int one_node = all_on_one_node(c.comm, nprocs);
    if (0 == rank) print_header(&o, &c, one_node);
    int status = run_sizes(&o, &c, &rec, one_node);

    records_free(&rec);
    free(c.sbuf);
    free(c.rbuf);
    free(c.ebuf);
    MPI_Finalize();
    return status;
}
