/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * MPI_Allgather / MPI_Iallgather and MPI_Reduce_scatter_block /
 * MPI_Ireduce_scatter_block: every element on every rank, for each type class
 * (int, double, a vector with holes), op, count, segment size, in place or
 * not, blocking or not (several calls in flight). Holes in receive buffers
 * must come back untouched. Checks through the MPI_T counters that adapt2
 * ran every call (non-commutative ops included: recursive halving).
 *
 *   ring_check [--colls allgather,rsb] [--types int,double,vec] [--ops sum,max,usum,first,affine]
 *              [--counts 0,1,7,1000] [--segsizes 0,64,4096] [--depth N] [--iters N]
 *              [--threads N]   (MPI_THREAD_MULTIPLE: N threads, each on its own communicator)
 *              [--forms both|blocking]   (blocking: no MPI_I* calls)
 * --segsizes keep: leave the segment size parameters as the environment set them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"

#define HOLE (-7)

/* A type class: `items` data ints (or doubles) per element, laid out in
 * `slots` slots of the element, at slot[] positions. */
typedef struct {
    const char *name;
    int is_double;
    int items, slots;
    int slot[2];
    MPI_Datatype type; /* the element type */
    MPI_Datatype flat; /* the same signature as `items` plain elements */
} type_class_t;

static type_class_t types[3];

static void make_types(void)
{
    types[0] = (type_class_t){"int", 0, 1, 1, {0, 0}, MPI_INT, MPI_INT};
    types[1] = (type_class_t){"double", 1, 1, 1, {0, 0}, MPI_DOUBLE, MPI_DOUBLE};
    types[2] = (type_class_t){"vec", 0, 2, 3, {0, 2}, MPI_DATATYPE_NULL, MPI_INT};
    MPI_Type_vector(2, 1, 2, MPI_INT, &types[2].type); /* ints 0 and 2 of 3 */
    MPI_Type_commit(&types[2].type);
}

static const type_class_t *find_type(const char *name)
{
    for (int i = 0; i < 3; ++i)
        if (!strcmp(types[i].name, name)) return &types[i];
    fail("unknown type %s", name);
    return NULL;
}

/* Element slots are ints, or doubles for the double class. */
static size_t slot_bytes(const type_class_t *t)
{
    return t->is_double ? sizeof(double) : sizeof(int);
}

static double get(const type_class_t *t, const void *buf, size_t item)
{
    size_t e = item / t->items, slot = e * t->slots + t->slot[item % t->items];
    return t->is_double ? ((const double *) buf)[slot] : ((const int *) buf)[slot];
}

static void set(const type_class_t *t, void *buf, size_t item, double v)
{
    size_t e = item / t->items, slot = e * t->slots + t->slot[item % t->items];
    if (t->is_double)
        ((double *) buf)[slot] = v;
    else
        ((int *) buf)[slot] = (int) v;
}

/* Elements' slots filled with HOLE (data slots are overwritten later). */
static void *alloc_elements(const type_class_t *t, size_t elements)
{
    size_t n = elements * t->slots + 1;
    void *buf = malloc(n * slot_bytes(t));
    for (size_t i = 0; i < n; ++i) {
        if (t->is_double)
            ((double *) buf)[i] = HOLE;
        else
            ((int *) buf)[i] = HOLE;
    }
    return buf;
}

/* Holes (slots that are no item) must still hold HOLE. */
static long check_holes(const type_class_t *t, const void *buf, size_t elements, const char *what)
{
    long bad = 0;
    for (size_t e = 0; e < elements && t->slots > t->items; ++e) {
        int v = ((const int *) buf)[e * t->slots + 1];
        if (v != HOLE && bad++ < 3) fprintf(stderr, "%s: hole of element %zu is %d\n", what, e, v);
    }
    return bad;
}

static double value(int call, int rank, size_t item)
{
    return (double) (((size_t) call * 131 + (size_t) rank * 31 + item * 7) % 97) - 40;
}

/* ---- ops ---- */
typedef struct {
    const char *name;
    MPI_Op op;
    int commutative;
} op_t;

static void usum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void) dt;
    for (int i = 0; i < *len; ++i) ((int *) inout)[i] += ((int *) in)[i];
}

