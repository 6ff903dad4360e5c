/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/* The same data described with other datatypes on other ranks, as MPI
 * allows (only the type signatures must match): even ranks pass n MPI_INTs
 * in a row, odd ranks one vector of n ints with a hole after each. Every
 * rank must still run the same algorithm. Broadcast, reduce, allreduce,
 * allgather and reduce_scatter_block, blocking and not; every element on
 * every rank is checked, and no hole is written.
 *   layouts_check [--counts N,...] [--expect adapt2|none]
 * --expect adapt2 (default): every call was adapt2's (its counters grew). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"

#define HOLE (-77)
#define MAX_COUNTS 16

typedef struct {
    int rank, size, strided; /* strided: this rank's buffers have holes */
    long long errors;
} layout_t;

/* This rank's description of n ints, and the memory it takes. */
static MPI_Datatype type_of(const layout_t *l, int n, int *count)
{
    MPI_Datatype t = MPI_INT;
    *count = n;
    if (l->strided && n > 0) {
        MPI_Type_vector(n, 1, 2, MPI_INT, &t);
        MPI_Type_commit(&t);
        *count = 1;
    }
    return t;
}
static size_t ints_of(const layout_t *l, int n)
{
    return (size_t) n * (l->strided ? 2 : 1) + 1;
}
static int *at(const layout_t *l, int *buf, int i)
{
    return buf + (l->strided ? 2 * i : i);
}
static void free_type(MPI_Datatype *t)
{
    if (*t != MPI_INT) MPI_Type_free(t);
}

static int *filled(const layout_t *l, int n, int salt)
{
    size_t m = ints_of(l, n);
    int *b = malloc(m * sizeof(int));
    for (size_t i = 0; i < m; ++i) b[i] = HOLE;
    for (int i = 0; i < n; ++i) *at(l, b, i) = salt;
    return b;
}

static int value(int rank, int i, int call)
{
    return rank * 7 + (i % 1009) + call;
}

/* Element i of buf must be want; every hole must still be a hole. */
static void expect(layout_t *l, const char *what, int n, int *buf, int i, int want)
{
    if (*at(l, buf, i) != want && l->errors++ < 5)
        fprintf(stderr, "rank %d: %s, n %d: element %d is %d, expected %d\n", l->rank, what, n, i, *at(l, buf, i),
                want);
}
static void expect_holes(layout_t *l, const char *what, int n, int *buf)
{
    for (int i = 0; l->strided && i < n; ++i) {
        if (buf[2 * i + 1] != HOLE && l->errors++ < 5)
            fprintf(stderr, "rank %d: %s, n %d: hole after element %d written\n", l->rank, what, n, i);
    }
}

static void wait_if(int blocking, MPI_Request *req)
{
    if (!blocking) MPI_Wait(req, MPI_STATUS_IGNORE);
}

static void bcast(layout_t *l, int n, int root, int blocking, int call)
{
    int count, *b = filled(l, n, -1);
    MPI_Datatype t = type_of(l, n, &count);
    MPI_Request req;
    for (int i = 0; l->rank == root && i < n; ++i) *at(l, b, i) = value(root, i, call);
    if (blocking)
        MPI_Bcast(b, count, t, root, MPI_COMM_WORLD);
    else
        MPI_Ibcast(b, count, t, root, MPI_COMM_WORLD, &req);
    wait_if(blocking, &req);
    for (int i = 0; i < n; ++i) expect(l, "bcast", n, b, i, value(root, i, call));
    expect_holes(l, "bcast", n, b);
    free_type(&t);
    free(b);
}

/* Reduce to `root` (root < 0: allreduce). */
static void reduce(layout_t *l, int n, int root, int blocking, int call)
{
    int count, *in = filled(l, n, 0), *out = filled(l, n, -1);
    MPI_Datatype t = type_of(l, n, &count);
    MPI_Request req;
    for (int i = 0; i < n; ++i) *at(l, in, i) = value(l->rank, i, call);
    if (root < 0 && blocking) MPI_Allreduce(in, out, count, t, MPI_SUM, MPI_COMM_WORLD);
    if (root < 0 && !blocking) MPI_Iallreduce(in, out, count, t, MPI_SUM, MPI_COMM_WORLD, &req);
    if (root >= 0 && blocking) MPI_Reduce(in, out, count, t, MPI_SUM, root, MPI_COMM_WORLD);
    if (root >= 0 && !blocking) MPI_Ireduce(in, out, count, t, MPI_SUM, root, MPI_COMM_WORLD, &req);
    wait_if(blocking, &req);
    const char *what = root < 0 ? "allreduce" : "reduce";
    for (int i = 0; (root < 0 || l->rank == root) && i < n; ++i) {
        int want = 0;
        for (int r = 0; r < l->size; ++r) want += value(r, i, call);
        expect(l, what, n, out, i, want);
    }
    expect_holes(l, what, n, out);
    free_type(&t);
    free(in);
    free(out);
}

