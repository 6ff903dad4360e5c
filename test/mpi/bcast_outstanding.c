/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * Many outstanding MPI_Ibcast calls at once on several communicators (dup,
 * split and reversed-order), waited in a random order that differs per rank.
 * Checks every byte and that adapt2 handled every call.
 *   bcast_outstanding [calls per round (16)] [rounds (5)]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"

#define NCOMMS 3

int main(int argc, char **argv)
{
    int rank, size;
    mpi_start(&argc, &argv, 0, &rank, &size);
    int per_round = int_arg(argc, argv, 1, 16), rounds = int_arg(argc, argv, 2, 5);
    long long handled0 = adapt2_counter("coll_adapt2_bcast_calls");

    MPI_Comm comms[NCOMMS];
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[0]);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &comms[1]); /* ranks reversed */
    MPI_Comm_split(MPI_COMM_WORLD, 0, (rank * 7) % size, &comms[2]);

    /* sizes straddle the default segment size and go up to 1 MiB */
    const size_t sizes[] = {4, 65536, 65540, 200000, 1 << 20, 12};
    const int nsizes = sizeof sizes / sizeof sizes[0];
    unsigned char **bufs = malloc(per_round * sizeof *bufs);
    MPI_Request *reqs = malloc(per_round * sizeof *reqs);
    int *order = malloc(per_round * sizeof *order);
    long long errors = 0;
    int calls = 0;
    srand(1234 + 77 * rank);

    for (int round = 0; round < rounds; ++round) {
        for (int i = 0; i < per_round; ++i) {
            MPI_Comm comm = comms[i % NCOMMS];
            int csize, crank;
            MPI_Comm_size(comm, &csize);
            MPI_Comm_rank(comm, &crank);
            size_t n = sizes[(i + round) % nsizes];
            int root = (i * 5 + round) % csize;
            bufs[i] = malloc(n);
            for (size_t k = 0; k < n; ++k) bufs[i][k] = crank == root ? pattern_byte(i, round, k) : 0xA5;
            MPI_Ibcast(bufs[i], (int) n, MPI_BYTE, root, comm, &reqs[i]);
            ++calls;
            order[i] = i;
        }
        for (int i = per_round - 1; i > 0; --i) { /* random wait order, per rank */
            int j = rand() % (i + 1), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        for (int w = 0; w < per_round; ++w) {
            int i = order[w];
            size_t n = sizes[(i + round) % nsizes];
            MPI_Wait(&reqs[i], MPI_STATUS_IGNORE);
            for (size_t k = 0; k < n; ++k) {
                if (bufs[i][k] != pattern_byte(i, round, k) && errors++ < 5)
                    fprintf(stderr, "rank %d: round %d call %d byte %zu wrong\n", rank, round, i, k);
            }
            free(bufs[i]);
        }
    }
    long long handled = adapt2_counter("coll_adapt2_bcast_calls") - handled0;
    if (handled != calls) {
        fprintf(stderr, "rank %d: adapt2 handled %lld of %d\n", rank, handled, calls);
        ++errors;
    }
    for (int c = 0; c < NCOMMS; ++c) MPI_Comm_free(&comms[c]);
    long long total = total_errors(errors, MPI_COMM_WORLD);
    if (rank == 0) printf("bcast_outstanding: np %d, %d calls per rank: %s\n", size, calls, total ? "FAILED" : "ok");
    free(bufs);
    free(reqs);
    free(order);
    MPI_Finalize();
    return total ? 1 : 0;
}
