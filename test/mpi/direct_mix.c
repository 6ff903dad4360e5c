/*
 * The direct path among everything else on one communicator: small blocking
 * broadcasts (the direct path, no request) interleaved with outstanding
 * MPI_Ibcast calls (the engine's, with reserved tags), with blocking
 * broadcasts that may detach (still sending after they return), on
 * MPI_COMM_WORLD and on a duplicate, roots rotating. Every byte of every call
 * is checked on every rank, and coll_adapt2_direct_calls must have grown by
 * exactly the number of small blocking broadcasts when the script says the
 * direct path is on (argument 1: 1 on, 0 off).
 *   direct_mix [direct expected (1)] [rounds (40)]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"

#define SMALL 24    /* ints: 96 bytes, below coll_adapt2_detach_min_message */
#define MEDIUM 1000 /* ints: may detach */
#define LARGE 40000 /* ints: segmented */

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
                fprintf(stderr, "rank %d: %s call %d (root %d): element %d is %d\n", rank, what, call, root, k,
                        buf[k]);
            }
            return;
        }
    }
}

/* One round on `comm`: the calls every rank makes in the same order. */
static int round_on(MPI_Comm comm, int call, int *large, int *medium, int *small_a, int *small_b, int *ismall)
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
    fill(small_b, SMALL, call + 4, r2);
    MPI_Bcast(small_b, SMALL, MPI_INT, r2, comm); /* direct, right behind it */
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    check(large, LARGE, call, r0, "Ibcast large");
    check(small_a, SMALL, call + 1, r1, "Bcast small");
    check(ismall, SMALL, call + 2, r2, "Ibcast small");
    check(medium, MEDIUM, call + 3, r0, "Bcast medium");
    check(small_b, SMALL, call + 4, r2, "Bcast small after medium");
    return 2; /* small blocking broadcasts */
}

int main(int argc, char **argv)
{
    mpi_start(&argc, &argv, 0, &rank, &size);
    int direct_expected = int_arg(argc, argv, 1, 1), rounds = int_arg(argc, argv, 2, 40);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    int *large = malloc(LARGE * sizeof(int)), *medium = malloc(MEDIUM * sizeof(int));
    int small[3][SMALL];
    adapt2_counter("coll_adapt2_direct_calls"); /* the baseline, after the dup */
    long long small_calls = 0;
    for (int i = 0; i < rounds; ++i) {
        small_calls += round_on(i % 2 ? dup : MPI_COMM_WORLD, 5 * i, large, medium, small[0], small[1], small[2]);
    }
    long long direct = adapt2_counter("coll_adapt2_direct_calls");
    long long wrong = total_errors(errors, MPI_COMM_WORLD);
    if (wrong) fail("%lld wrong results", wrong);
    long long want = direct_expected ? small_calls : 0;
    if (direct != want) fail("coll_adapt2_direct_calls grew by %lld, expected %lld", direct, want);
    if (0 == rank) printf("direct_mix: np %d, %d rounds, %lld direct calls per rank: ok\n", size, rounds, direct);
    free(large);
    free(medium);
    MPI_Comm_free(&dup);
    MPI_Finalize();
    return 0;
}