/* in op inout = in: the leftmost operand wins (non-commutative). */
static void first(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void) dt;
    memcpy(inout, in, (size_t) *len * sizeof(int));
}

/* An int as an affine map t -> a t + b mod 2^16 (a: the high 16 bits, b:
 * the low ones); left o right. Associative, not commutative: every operand's
 * place in the rank order shows in the result. */
static int compose16(int left, int right)
{
    unsigned l = (unsigned) left, r = (unsigned) right;
    unsigned la = l >> 16, lb = l & 0xffff, ra = r >> 16, rb = r & 0xffff;
    return (int) ((((la * ra) & 0xffff) << 16) | ((la * rb + lb) & 0xffff));
}

static void affine(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void) dt;
    for (int i = 0; i < *len; ++i) ((int *) inout)[i] = compose16(((int *) in)[i], ((int *) inout)[i]);
}

#define NOPS 5
static op_t ops[NOPS];

static double combine(const op_t *op, double a, double b)
{
    if (!strcmp(op->name, "max")) return a > b ? a : b;
    if (!strcmp(op->name, "first")) return a;
    if (!strcmp(op->name, "affine")) return compose16((int) a, (int) b);
    return a + b;
}

static const op_t *find_op(const char *name)
{
    for (int i = 0; i < NOPS; ++i)
        if (!strcmp(ops[i].name, name)) return &ops[i];
    fail("unknown op %s", name);
    return NULL;
}

/* ---- one case: `depth` calls in flight (blocking: one after the other) ---- */
typedef struct {
    int rank, size;
    int depth;
    int nonblocking;
    int in_place;
    int count; /* elements per rank's block */
    const type_class_t *t;
    const op_t *op; /* reduce_scatter_block only */
    int call;       /* numbers the data */
    MPI_Comm comm;
    int check_counters;        /* per case (single thread: no other calls in between) */
    long long ran_ag, ran_rsb; /* calls adapt2 must have run (counted when not per case) */
    long long blocking_ag;     /* blocking allgathers with data (test/mpi/direct.sh: which went direct) */
    long long blocking_rsb;    /* blocking reduce_scatter_blocks of commutative ops with data (likewise) */
} case_t;

static long run_allgather(case_t *c)
{
    const type_class_t *t = c->t;
    const size_t items = (size_t) c->count * t->items, all = items * c->size;
    void *send[8], *recv[8];
    MPI_Request req[8];
    for (int d = 0; d < c->depth; ++d) {
        recv[d] = alloc_elements(t, (size_t) c->count * c->size);
        send[d] = alloc_elements(&types[t->is_double ? 1 : 0], items); /* flat: same signature */
        for (size_t i = 0; i < items; ++i) {
            double v = value(c->call + d, c->rank, i);
            if (c->in_place)
                set(t, recv[d], (size_t) c->rank * items + i, v);
            else
                set(&types[t->is_double ? 1 : 0], send[d], i, v);
        }
    }
    for (int d = 0; d < c->depth; ++d) {
        const void *s = c->in_place ? MPI_IN_PLACE : send[d];
        int rc = c->nonblocking ? MPI_Iallgather(s, (int) items, t->flat, recv[d], c->count, t->type, c->comm, &req[d])
                                : MPI_Allgather(s, (int) items, t->flat, recv[d], c->count, t->type, c->comm);
        if (rc != MPI_SUCCESS) fail("MPI_%sallgather returned %d", c->nonblocking ? "I" : "", rc);
    }
    if (c->nonblocking) MPI_Waitall(c->depth, req, MPI_STATUSES_IGNORE);
    long bad = 0;
    for (int d = 0; d < c->depth; ++d) {
        for (size_t i = 0; i < all; ++i) {
            double want = value(c->call + d, (int) (i / (items ? items : 1)), i % (items ? items : 1));
            double got = get(t, recv[d], i);
            if (got != want && bad++ < 5)
                fprintf(stderr, "rank %d: allgather %s count %d call %d item %zu is %g, expected %g\n", c->rank,
                        t->name, c->count, d, i, got, want);
        }
        bad += check_holes(t, recv[d], (size_t) c->count * c->size, "allgather");
        free(send[d]);
        free(recv[d]);
    }
    return bad;
}

