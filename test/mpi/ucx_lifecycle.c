/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * adapt2's UCX transport across communicator lifetimes (run with
 * coll_adapt2_transport=ucx; test/mpi/ucx_transport.sh counts the verbose
 * lines). Communicators come from MPI_Comm_create_group, whose context-id
 * agreement does not use MPI_COMM_WORLD's collectives, so the world never
 * connects and the worker's life follows these communicators alone:
 *  - `keep` (every rank but the last) lives through all rounds;
 *  - each round, `all` (every rank, reversed order) is created, used together
 *    with `keep` (broadcasts outstanding on both: shared endpoints) and
 *    freed. The last rank then has no communicator left: its worker is
 *    destroyed and a new one (a new address) made next round, while the
 *    other ranks keep theirs and must replace their endpoint to it.
 * Every byte and element is checked.
 *   ucx_lifecycle [rounds (3)]
 */
#include <stdio.h>
#include <stdlib.h>

#include "mpi_check.h"

static int rank, size;
static long long errors;

static void fill(unsigned char *buf, size_t n, int call, int root, int is_root)
{
    for (size_t k = 0; k < n; ++k) buf[k] = is_root ? pattern_byte(call, root, k) : 0;
}

static void check_bytes(const unsigned char *buf, size_t n, int call, int root, const char *what)
{
    for (size_t k = 0; k < n; ++k) {
        if (buf[k] != pattern_byte(call, root, k)) {
            if (errors++ < 3) fprintf(stderr, "rank %d: %s: byte %zu wrong\n", rank, what, k);
            return;
        }
    }
}

static MPI_Comm create_comm(int members, int reversed, int tag)
{
    MPI_Group world, group;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int *ranks = malloc(sizeof(int) * (size_t) members);
    for (int k = 0; k < members; ++k) ranks[k] = reversed ? members - 1 - k : k;
    MPI_Group_incl(world, members, ranks, &group);
    MPI_Comm comm = MPI_COMM_NULL;
    if (rank < members) MPI_Comm_create_group(MPI_COMM_WORLD, group, tag, &comm);
    MPI_Group_free(&group);
    MPI_Group_free(&world);
    free(ranks);
    return comm;
}

/* An ibcast on each communicator at once, then an allreduce on `all`. */
static void round_trip(MPI_Comm all, MPI_Comm keep, int round)
{
    size_t big = 1 << 20, small = 65536;
    unsigned char *a = malloc(big), *k = malloc(small);
    int all_rank, all_size, root = round % size;
    MPI_Comm_rank(all, &all_rank);
    MPI_Comm_size(all, &all_size);
    MPI_Request reqs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    fill(a, big, round, root, all_rank == root);
    MPI_Ibcast(a, (int) big, MPI_BYTE, root, all, &reqs[0]);
    if (keep != MPI_COMM_NULL) {
        fill(k, small, round + 100, 0, rank == 0);
        MPI_Ibcast(k, (int) small, MPI_BYTE, 0, keep, &reqs[1]);
    }
    MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    check_bytes(a, big, round, root, "bcast on all");
    if (keep != MPI_COMM_NULL) check_bytes(k, small, round + 100, 0, "bcast on keep");
    int mine[1000], sum[1000];
    for (int i = 0; i < 1000; ++i) mine[i] = all_rank * 1000 + i;
    MPI_Allreduce(mine, sum, 1000, MPI_INT, MPI_SUM, all);
    for (int i = 0; i < 1000; ++i) {
        int want = 1000 * all_size * (all_size - 1) / 2 + all_size * i;
        if (sum[i] != want && errors++ < 3) fprintf(stderr, "rank %d: allreduce [%d] wrong\n", rank, i);
    }
    free(a);
    free(k);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = argc > 1 ? atoi(argv[1]) : 3;
    if (size < 2) fail("needs 2 ranks or more");
    MPI_Comm keep = create_comm(size - 1, 0, 1);
    for (int round = 0; round < rounds; ++round) {
        MPI_Comm all = create_comm(size, 1, 2 + round);
        round_trip(all, keep, round);
        MPI_Comm_free(&all);
        MPI_Barrier(MPI_COMM_WORLD); /* not adapt2's: the world stays unconnected */
    }
    if (keep != MPI_COMM_NULL) MPI_Comm_free(&keep);
    /* MPI_Gather is not adapt2's either: rank 0 judges for all */
    long long *each = malloc(sizeof(long long) * (size_t) size), total = 0;
    MPI_Gather(&errors, 1, MPI_LONG_LONG, each, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    for (int r = 0; rank == 0 && r < size; ++r) total += each[r];
    free(each);
    if (total) fail("%lld errors", total);
    if (rank == 0) printf("ucx_lifecycle: np %d, %d rounds: ok\n", size, rounds);
    MPI_Finalize();
    return 0;
}
