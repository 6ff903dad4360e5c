/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/* Per-call software overhead of a collective against bare point-to-point on
 * the same tree (issue 15's latency path goal: within 20%).
 *
 * Below coll_adapt2_bcast_radix ranks (8 by default) adapt2's small-message
 * tree is flat: the root sends to every rank, or (reduce) receives from every
 * rank and combines. The bare loop does exactly that with MPI_Isend/MPI_Irecv
 * and MPI_Waitall (and MPI_Reduce_local). What is timed is one rank's time
 * inside the call once its peers' data is already there, so the figure is
 * the software path, not the wire or the scheduler:
 *   bcast root:  posting the sends until the call returns (eager sends);
 *   bcast leaf:  the call, entered after the message has arrived;
 *   reduce leaf: the call (an eager send);
 *   reduce root: the call, entered after every contribution has arrived;
 *   allreduce:   the call on every rank, entered together after a barrier:
 *                the exchanges' latency is in both figures, the software
 *                path is their difference. The bare loop is recursive
 *                doubling (what adapt2 runs on 2, 4 and 8 ranks), lower
 *                ranks' data on the left; a power of two ranks only.
 * Each iteration starts with MPI_Barrier and, for the rank that receives,
 * a 50 us spin so that the messages have landed; buffer contents change
 * every iteration and every result is checked.
 *
 *   overhead_bench [-n ITERS] [-b BYTES] [-k bcast|reduce|allreduce] [-N]
 * -N: the non-blocking collective (MPI_Ibcast, ... and MPI_Wait at once),
 * against the same bare loop: what a request and its schedule cost.
 * prints, per role, the median time per call of the collective (MPI_Bcast,
 * MPI_Reduce or MPI_Allreduce, i.e. whichever component is selected) and of the bare loop,
 * and their ratio. Run it with adapt2 selected, and with tuned for context.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, np;
static int nonblocking; /* -N */

static double now(void)
{
    return MPI_Wtime();
}

