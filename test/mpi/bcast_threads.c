/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * MPI_THREAD_MULTIPLE: several threads, each broadcasting on its own
 * communicator at the same time (blocking and non-blocking, every root,
 * sizes across the segment size). Every byte is checked.
 *   bcast_threads [threads (4)] [iterations (40)]
 */
#include <stdio.h>
#include <stdlib.h>

#include "mpi_check.h"

typedef struct {
    thread_worker_t t; /* first: the thread harness's part (mpi_check.h) */
    int iterations;
    long long errors;
    int calls;
} worker_t;

static void *work(void *arg)
{
    worker_t *w = arg;
    int rank, size;
    MPI_Comm_rank(w->t.comm, &rank);
    MPI_Comm_size(w->t.comm, &size);
    const size_t sizes[] = {1, 3000, 65536, 65537, 300000};
    unsigned char *buf = malloc(300000);
    for (int it = 0; it < w->iterations; ++it) {
        size_t n = sizes[(it + w->t.id) % 5];
        int root = (it + w->t.id) % size, call = it * 16 + w->t.id;
        for (size_t k = 0; k < n; ++k) buf[k] = rank == root ? pattern_byte(call, root, k) : 0;
        if (it % 2) {
            MPI_Request req;
            MPI_Ibcast(buf, (int) n, MPI_BYTE, root, w->t.comm, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            MPI_Bcast(buf, (int) n, MPI_BYTE, root, w->t.comm);
        }
        ++w->calls;
        for (size_t k = 0; k < n; ++k) {
            if (buf[k] != pattern_byte(call, root, k) && w->errors++ < 3)
                fprintf(stderr, "rank %d thread %d: iteration %d byte %zu wrong\n", rank, w->t.id, it, k);
        }
    }
    free(buf);
    return NULL;
}

int main(int argc, char **argv)
{
    int rank, size;
    mpi_start(&argc, &argv, 1, &rank, &size);
    int nthreads = int_arg(argc, argv, 1, 4), iterations = int_arg(argc, argv, 2, 40);
    long long handled0 = adapt2_counter("coll_adapt2_bcast_calls");

    worker_t *w = calloc(nthreads, sizeof *w);
    for (int t = 0; t < nthreads; ++t) w[t].iterations = iterations;
    threads_init(w, nthreads, sizeof *w);
    threads_run(w, nthreads, sizeof *w, work);
    threads_free(w, nthreads, sizeof *w);
    long long errors = 0;
    int calls = 0;
    for (int t = 0; t < nthreads; ++t) {
        errors += w[t].errors;
        calls += w[t].calls;
    }
    long long handled = adapt2_counter("coll_adapt2_bcast_calls") - handled0;
    if (handled != calls) {
        fprintf(stderr, "rank %d: adapt2 handled %lld of %d\n", rank, handled, calls);
        ++errors;
    }
    long long total = total_errors(errors, MPI_COMM_WORLD);
    if (rank == 0)
        printf("bcast_threads: np %d, %d threads, %d calls per rank: %s\n", size, nthreads, calls,
               total ? "FAILED" : "ok");
    free(w);
    MPI_Finalize();
    return total ? 1 : 0;
}
