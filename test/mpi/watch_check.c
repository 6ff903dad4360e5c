/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * A blocking broadcast root that watches (engine/late_peers.h): from
 * coll_adapt2_detach_watch_min_bytes to coll_adapt2_detach_await_min_bytes
 * it sends from the user's buffer and waits while its children are in step,
 * copies at once (and returns) from the call after a child came late, while
 * they lag behind, and watches again after 8 calls in step.
 *
 * Root 0, the last rank is the late one. Four phases; every element of every
 * call is checked on every rank (each call's data differs), and the root's
 * copies are read from MPI_T (coll_adapt2_detach_bytes):
 *  A  `calls` broadcasts, each after a barrier: no copy (watching);
 *  B  one broadcast the late rank enters `late_ms` after the others: the
 *     root waits for it (the call lasts at least half of late_ms) and copies
 *     nothing (it was watching when the child came late);
 *  C  4 broadcasts, the late rank sleeping late_ms before each, the others
 *     not: the root copies every one and returns without waiting for it;
 *  D  `calls` broadcasts, each after a barrier: the root copies in at most
 *     the first 8 (until its children have been in step for 8 calls) and
 *     in none of the last 4.
 * Run with a grace period longer than scheduling jitter (the script sets
 * coll_adapt2_detach_grace_us) so that only the late rank is ever late.
 *   watch_check [bytes (65536)] [late_ms (200)] [calls (16)]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi_check.h"

static int rank, size, ints;
static long long errors;

static int value(int call, int k)
{
    return call * 7919 + k;
}

/* Broadcast number `call` from rank 0, checked; returns the seconds it took. */
static double bcast(int *buf, int call)
{
    for (int k = 0; k < ints; ++k) buf[k] = rank == 0 ? value(call, k) : -1;
    const double start = MPI_Wtime();
    MPI_Bcast(buf, ints, MPI_INT, 0, MPI_COMM_WORLD);
    const double took = MPI_Wtime() - start;
    for (int k = 0; k < ints; ++k) {
        if (buf[k] != value(call, k) && errors++ < 5) {
            printf("FAIL [rank %d]: bcast %d element %d is %d, expected %d\n", rank, call, k, buf[k], value(call, k));
        }
    }
    return took;
}

/* The root's copies (bytes) since the last look. */
static long long copied(void)
{
    static long long seen;
    const long long now = adapt2_counter("coll_adapt2_detach_bytes");
    const long long grew = now - seen;
    seen = now;
    return grew;
}

int main(int argc, char **argv)
{
    mpi_start(&argc, &argv, 0, &rank, &size);
    const int bytes = int_arg(argc, argv, 1, 65536), late_ms = int_arg(argc, argv, 2, 200);
    const int calls = int_arg(argc, argv, 3, 16), late = size - 1;
    ints = bytes / (int) sizeof(int);
    int *buf = malloc((size_t) ints * sizeof *buf);
    if (size < 2 || !buf || calls < 12) fail("watch_check: needs 2 or more ranks, memory and at least 12 calls");
    (void) copied();
    int call = 0;

    for (int i = 0; i < calls; ++i, ++call) { /* A: in step */
        MPI_Barrier(MPI_COMM_WORLD);
        bcast(buf, call);
    }
    long long a = copied();
    if (rank == 0 && a != 0)
        fail("watch_check A: the root copied %lld bytes in %d calls in step, expected none", a, calls);

    MPI_Barrier(MPI_COMM_WORLD); /* B: one late child */
    if (rank == late) usleep(late_ms * 1000);
    double took = bcast(buf, call++);
    long long b = copied();
    if (rank == 0 && (took < late_ms / 2000.0 || b != 0)) {
        fail(
            "watch_check B: the root took %.1f ms and copied %lld bytes for a child %d ms late, expected it to "
            "wait (at least %d ms) and copy nothing",
            took * 1e3, b, late_ms, late_ms / 2);
    }

    double longest = 0; /* C: the child lags behind */
    for (int i = 0; i < 4; ++i, ++call) {
        if (rank == late) usleep(late_ms * 1000);
        took = bcast(buf, call);
        longest = took > longest ? took : longest;
    }
    long long c = copied();
    if (rank == 0 && (c != 4LL * bytes || longest >= late_ms / 2000.0)) {
        fail(
            "watch_check C: the root copied %lld bytes in 4 calls (expected %lld) and took up to %.1f ms (expected "
            "under %d ms) while a child lagged %d ms behind",
            c, 4LL * bytes, longest * 1e3, late_ms / 2, late_ms);
    }

    long long first = 0; /* D: in step again */
    for (int i = 0; i < calls; ++i, ++call) {
        MPI_Barrier(MPI_COMM_WORLD);
        bcast(buf, call);
        if (i == calls - 5) first = copied();
    }
    long long last = copied();
    if (rank == 0 && (first > 8LL * bytes || last != 0)) {
        fail(
            "watch_check D: in %d calls in step the root copied %lld bytes in all but the last 4 (at most %lld "
            "expected) and %lld in those (none expected)",
            calls, first, 8LL * bytes, last);
    }

    if (total_errors(errors, MPI_COMM_WORLD) > 0) fail("watch_check: wrong data");
    if (rank == 0) {
        printf("watch_check: %d ranks, %d bytes: copies A %lld, B %lld, C %lld, D %lld + %lld; B waited %d ms\n", size,
               bytes, a, b, c, first, last, late_ms);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