static void spin_us(double us)
{
    double end = now() + us * 1e-6;
    while (now() < end) {
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

static double median(double *t, int n)
{
    qsort(t, (size_t) n, sizeof *t, cmp_double);
    return t[n / 2];
}

static int value(int r, int k, int it)
{
    return (r + 1) * 100 + k + it % 89;
}

/* ---- the bare trees ------------------------------------------------------- */

static MPI_Request reqs[1024];

static void bare_bcast(int *buf, int count)
{
    if (rank == 0) {
        for (int r = 1; r < np; ++r) MPI_Isend(buf, count, MPI_INT, r, 7, MPI_COMM_WORLD, &reqs[r - 1]);
        MPI_Waitall(np - 1, reqs, MPI_STATUSES_IGNORE);
    } else {
        MPI_Irecv(buf, count, MPI_INT, 0, 7, MPI_COMM_WORLD, &reqs[0]);
        MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
    }
}

static void bare_reduce(const int *in, int *out, int *scratch, int count)
{
    if (rank == 0) {
        for (int r = 1; r < np; ++r)
            MPI_Irecv(scratch + (size_t) (r - 1) * count, count, MPI_INT, r, 8, MPI_COMM_WORLD, &reqs[r - 1]);
        MPI_Waitall(np - 1, reqs, MPI_STATUSES_IGNORE);
        memcpy(out, in, (size_t) count * sizeof(int));
        for (int r = 1; r < np; ++r) MPI_Reduce_local(scratch + (size_t) (r - 1) * count, out, count, MPI_INT, MPI_SUM);
    } else {
        MPI_Isend(in, count, MPI_INT, 0, 8, MPI_COMM_WORLD, &reqs[0]);
        MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
    }
}

/* Recursive doubling: partner data folded in rank order, as MPI requires of
 * a non-commutative op (and adapt2 does for every op). */
static void bare_allreduce(const int *in, int *out, int *scratch, int count)
{
    memcpy(out, in, (size_t) count * sizeof(int));
    for (int mask = 1; mask < np; mask <<= 1) {
        const int peer = rank ^ mask;
        MPI_Irecv(scratch, count, MPI_INT, peer, 9, MPI_COMM_WORLD, &reqs[0]);
        MPI_Isend(out, count, MPI_INT, peer, 9, MPI_COMM_WORLD, &reqs[1]);
        MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
        if (peer < rank) {
            MPI_Reduce_local(scratch, out, count, MPI_INT, MPI_SUM);
        } else {
            MPI_Reduce_local(out, scratch, count, MPI_INT, MPI_SUM);
            memcpy(out, scratch, (size_t) count * sizeof(int));
        }
    }
}

enum { BCAST, REDUCE, ALLREDUCE };
static const char *const kind_names[] = {"bcast", "reduce", "allreduce"};

static void bare_call(int kind, int *in, int *out, int *scratch, int count)
{
    if (kind == ALLREDUCE)
        bare_allreduce(in, out, scratch, count);
    else if (kind == REDUCE)
        bare_reduce(in, out, scratch, count);
    else
        bare_bcast(in, count);
}

/* The selected component's collective, blocking or (-N) started and waited for. */
static void collective(int kind, int *in, int *out, int count)
{
    MPI_Request req;
    if (!nonblocking) {
        if (kind == ALLREDUCE)
            MPI_Allreduce(in, out, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        else if (kind == REDUCE)
            MPI_Reduce(in, out, count, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        else
            MPI_Bcast(in, count, MPI_INT, 0, MPI_COMM_WORLD);
        return;
    }
    if (kind == ALLREDUCE)
        MPI_Iallreduce(in, out, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
    else if (kind == REDUCE)
        MPI_Ireduce(in, out, count, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, &req);
    else
        MPI_Ibcast(in, count, MPI_INT, 0, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
}

/* ---- one timed loop ------------------------------------------------------- */

static long long errors;

static void check(const int *got, int count, int it, int reduce)
{
    for (int k = 0; k < count; ++k) {
        int want = 0;
        if (reduce) {
            for (int r = 0; r < np; ++r) want += value(r, k, it);
        } else {
            want = value(0, k, it);
        }
        if (got[k] != want && errors++ < 5)
            fprintf(stderr, "rank %d: iteration %d element %d is %d, expected %d\n", rank, it, k, got[k], want);
    }
}

/* Median seconds per call on this rank; `bare` picks the point-to-point loop. */
static double run(int kind, int bare, int count, int iters, int *in, int *out, int *scratch)
{
    double *t = malloc(sizeof(double) * (size_t) iters);
    const int reduce = kind != BCAST;
    const int receiver = kind == REDUCE ? rank == 0 : kind == BCAST ? rank != 0 : 0;
    for (int it = -iters / 10; it < iters; ++it) {
        const int v = it < 0 ? -it : it;
        for (int k = 0; k < count; ++k) {
            in[k] = reduce || rank == 0 ? value(reduce ? rank : 0, k, v) : -1;
            out[k] = -1;
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (receiver) spin_us(50);
        double t0 = now();
        if (bare)
            bare_call(kind, in, out, scratch, count);
        else
            collective(kind, in, out, count);
        double t1 = now();
        if (it >= 0) t[it] = t1 - t0;
        if (kind == ALLREDUCE || (kind == REDUCE && rank == 0)) check(out, count, v, 1);
        if (kind == BCAST && rank != 0) check(in, count, v, 0);
    }
    double m = median(t, iters);
    free(t);
    return m;
}

int main(int argc, char **argv)
{
    int iters = 20000, bytes = 64, kind = BCAST;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-b") && i + 1 < argc)
            bytes = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-N"))
            nonblocking = 1;
        else if (!strcmp(argv[i], "-k") && i + 1 < argc) {
            ++i;
            kind = !strcmp(argv[i], "allreduce") ? ALLREDUCE : !strcmp(argv[i], "reduce") ? REDUCE : BCAST;
        } else {
            if (rank == 0)
                fprintf(stderr, "usage: overhead_bench [-n ITERS] [-b BYTES] [-k bcast|reduce|allreduce] [-N]\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (np < 2 || np > 1024 || iters < 10 || (kind == ALLREDUCE && (np & (np - 1)))) {
        if (rank == 0) fprintf(stderr, "overhead_bench: 2-1024 ranks (allreduce: a power of two), 10 calls or more\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const int count = bytes / (int) sizeof(int) > 0 ? bytes / (int) sizeof(int) : 1;
    int *in = malloc(sizeof(int) * (size_t) count), *out = malloc(sizeof(int) * (size_t) count);
    int *scratch = malloc(sizeof(int) * (size_t) count * (size_t) np);
    /* interleaved: collective, bare, collective, bare */
    double coll = 0, bare = 0;
    for (int round = 0; round < 2; ++round) {
        coll += run(kind, 0, count, iters / 2, in, out, scratch);
        bare += run(kind, 1, count, iters / 2, in, out, scratch);
    }
    coll /= 2, bare /= 2;
    /* every rank's figures, printed by rank 0 */
    double mine[2] = {coll, bare}, *all = malloc(sizeof(double) * 2 * (size_t) np);
    MPI_Gather(mine, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    long long total = 0;
    MPI_Reduce(&errors, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("# overhead_bench: %s%s of %d bytes, np %d, %d calls per mode (median us per call, in the call)\n",
               nonblocking ? "i" : "", kind_names[kind], count * (int) sizeof(int), np, iters);
        printf("# %-6s %6s %12s %12s %8s\n", "role", "rank", "collective", "bare_p2p", "ratio");
        for (int r = 0; r < np; ++r) {
            const char *role = kind == ALLREDUCE ? "rank" : (r == 0) ? "root" : "leaf";
            printf("  %-6s %6d %12.3f %12.3f %8.2f\n", role, r, 1e6 * all[2 * r], 1e6 * all[2 * r + 1],
                   all[2 * r] / all[2 * r + 1]);
        }
        if (total) printf("# %lld wrong elements\n", total);
    }
    free(all), free(in), free(out), free(scratch);
    MPI_Finalize();
    return total ? 1 : 0;
}
