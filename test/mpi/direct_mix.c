/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * The direct path among everything else on one communicator: small blocking
 * broadcasts (the direct path, no request) interleaved with outstanding
 * MPI_Ibcast calls (the engine's, with reserved tags), with blocking
 * broadcasts that may detach (still sending after they return: through the
 * engine, and on the direct path with their sends left behind or watched), on
 * MPI_COMM_WORLD and on a duplicate, roots rotating. Every byte of every call
 * is checked on every rank. Small blocking allreduces (direct where the
 * plan is recursive doubling) run among outstanding MPI_Iallreduce calls.
 * coll_adapt2_direct_calls must have grown by exactly the number of small
 * left-behind and watched blocking calls the script says go direct (argument 1: 0 none, 1 the
 * broadcasts, 2 the broadcasts and the allreduces).
 *   direct_mix [direct expected (1)] [rounds (40)]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"

#define SMALL 24     /* ints: 96 bytes, below coll_adapt2_detach_min_message */
#define BEHIND 500   /* ints: 2000 bytes, may detach: direct, sends left behind (coll_adapt2_direct_detach_max) */
#define WATCHED 4000 /* ints: 16000 bytes, may detach: direct, sends watched (coll_adapt2_direct_watch_max) */
#define MEDIUM 20000 /* ints: 80000 bytes, may detach: through the engine (above direct_watch_max) */
#define LARGE 40000  /* ints: segmented */

static int rank, size;
static long long errors;

static void fill(int *buf, int n, int call, int root)
{
    for (int k = 0; k < n; ++k) buf[k] = rank == root ? call * 100003 + root * 7919 + k : -1;
}

static void check(const int *buf, int n, int call, int root, const char *what)
{
    for (int k = 0; k < n; ++k) {
        if (buf[k] != call * 100003 + root * 7919 + k) {
            if (errors++ < 5) {
                fprintf(stderr, "rank %d: %s call %d (root %d): element %d is %d\n", rank, what, call, root, k, buf[k]);
            }
            return;
        }
    }
}

/* One round on `comm`: the calls every rank makes in the same order. */
/* value of rank r's element k of allreduce `call` */
static int term(int r, int call, int k)
{
    return (r + 1) * (call % 13 + 1) + k;
}

/* Small blocking allreduces (MPI_SUM in place and not, MPI_MAX) while an
 * Iallreduce is in flight; each result checked. Returns the blocking calls. */
static int allreduces_on(MPI_Comm comm, int call)
{
    int in[SMALL], out[SMALL], inplace[SMALL], ibuf[SMALL], iout[SMALL];
    MPI_Request req;
    for (int k = 0; k < SMALL; ++k) ibuf[k] = term(rank, call + 1, k);
    MPI_Iallreduce(ibuf, iout, SMALL, MPI_INT, MPI_SUM, comm, &req);
    for (int k = 0; k < SMALL; ++k) in[k] = inplace[k] = term(rank, call, k);
    MPI_Allreduce(in, out, SMALL, MPI_INT, MPI_SUM, comm);
    MPI_Allreduce(MPI_IN_PLACE, inplace, SMALL, MPI_INT, MPI_MAX, comm);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    for (int k = 0; k < SMALL; ++k) {
        int sum = 0, isum = 0;
        for (int r = 0; r < size; ++r) {
            sum += term(r, call, k);
            isum += term(r, call + 1, k);
        }
        if ((out[k] != sum || inplace[k] != term(size - 1, call, k) || iout[k] != isum) && errors++ < 5) {
            fprintf(stderr,
                    "rank %d: allreduce call %d element %d: sum %d (want %d), max %d (want %d), "
                    "isum %d (want %d)\n",
                    rank, call, k, out[k], sum, inplace[k], term(size - 1, call, k), iout[k], isum);
        }
    }
    return 2;
}

static int round_on(MPI_Comm comm, int call, int *large, int *medium, int *watched, int *behind, int *small_a,
                    int *small_b, int *ismall)
{
    MPI_Request req[2];
    int r0 = call % size, r1 = (call + 1) % size, r2 = (call + 2) % size;
    fill(large, LARGE, call, r0);
    MPI_Ibcast(large, LARGE, MPI_INT, r0, comm, &req[0]);
    fill(small_a, SMALL, call + 1, r1);
    MPI_Bcast(small_a, SMALL, MPI_INT, r1, comm); /* direct, while the Ibcast is in flight */
    fill(ismall, SMALL, call + 2, r2);
    MPI_Ibcast(ismall, SMALL, MPI_INT, r2, comm, &req[1]);
    fill(medium, MEDIUM, call + 3, r0);
    MPI_Bcast(medium, MEDIUM, MPI_INT, r0, comm); /* may return before its sends are over */
    fill(watched, WATCHED, call + 6, r2);
    MPI_Bcast(watched, WATCHED, MPI_INT, r2, comm); /* direct, from the message while the peers keep up */
    fill(behind, BEHIND, call + 5, r1);
    MPI_Bcast(behind, BEHIND, MPI_INT, r1, comm); /* direct; returns before its sends are over */
    fill(small_b, SMALL, call + 4, r2);
    MPI_Bcast(small_b, SMALL, MPI_INT, r2, comm); /* direct, right behind them */
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    check(large, LARGE, call, r0, "Ibcast large");
    check(small_a, SMALL, call + 1, r1, "Bcast small");
    check(ismall, SMALL, call + 2, r2, "Ibcast small");
    check(medium, MEDIUM, call + 3, r0, "Bcast medium");
    check(watched, WATCHED, call + 6, r2, "Bcast with its sends watched");
    check(behind, BEHIND, call + 5, r1, "Bcast with its sends left behind");
    check(small_b, SMALL, call + 4, r2, "Bcast small after medium");
    return 4; /* direct blocking broadcasts */
}

int main(int argc, char **argv)
{
    mpi_start(&argc, &argv, 0, &rank, &size);
    int direct_expected = int_arg(argc, argv, 1, 1), rounds = int_arg(argc, argv, 2, 40);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    int *large = malloc(LARGE * sizeof(int)), *medium = malloc(MEDIUM * sizeof(int)),
        *behind = malloc(BEHIND * sizeof(int)), *watched = malloc(WATCHED * sizeof(int));
    int small[3][SMALL];
    adapt2_counter("coll_adapt2_direct_calls"); /* the baseline, after the dup */
    long long small_bcasts = 0, small_allreduces = 0;
    for (int i = 0; i < rounds; ++i) {
        MPI_Comm comm = i % 2 ? dup : MPI_COMM_WORLD;
        small_bcasts += round_on(comm, 7 * i, large, medium, watched, behind, small[0], small[1], small[2]);
        small_allreduces += allreduces_on(comm, 7 * i);
    }
    long long direct = adapt2_counter("coll_adapt2_direct_calls");
    long long wrong = total_errors(errors, MPI_COMM_WORLD);
    if (wrong) fail("%lld wrong results", wrong);
    long long want = (direct_expected >= 1 ? small_bcasts : 0) + (direct_expected >= 2 ? small_allreduces : 0);
    if (direct != want) fail("coll_adapt2_direct_calls grew by %lld, expected %lld", direct, want);
    if (0 == rank) printf("direct_mix: np %d, %d rounds, %lld direct calls per rank: ok\n", size, rounds, direct);
    free(large);
    free(behind);
    free(watched);
    free(medium);
    MPI_Comm_free(&dup);
    MPI_Finalize();
    return 0;
}