static long run_reduce_scatter(case_t *c)
{
    const type_class_t *t = c->t;
    const size_t items = (size_t) c->count * t->items, all = items * c->size;
    void *send[8], *recv[8];
    MPI_Request req[8];
    for (int d = 0; d < c->depth; ++d) {
        send[d] = alloc_elements(t, (size_t) c->count * c->size);
        recv[d] = alloc_elements(t, (size_t) c->count * (c->in_place ? c->size : 1));
        for (size_t i = 0; i < all; ++i) set(t, c->in_place ? recv[d] : send[d], i, value(c->call + d, c->rank, i));
    }
    for (int d = 0; d < c->depth; ++d) {
        const void *s = c->in_place ? MPI_IN_PLACE : send[d];
        int rc = c->nonblocking ? MPI_Ireduce_scatter_block(s, recv[d], c->count, t->type, c->op->op, c->comm, &req[d])
                                : MPI_Reduce_scatter_block(s, recv[d], c->count, t->type, c->op->op, c->comm);
        if (rc != MPI_SUCCESS) fail("MPI_%sreduce_scatter_block returned %d", c->nonblocking ? "I" : "", rc);
    }
    if (c->nonblocking) MPI_Waitall(c->depth, req, MPI_STATUSES_IGNORE);
    long bad = 0;
    for (int d = 0; d < c->depth; ++d) {
        for (size_t i = 0; i < items; ++i) {
            size_t item = (size_t) c->rank * items + i;
            double want = value(c->call + d, 0, item);
            for (int q = 1; q < c->size; ++q) want = combine(c->op, want, value(c->call + d, q, item));
            double got = get(t, recv[d], i);
            if (got != want && bad++ < 5)
                fprintf(stderr, "rank %d: reduce_scatter_block %s %s count %d call %d item %zu is %g, expected %g\n",
                        c->rank, t->name, c->op->name, c->count, d, i, got, want);
        }
        bad += check_holes(t, recv[d], (size_t) c->count * (c->in_place ? c->size : 1), "reduce_scatter_block");
        free(send[d]);
        free(recv[d]);
    }
    return bad;
}

/* ---- options ---- */
typedef struct {
    char colls[64], types[64], ops[64], counts[256], segsizes[256];
    int depth, iters, threads;
    int forms; /* 2: blocking and non-blocking; 1: blocking only */
} options_t;

static void parse(int argc, char **argv, options_t *o)
{
    strcpy(o->colls, "allgather,rsb");
    strcpy(o->types, "int,double,vec");
    strcpy(o->ops, "sum,max,usum,first,affine");
    strcpy(o->counts, "0,1,7,1000");
    strcpy(o->segsizes, "0,64,4096");
    o->depth = 3;
    o->iters = 1;
    o->threads = 1;
    o->forms = 2;
    for (int i = 1; i + 1 < argc; i += 2) {
        char *v = argv[i + 1];
        if (!strcmp(argv[i], "--colls"))
            snprintf(o->colls, sizeof o->colls, "%s", v);
        else if (!strcmp(argv[i], "--types"))
            snprintf(o->types, sizeof o->types, "%s", v);
        else if (!strcmp(argv[i], "--ops"))
            snprintf(o->ops, sizeof o->ops, "%s", v);
        else if (!strcmp(argv[i], "--counts"))
            snprintf(o->counts, sizeof o->counts, "%s", v);
        else if (!strcmp(argv[i], "--segsizes"))
            snprintf(o->segsizes, sizeof o->segsizes, "%s", v);
        else if (!strcmp(argv[i], "--depth"))
            o->depth = atoi(v);
        else if (!strcmp(argv[i], "--iters"))
            o->iters = atoi(v);
        else if (!strcmp(argv[i], "--threads"))
            o->threads = atoi(v);
        else if (!strcmp(argv[i], "--forms") && (!strcmp(v, "both") || !strcmp(v, "blocking")))
            o->forms = strcmp(v, "both") ? 1 : 2;
        else
            fail("unknown option %s", argv[i]);
    }
    if (o->depth < 1 || o->depth > 8) fail("--depth must be 1..8");
    if (o->threads < 1 || o->threads > 16) fail("--threads must be 1..16");
    if (o->threads > 1 && (strchr(o->segsizes, ',') || !strncmp(o->counts, "0,", 2) || strstr(o->counts, ",0")))
        fail("--threads: one segment size (set process-wide) and no count 0 (not counted)");
}

