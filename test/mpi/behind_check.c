/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * Sends left behind (coll_adapt2_direct_detach_max, c/coll_adapt2_behind.c):
 * blocking broadcasts and reduces of 257 B-16 KiB return before their peers
 * have taken the data. Here one rank (rank 1) is late: it sleeps before its
 * first call, so the root of every broadcast, and the other leaves of every
 * reduce, run ahead of it by up to the send-behind ring's slots and then
 * wait for room. Every element of every call is checked on every rank (each
 * call's data differs), and the MPI_T counters must show that calls returned
 * with their sends in flight (detached_calls) and that the ring filled and
 * waited (detach_waits). Then the same on a duplicate communicator that the
 * ranks free at once, with sends still in flight: its end must wait for them.
 *   behind_check [calls (200)] [late_ms (100)] [bytes (2048): a multiple of 4, up to 16 KiB]
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "mpi_check.h"

#define MAX_INTS 4096 /* 16 KiB: coll_adapt2_direct_detach_max */

static int rank, size, ints; /* each call's message: above detach_min_message, up to direct_detach_max */

static int value(int call, int who, int k)
{
    return call * 7919 + who * 131 + k;
}

/* `calls` broadcasts from rank 0, each checked on arrival. */
static long long bcasts(MPI_Comm comm, int first, int calls)
{
    long long errors = 0;
    int buf[MAX_INTS];
    for (int c = first; c < first + calls; ++c) {
        for (int k = 0; k < ints; ++k) buf[k] = rank == 0 ? value(c, 0, k) : -1;
        MPI_Bcast(buf, ints, MPI_INT, 0, comm);
        for (int k = 0; k < ints; ++k) {
            if (buf[k] != value(c, 0, k) && errors++ < 5) {
                printf("FAIL [rank %d]: bcast %d element %d is %d, expected %d\n", rank, c, k, buf[k], value(c, 0, k));
            }
        }
    }
    return errors;
}

/* `calls` sums to rank 0, checked there. */
static long long reduces(MPI_Comm comm, int first, int calls)
{
    long long errors = 0;
    int in[MAX_INTS], out[MAX_INTS];
    for (int c = first; c < first + calls; ++c) {
        for (int k = 0; k < ints; ++k) in[k] = value(c, rank, k);
        MPI_Reduce(in, out, ints, MPI_INT, MPI_SUM, 0, comm);
        for (int k = 0; rank == 0 && k < ints; ++k) {
            long long want = 0;
            for (int r = 0; r < size; ++r) want += value(c, r, k);
            if (out[k] != (int) want && errors++ < 5) {
                printf("FAIL [rank 0]: reduce %d element %d is %d, expected %d\n", c, k, out[k], (int) want);
            }
        }
    }
    return errors;
}

int main(int argc, char **argv)
{
    mpi_start(&argc, &argv, 0, &rank, &size);
    const int calls = int_arg(argc, argv, 1, 200), late_ms = int_arg(argc, argv, 2, 100);
    ints = int_arg(argc, argv, 3, 2048) / 4;
    if (ints < 65 || ints > MAX_INTS) fail("bytes: 260 to %d", 4 * MAX_INTS);
    if (size < 3) fail("needs at least 3 ranks");
    const long long detached0 = adapt2_counter("coll_adapt2_detached_calls");
    const long long waits0 = adapt2_counter("coll_adapt2_detach_waits");
    const long long direct0 = adapt2_counter("coll_adapt2_direct_calls");
    long long errors = 0;
    if (rank == 1) usleep(late_ms * 1000);
    errors += bcasts(MPI_COMM_WORLD, 0, calls);
    if (rank == 1) usleep(late_ms * 1000);
    errors += reduces(MPI_COMM_WORLD, calls, calls);
    /* a communicator freed while its sends are left behind */
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    if (rank == 1) usleep(late_ms * 1000);
    errors += bcasts(dup, 2 * calls, 20);
    MPI_Comm_free(&dup);
    const long long direct = adapt2_counter("coll_adapt2_direct_calls") - direct0;
    const long long detached = adapt2_counter("coll_adapt2_detached_calls") - detached0;
    const long long waits = adapt2_counter("coll_adapt2_detach_waits") - waits0;
    long long wrong = total_errors(errors, MPI_COMM_WORLD), all_detached, all_waits;
    MPI_Allreduce(&detached, &all_detached, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&waits, &all_waits, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (wrong) fail("%lld wrong elements", wrong);
    if (direct != 2 * calls + 20) fail("coll_adapt2_direct_calls grew by %lld, expected %d", direct, 2 * calls + 20);
    if (rank == 0 && detached == 0) fail("no broadcast root returned with its sends in flight (detached_calls)");
    if (all_waits == 0) fail("no rank waited for a slot of the send-behind ring (detach_waits), %d calls", calls);
    if (rank == 0) {
        printf(
            "behind_check: np %d, %d calls each way of %d bytes: ok (%lld calls returned with sends in flight, "
            "%lld waited for a slot, over all ranks)\n",
            size, calls, 4 * ints, all_detached, all_waits);
    }
    MPI_Finalize();
    return 0;
}
