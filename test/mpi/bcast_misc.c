/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * Corner cases of the MPI interface, every byte checked:
 *  - an intercommunicator broadcast (adapt2 declines the intercommunicator,
 *    the script checks the verbose line; Open MPI's inter module runs it);
 *  - a derived datatype freed right after MPI_Ibcast, before MPI_Wait;
 *  - a communicator freed while an MPI_Ibcast on it is outstanding;
 *  - MPI_Test polling instead of MPI_Wait.
 */
#include <stdio.h>
#include <stdlib.h>

#include "mpi_check.h"

static int rank, size;
static long long errors;

static void check_bytes(const unsigned char *buf, size_t n, int call, int root, const char *what)
{
    for (size_t k = 0; k < n; ++k) {
        if (buf[k] != pattern_byte(call, root, k)) {
            if (errors++ < 3) fprintf(stderr, "rank %d: %s: byte %zu wrong\n", rank, what, k);
            return;
        }
    }
}

static void fill(unsigned char *buf, size_t n, int call, int root, int is_root)
{
    for (size_t k = 0; k < n; ++k) buf[k] = is_root ? pattern_byte(call, root, k) : 0;
}

/* adapt2 declines intercommunicators (component.sh checks the verbose line);
 * Open MPI's inter module runs the call, and its broadcast inside the
 * receiving group's local intracommunicator may well be adapt2's. */
static void intercomm_bcast(void)
{
    MPI_Comm half, inter;
    int color = rank % 2;
    MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - color, 99, &inter);
    unsigned char buf[1000];
    /* group 0's rank 0 broadcasts to all of group 1 */
    int hrank;
    MPI_Comm_rank(half, &hrank);
    int root = color == 0 ? (hrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    fill(buf, sizeof buf, 1, 0, root == MPI_ROOT);
    MPI_Bcast(buf, sizeof buf, MPI_BYTE, root, inter);
    if (color == 1 || root == MPI_ROOT) check_bytes(buf, sizeof buf, 1, 0, "intercomm");
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
}

static void datatype_freed_before_wait(void)
{
    MPI_Datatype vec;
    MPI_Type_vector(1000, 1, 2, MPI_BYTE, &vec); /* every other byte */
    MPI_Type_commit(&vec);
    unsigned char *buf = calloc(2000, 1), packed[1000];
    int root = size - 1;
    for (int k = 0; k < 1000; ++k) buf[2 * k] = rank == root ? pattern_byte(2, root, k) : 0;
    MPI_Request req;
    MPI_Ibcast(buf, 1, vec, root, MPI_COMM_WORLD, &req);
    MPI_Type_free(&vec);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    for (int k = 0; k < 1000; ++k) packed[k] = buf[2 * k];
    check_bytes(packed, sizeof packed, 2, root, "type freed before wait");
    free(buf);
}

static void comm_freed_before_wait(void)
{
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    size_t n = 3 << 20;
    unsigned char *buf = malloc(n);
    fill(buf, n, 3, 1 % size, rank == 1 % size);
    MPI_Request req;
    MPI_Ibcast(buf, (int) n, MPI_BYTE, 1 % size, dup, &req);
    MPI_Comm_free(&dup);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    check_bytes(buf, n, 3, 1 % size, "comm freed before wait");
    free(buf);
}

static void test_polling(void)
{
    size_t n = 5 << 20;
    unsigned char *buf = malloc(n);
    fill(buf, n, 4, 0, rank == 0);
    MPI_Request req;
    int done = 0;
    MPI_Ibcast(buf, (int) n, MPI_BYTE, 0, MPI_COMM_WORLD, &req);
    while (!done) MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    check_bytes(buf, n, 4, 0, "MPI_Test polling");
    free(buf);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2 || size % 2) fail("run with an even number of ranks");
    intercomm_bcast();
    long long after_inter = adapt2_counter("coll_adapt2_bcast_calls");
    datatype_freed_before_wait();
    comm_freed_before_wait();
    test_polling();
    if (adapt2_counter("coll_adapt2_bcast_calls") - after_inter != 3) {
        fprintf(stderr, "rank %d: adapt2 did not run the 3 intracommunicator calls\n", rank);
        ++errors;
    }
    long long total = total_errors(errors, MPI_COMM_WORLD);
    if (rank == 0) printf("bcast_misc: np %d: %s\n", size, total ? "FAILED" : "ok");
    MPI_Finalize();
    return total ? 1 : 0;
}