/* Allgather of n ints per rank. */
static void allgather(layout_t *l, int n, int blocking, int call)
{
    int scount, rcount, *in = filled(l, n, 0), *out = filled(l, n * l->size, -1);
    MPI_Datatype st = type_of(l, n, &scount), rt;
    MPI_Request req;
    /* a rank's block in a strided receive buffer: n ints of the vector's stride, n*2 apart */
    if (l->strided && n > 0) {
        MPI_Datatype v;
        MPI_Type_vector(n, 1, 2, MPI_INT, &v);
        MPI_Type_create_resized(v, 0, (MPI_Aint) (2 * n * sizeof(int)), &rt);
        MPI_Type_commit(&rt);
        MPI_Type_free(&v);
        rcount = 1;
    } else {
        rt = MPI_INT;
        rcount = n;
    }
    for (int i = 0; i < n; ++i) *at(l, in, i) = value(l->rank, i, call);
    if (blocking)
        MPI_Allgather(in, scount, st, out, rcount, rt, MPI_COMM_WORLD);
    else
        MPI_Iallgather(in, scount, st, out, rcount, rt, MPI_COMM_WORLD, &req);
    wait_if(blocking, &req);
    for (int r = 0; r < l->size; ++r) {
        for (int i = 0; i < n; ++i) expect(l, "allgather", n, out, r * n + i, value(r, i, call));
    }
    expect_holes(l, "allgather", n * l->size, out);
    free_type(&st);
    free_type(&rt);
    free(in);
    free(out);
}

/* Reduce_scatter_block: n ints per rank's block (one datatype describes
 * each block of the input and the output). */
static void reduce_scatter_block(layout_t *l, int n, int blocking, int call)
{
    int count, *in = filled(l, n * l->size, 0), *out = filled(l, n, -1);
    MPI_Datatype t = type_of(l, n, &count);
    MPI_Request req;
    if (l->strided && n > 0) { /* blocks of the input back to back, holes included */
        MPI_Datatype resized;
        MPI_Type_create_resized(t, 0, (MPI_Aint) (2 * n * sizeof(int)), &resized);
        MPI_Type_commit(&resized);
        MPI_Type_free(&t);
        t = resized;
    }
    for (int i = 0; i < n * l->size; ++i) *at(l, in, i) = value(l->rank, i, call);
    if (blocking)
        MPI_Reduce_scatter_block(in, out, count, t, MPI_SUM, MPI_COMM_WORLD);
    else
        MPI_Ireduce_scatter_block(in, out, count, t, MPI_SUM, MPI_COMM_WORLD, &req);
    wait_if(blocking, &req);
    for (int i = 0; i < n; ++i) {
        int want = 0;
        for (int r = 0; r < l->size; ++r) want += value(r, l->rank * n + i, call);
        expect(l, "reduce_scatter_block", n, out, i, want);
    }
    expect_holes(l, "reduce_scatter_block", n, out);
    free_type(&t);
    free(in);
    free(out);
}

int main(int argc, char **argv)
{
    layout_t l = {0};
    int counts[MAX_COUNTS] = {1, 100, 4096, 65536}, ncounts = 4, expect_adapt2 = 1;
    mpi_start(&argc, &argv, 0, &l.rank, &l.size);
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--counts") && i + 1 < argc)
            ncounts = parse_ints(argv[++i], counts, MAX_COUNTS);
        else if (!strcmp(argv[i], "--expect") && i + 1 < argc)
            expect_adapt2 = !strcmp(argv[++i], "adapt2");
        else
            fail("usage: layouts_check [--counts N,...] [--expect adapt2|none]");
    }
    l.strided = l.rank % 2;
    const char *const counters[] = {"coll_adapt2_bcast_calls", "coll_adapt2_reduce_calls",
                                    "coll_adapt2_allreduce_calls", "coll_adapt2_allgather_calls",
                                    "coll_adapt2_reduce_scatter_block_calls"};
    for (int c = 0; c < 5; ++c) adapt2_counter(counters[c]);
    int call = 0;
    for (int k = 0; k < ncounts; ++k) {
        for (int blocking = 1; blocking >= 0; --blocking) {
            const int n = counts[k], root = (k + blocking) % l.size;
            bcast(&l, n, root, blocking, ++call);
            reduce(&l, n, root, blocking, ++call);
            reduce(&l, n, -1, blocking, ++call);
            allgather(&l, n, blocking, ++call);
            reduce_scatter_block(&l, n, blocking, ++call);
        }
    }
    for (int c = 0; expect_adapt2 && c < 5; ++c) {
        long long got = adapt2_counter(counters[c]);
        if (got != 2 * ncounts && l.errors++ < 10)
            fprintf(stderr, "rank %d: %s grew by %lld, expected %d\n", l.rank, counters[c], got, 2 * ncounts);
    }
    long long total = total_errors(l.errors, MPI_COMM_WORLD);
    if (l.rank == 0) printf("layouts_check: np %d, %d calls per rank: %s\n", l.size, call, total ? "FAILED" : "ok");
    MPI_Finalize();
    return total != 0;
}