/* Calls of a kind adapt2 must have run (`expected`), checked on the counter. */
static void expect_calls(const char *counter, long long before, long long expected)
{
    long long ran = adapt2_counter(counter) - before;
    if (expected >= 0 && ran != expected) fail("%s grew by %lld, expected %lld", counter, ran, expected);
}

static options_t o;

/* The calls of a case adapt2 runs when it takes the kind (`taken`), or -1:
 * not checked (Open MPI's MPI layer returns at once for some zero counts). */
static long long calls_expected(const case_t *c, int taken)
{
    return c->count == 0 ? -1 : taken ? c->depth : 0;
}

/* Every case of the options on c->comm; returns the wrong elements. */
static long long sweep(case_t *c, long long *cases)
{
    long long bad = 0;
    char segs[256], counts[256], tl[64], cl[64], ol[64];
    strcpy(segs, o.segsizes);
    for (char *sp, *s = strtok_r(segs, ",", &sp); s; s = strtok_r(NULL, ",", &sp)) {
        if (c->check_counters && strcmp(s, "keep")) { /* threads: set once, before they start */
            adapt2_set_long("coll_adapt2_allgather_segment_size", atol(s));
            adapt2_set_long("coll_adapt2_reduce_scatter_block_segment_size", atol(s));
        }
        strcpy(counts, o.counts);
        for (char *np_, *n = strtok_r(counts, ",", &np_); n; n = strtok_r(NULL, ",", &np_)) {
            c->count = atoi(n);
            strcpy(tl, o.types);
            for (char *tp, *tn = strtok_r(tl, ",", &tp); tn; tn = strtok_r(NULL, ",", &tp)) {
                c->t = find_type(tn);
                for (int it = 0; it < o.iters; ++it)
                    for (c->nonblocking = 0; c->nonblocking < o.forms; ++c->nonblocking)
                        for (c->in_place = 0; c->in_place < 2; ++c->in_place) {
                            c->depth = c->nonblocking ? o.depth : 1;
                            strcpy(cl, o.colls);
                            for (char *cp, *cn = strtok_r(cl, ",", &cp); cn; cn = strtok_r(NULL, ",", &cp)) {
                                c->call += 8;
                                if (!strcmp(cn, "allgather")) {
                                    long long before =
                                        c->check_counters ? adapt2_counter("coll_adapt2_allgather_calls") : 0;
                                    bad += run_allgather(c);
                                    if (c->check_counters)
                                        expect_calls("coll_adapt2_allgather_calls", before, calls_expected(c, 1));
                                    c->ran_ag += calls_expected(c, 1);
                                    c->blocking_ag += !c->nonblocking && c->count > 0;
                                    ++*cases;
                                    continue;
                                }
                                if (strcmp(cn, "rsb")) fail("unknown collective %s", cn);
                                strcpy(ol, o.ops);
                                for (char *op_, *on = strtok_r(ol, ",", &op_); on; on = strtok_r(NULL, ",", &op_)) {
                                    c->op = find_op(on);
                                    /* user ops on doubles or holes are not what these ops take */
                                    if (c->op->op != MPI_SUM && c->op->op != MPI_MAX && strcmp(c->t->name, "int"))
                                        continue;
                                    c->call += 8;
                                    long long before = c->check_counters
                                                           ? adapt2_counter("coll_adapt2_reduce_scatter_block_calls")
                                                           : 0;
                                    bad += run_reduce_scatter(c);
                                    if (c->check_counters)
                                        expect_calls("coll_adapt2_reduce_scatter_block_calls", before,
                                                     calls_expected(c, 1));
                                    c->ran_rsb += calls_expected(c, 1);
                                    c->blocking_rsb += !c->nonblocking && c->count > 0 && c->op->commutative;
                                    ++*cases;
                                }
                            }
                        }
            }
        }
    }
    return bad;
}

