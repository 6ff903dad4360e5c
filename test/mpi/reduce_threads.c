/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * MPI_THREAD_MULTIPLE: several threads per rank, each running reductions on
 * its own communicator at the same time: reduce, ireduce, allreduce and
 * iallreduce in turn, every root, mixed types and ops (the non-commutative
 * user-defined matrix product included), counts across segment sizes. Every
 * element is checked where the result is defined, and adapt2's counters must
 * show it ran every call.
 *   reduce_threads [threads (4)] [iterations per thread (40)]
 */
#include <stdio.h>
#include <stdlib.h>

#include "reduce_common.h"

static const struct {
    const char *type, *op;
} cases[] = {
    {"int", "sum"},   {"double", "sum"}, {"mat2i", "matmul"},  {"unsigned", "modsum"},     {"2int", "maxloc"},
    {"float", "max"}, {"llong", "bxor"}, {"dcomplex", "prod"}, {"contig:mat2i", "matmul"},
};
#define NCASES ((int) (sizeof cases / sizeof cases[0]))
static rc_layout_t layouts[NCASES];
static const int counts[] = {1, 7, 4095, 4096, 4097, 60000};

typedef struct {
    thread_worker_t t; /* first: the thread harness's part (mpi_check.h) */
    int iterations;
    long long errors, calls[2];
} worker_t;

static void *work(void *arg)
{
    worker_t *w = arg;
    int rank, size;
    MPI_Comm_rank(w->t.comm, &rank);
    MPI_Comm_size(w->t.comm, &size);
    for (int it = 0; it < w->iterations; ++it) {
        int k = (it * 7 + w->t.id * 3) % NCASES, kind = (it + w->t.id) % 4;
        rc_call_t c = {0};
        c.l = &layouts[k];
        c.op = rc_find_op(cases[k].op);
        c.comm = w->t.comm;
        c.count = counts[(it + 2 * w->t.id) % 6];
        c.root = (it / 4 + w->t.id) % size;
        c.all = kind >= 2;
        c.inplace = it % 5 == 4;
        c.seed = (uint64_t) w->t.id * 100000 + (uint64_t) it;
        rc_call_prepare(&c);
        rc_call_start(&c, kind % 2);
        if (kind % 2) MPI_Wait(&c.req, MPI_STATUS_IGNORE);
        ++w->calls[c.all];
        char what[200];
        snprintf(what, sizeof what, "rank %d thread %d iteration %d: %s%s %s %s count %d root %d%s", rank, w->t.id, it,
                 kind % 2 ? "i" : "", c.all ? "allreduce" : "reduce", c.l->name, c.op->name, c.count, c.root,
                 c.inplace ? " in place" : "");
        w->errors += rc_call_check(&c, what);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int rank, size;
    mpi_start(&argc, &argv, 1, &rank, &size);
    int nthreads = int_arg(argc, argv, 1, 4), iterations = int_arg(argc, argv, 2, 40);
    rc_init();
    for (int i = 0; i < NCASES; ++i) { /* before the threads: the user ops look layouts up */
        if (rc_layout_create(cases[i].type, &layouts[i])) fail("unknown type %s", cases[i].type);
    }
    worker_t *w = calloc(nthreads, sizeof *w);
    for (int t = 0; t < nthreads; ++t) w[t].iterations = iterations;
    threads_init(w, nthreads, sizeof *w);
    long long r0 = adapt2_counter("coll_adapt2_reduce_calls");
    long long a0 = adapt2_counter("coll_adapt2_allreduce_calls");
    long long f0 = adapt2_counter("coll_adapt2_fallbacks");
    if (r0 < 0 || a0 < 0 || f0 < 0) fail("adapt2's reduce/allreduce counters are missing");
    threads_run(w, nthreads, sizeof *w, work);
    long long errors = 0, calls[2] = {0, 0};
    for (int t = 0; t < nthreads; ++t) {
        errors += w[t].errors;
        calls[0] += w[t].calls[0];
        calls[1] += w[t].calls[1];
    }
    long long dr = adapt2_counter("coll_adapt2_reduce_calls") - r0;
    long long da = adapt2_counter("coll_adapt2_allreduce_calls") - a0;
    long long df = adapt2_counter("coll_adapt2_fallbacks") - f0;
    if (dr != calls[0] || da != calls[1] || df != 0) {
        fprintf(stderr, "rank %d: adapt2 ran %lld of %lld reduce and %lld of %lld allreduce calls, %lld fell back\n",
                rank, dr, calls[0], da, calls[1], df);
        ++errors;
    }
    errors += rc_user_fn_errors();
    threads_free(w, nthreads, sizeof *w);
    long long total = total_errors(errors, MPI_COMM_WORLD);
    if (rank == 0)
        printf("reduce_threads: np %d, %d threads, %lld calls per rank: %s\n", size, nthreads, calls[0] + calls[1],
               total ? "FAILED" : "ok");
    for (int i = 0; i < NCASES; ++i) rc_layout_free(&layouts[i]);
    free(w);
    rc_finalize();
    MPI_Finalize();
    return total ? 1 : 0;
}
