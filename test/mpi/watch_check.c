/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * Ranks that watch (engine/late_peers.h): from
 * coll_adapt2_detach_watch_min_bytes to coll_adapt2_detach_await_min_bytes a
 * blocking broadcast root, and a blocking reduce leaf of the root, send from
 * the user's buffer and wait while their peers are in step, copy at once
 * (and return) from the call after a peer came late, while the peers lag
 * behind, and watch again after 8 calls in step. So does a broadcast root
 * on the direct path above coll_adapt2_direct_detach_max up to
 * coll_adapt2_direct_watch_max (c/coll_adapt2_behind.c: its copies go to the
 * send-behind ring).
 *
 * Root 0. Broadcasts: the watcher is the root, the late rank the last one.
 * Reduces (run with a flat reduce tree, so that every other rank is a leaf
 * of the root): the watchers are the leaves, the late rank is the root.
 * After `calls` warm-up calls in step (connections are made lazily: a first
 * call may come late; they may copy), four phases; every element of every
 * call is checked on every rank that gets a result (each call's data
 * differs), and the watchers' copies are read from MPI_T
 * (coll_adapt2_detach_bytes):
 *  A  `calls` calls, each after a barrier: no copy (watching);
 *  B  one call the late rank enters `late_ms` after the others: the watchers
 *     wait for it (their call lasts at least half of late_ms) and copy
 *     nothing (they were watching when it came late);
 *  C  4 calls, the late rank sleeping late_ms before each, the others not:
 *     the watchers copy in every one and return without waiting for it;
 *  D  `calls` calls, each after a barrier: the watchers copy in at most the
 *     first 8 (until their peers have been in step for 8 calls) and in none
 *     of the last 4.
 * Run with a grace period longer than scheduling jitter (the script sets
 * coll_adapt2_detach_grace_us) so that only the late rank is ever late.
 *   watch_check [bytes (65536)] [late_ms (200)] [calls (16)] [bcast|reduce] [late rank]
 * (a broadcast's late rank must be a child of the root: the last rank in a
 * flat tree; on a multi-level layout name one, e.g. a node leader).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi_check.h"

static int rank, size, ints, reducing;
static long long errors;

static int value(int call, int who, int k)
{
    return call * 7919 + who * 131 + k;
}

static void check(int call, int k, int got, int want)
{
    if (got != want && errors++ < 5) {
        printf("FAIL [rank %d]: %s %d element %d is %d, expected %d\n", rank, reducing ? "reduce" : "bcast", call, k,
               got, want);
    }
}

/* Call number `call` (to or from rank 0), checked; the seconds it took. */
static double collective(int *buf, int *out, int call)
{
    for (int k = 0; k < ints; ++k) buf[k] = reducing || rank == 0 ? value(call, reducing ? rank : 0, k) : -1;
    const double start = MPI_Wtime();
    if (reducing) {
        MPI_Reduce(buf, out, ints, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    } else {
        MPI_Bcast(buf, ints, MPI_INT, 0, MPI_COMM_WORLD);
    }
    const double took = MPI_Wtime() - start;
    for (int k = 0; k < ints && (!reducing || rank == 0); ++k) {
        int want = value(call, 0, k);
        for (int r = 1; reducing && r < size; ++r) want += value(call, r, k);
        check(call, k, reducing ? out[k] : buf[k], want);
    }
    return took;
}

/* This rank's copies (bytes) since the last look. */
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
    const int calls = int_arg(argc, argv, 3, 16);
    reducing = argc > 4 && 0 == strcmp(argv[4], "reduce");
    const int late = reducing ? 0 : int_arg(argc, argv, 5, size - 1);
    const int watcher = reducing ? rank != 0 : rank == 0;
    const char *what = reducing ? "a reduce leaf" : "the broadcast root";
    ints = bytes / (int) sizeof(int);
    int *buf = malloc((size_t) ints * sizeof *buf), *out = malloc((size_t) ints * sizeof *out);
    if (size < 2 || !buf || !out || calls < 12) fail("watch_check: needs 2 or more ranks, memory and 12 calls");
    int call = 0;
    for (int i = 0; i < calls; ++i, ++call) { /* warm-up, in step: watching again after 8 */
        MPI_Barrier(MPI_COMM_WORLD);
        collective(buf, out, call);
    }
    (void) copied();

    for (int i = 0; i < calls; ++i, ++call) { /* A: in step */
        MPI_Barrier(MPI_COMM_WORLD);
        collective(buf, out, call);
    }
    long long a = copied();
    if (watcher && a != 0)
        fail("watch_check A: %s copied %lld bytes in %d calls in step, expected none", what, a, calls);

    MPI_Barrier(MPI_COMM_WORLD); /* B: one late peer */
    if (rank == late) usleep(late_ms * 1000);
    double took = collective(buf, out, call++);
    long long b = copied();
    if (watcher && (took < late_ms / 2000.0 || b != 0)) {
        fail(
            "watch_check B: %s took %.1f ms and copied %lld bytes for a peer %d ms late, expected it to wait (at "
            "least %d ms) and copy nothing",
            what, took * 1e3, b, late_ms, late_ms / 2);
    }

    double longest = 0; /* C: the peer lags behind */
    for (int i = 0; i < 4; ++i, ++call) {
        if (rank == late) usleep(late_ms * 1000);
        took = collective(buf, out, call);
        longest = took > longest ? took : longest;
    }
    long long c = copied();
    if (watcher && (c != 4LL * bytes || longest >= late_ms / 2000.0)) {
        fail(
            "watch_check C: %s copied %lld bytes in 4 calls (expected %lld) and took up to %.1f ms (expected under "
            "%d ms) while a peer lagged %d ms behind",
            what, c, 4LL * bytes, longest * 1e3, late_ms / 2, late_ms);
    }

    long long first = 0; /* D: in step again */
    for (int i = 0; i < calls; ++i, ++call) {
        MPI_Barrier(MPI_COMM_WORLD);
        collective(buf, out, call);
        if (i == calls - 5) first = copied();
    }
    long long last = copied();
    if (watcher && (first > 8LL * bytes || last != 0)) {
        fail(
            "watch_check D: in %d calls in step %s copied %lld bytes in all but the last 4 (at most %lld "
            "expected) and %lld in those (none expected)",
            calls, what, first, 8LL * bytes, last);
    }

    if (total_errors(errors, MPI_COMM_WORLD) > 0) fail("watch_check: wrong data");
    if (rank == (reducing ? 1 : 0)) {
        printf("watch_check: %s, %d ranks, %d bytes: copies A %lld, B %lld, C %lld, D %lld + %lld; B waited %d ms\n",
               reducing ? "reduce" : "bcast", size, bytes, a, b, c, first, last, late_ms);
    }
    free(buf);
    free(out);
    MPI_Finalize();
    return 0;
}