typedef struct {
    thread_worker_t t; /* first: the thread harness's part (mpi_check.h) */
    case_t c;
    long long bad, cases;
} worker_t;

static void *work(void *arg)
{
    worker_t *w = arg;
    w->c.comm = w->t.comm;
    w->c.call = 100000 * (w->t.id + 1);
    w->bad = sweep(&w->c, &w->cases);
    return NULL;
}

/* o.threads threads, each sweeping on its own communicator; the counters
 * must have grown by what all of them expected. */
static long long sweep_on_threads(const case_t *base, long long *cases)
{
    worker_t w[16];
    long long bad = 0, ag = 0, rsb = 0;
    long long ag0 = adapt2_counter("coll_adapt2_allgather_calls");
    long long rsb0 = adapt2_counter("coll_adapt2_reduce_scatter_block_calls");
    if (strcmp(o.segsizes, "keep")) {
        adapt2_set_long("coll_adapt2_allgather_segment_size", atol(o.segsizes));
        adapt2_set_long("coll_adapt2_reduce_scatter_block_segment_size", atol(o.segsizes));
    }
    for (int i = 0; i < o.threads; ++i) {
        w[i].c = *base;
        w[i].c.check_counters = 0;
        w[i].bad = w[i].cases = 0;
    }
    threads_init(w, o.threads, sizeof w[0]);
    threads_run(w, o.threads, sizeof w[0], work);
    threads_free(w, o.threads, sizeof w[0]);
    for (int i = 0; i < o.threads; ++i)
        bad += w[i].bad, *cases += w[i].cases, ag += w[i].c.ran_ag, rsb += w[i].c.ran_rsb;
    expect_calls("coll_adapt2_allgather_calls", ag0, ag);
    expect_calls("coll_adapt2_reduce_scatter_block_calls", rsb0, rsb);
    return bad;
}

int main(int argc, char **argv)
{
    parse(argc, argv, &o);
    int provided;
    MPI_Init_thread(&argc, &argv, o.threads > 1 ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
    case_t c = {0};
    c.comm = MPI_COMM_WORLD;
    c.check_counters = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.size);
    make_types();
    ops[0] = (op_t){"sum", MPI_SUM, 1};
    ops[1] = (op_t){"max", MPI_MAX, 1};
    ops[2] = (op_t){"usum", MPI_OP_NULL, 1};
    ops[3] = (op_t){"first", MPI_OP_NULL, 0};
    ops[4] = (op_t){"affine", MPI_OP_NULL, 0};
    MPI_Op_create(usum, 1, &ops[2].op);
    MPI_Op_create(first, 0, &ops[3].op);
    MPI_Op_create(affine, 0, &ops[4].op);
    if (o.threads > 1 && provided < MPI_THREAD_MULTIPLE) fail("--threads needs MPI_THREAD_MULTIPLE");
    if (adapt2_counter("coll_adapt2_allgather_calls") < 0) fail("adapt2 is not loaded");
    adapt2_counter("coll_adapt2_reduce_scatter_block_calls");
    long long cases = 0, direct0 = adapt2_counter("coll_adapt2_direct_calls");
    long long bad = o.threads > 1 ? sweep_on_threads(&c, &cases) : sweep(&c, &cases);
    const long long direct = adapt2_counter("coll_adapt2_direct_calls") - direct0; /* before any check's calls */
    long long total = total_errors(bad, MPI_COMM_WORLD);
    if (total) fail("%lld wrong elements over all ranks", total);
    if (o.threads == 1) {
        print_per_rank_range("ring_check", "direct calls", direct, MPI_COMM_WORLD);
        if (c.rank == 0) printf("ring_check: %lld blocking allgathers per rank\n", c.blocking_ag);
        if (c.rank == 0)
            printf("ring_check: %lld blocking reduce_scatter_blocks of commutative ops per rank\n", c.blocking_rsb);
    }
    if (c.rank == 0) printf("ring_check: np %d, %d thread(s), %lld cases: ok\n", c.size, o.threads, cases);
    MPI_Op_free(&ops[2].op);
    MPI_Op_free(&ops[3].op);
    MPI_Op_free(&ops[4].op);
    MPI_Type_free(&types[2].type);
    MPI_Finalize();
    return 0;
}
