/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * pingpong: point-to-point times between rank 0 and rank 1, for fitting the
 * simulator's LogGP parameters (perf/sim/calibrate.py). Plain MPI (the pml
 * and btl Open MPI picks: vader within a node, tcp between nodes); other
 * ranks only wait in the barriers. With -P, every pair of ranks (0-1, 2-3,
 * ...) runs at the same time, and each iteration's time is the slowest
 * pair's (with more ranks than cores: what a message costs when its receiver
 * must first be scheduled). With -s US, every ping-pong iteration starts
 * with a pause of US microseconds per KiB of the message (and there is no
 * streaming phase): on a link shaped by a token bucket (tc tbf, as the
 * emulated cluster's), the bucket refills between round trips, so the times
 * show the line rate rather than the sustained one.
 *
 *   mpirun -np 2 perf/sim/pingpong [-m MIN:MAX] [-i ITERS] [-x WARMUP] [-w WINDOW] [-P] [-s US]
 *
 * Per size (powers of two from MIN to MAX, default 1:4M):
 *   pp_median_us / pp_min_us  half the round trip (0 sends n bytes to 1, 1
 *                             sends n bytes back), median / minimum over
 *                             ITERS iterations: L + 2o + n*G in LogGP terms
 *                             (one more L above the eager limit, where the
 *                             data follows a rendezvous handshake). Each rank
 *                             sends from one buffer and receives into another,
 *                             so what is sent was not just written by the
 *                             other rank's core: as in a collective, whose
 *                             sources (a broadcast's root, a reduction's
 *                             operands) are not rewritten between calls;
 *   gap_median_us             rank 0 posts WINDOW sends of n bytes back to
 *                             back, rank 1 has pre-posted the receives and
 *                             answers with one empty message once all have
 *                             arrived: (time - one empty round trip) / WINDOW,
 *                             median over iterations: the per-message gap,
 *                             max(o, g, n*G) for small messages.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static size_t parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (*end == 'K' || *end == 'k') v *= 1024;
    if (*end == 'M' || *end == 'm') v *= 1024 * 1024;
    return (size_t) v;
}

int main(int argc, char **argv)
{
    size_t min = 1, max = 4u << 20;
    int iters = 200, warmup = 20, window = 16, pairs = 0, opt, rank, size;
    double pause_per_kib = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    while ((opt = getopt(argc, argv, "m:i:x:w:Ps:")) != -1) {
        switch (opt) {
        case 'm': {
            char *colon = strchr(optarg, ':');
            if (colon) {
                *colon = '\0';
                min = parse_size(optarg);
                max = parse_size(colon + 1);
            } else {
                max = parse_size(optarg);
            }
            break;
        }
        case 'i': iters = atoi(optarg); break;
        case 'x': warmup = atoi(optarg); break;
        case 'w': window = atoi(optarg); break;
        case 'P': pairs = 1; break;
        case 's': pause_per_kib = atof(optarg); break;
        default:
            if (0 == rank) fprintf(stderr, "usage: pingpong [-m MIN:MAX] [-i ITERS] [-x WARMUP] [-w WINDOW] [-P] [-s US]\n");
            MPI_Finalize();
            return 2;
        }
    }
    if (size < 2 || min < 1 || max < min || iters < 1 || window < 1 || (pairs && size % 2)) {
        if (0 == rank)
            fprintf(stderr, "pingpong: needs 2 ranks (-P: an even number), 1 <= MIN <= MAX, ITERS and WINDOW >= 1\n");
        MPI_Finalize();
        return 2;
    }
    char *buf = malloc(max * (size_t) window), *out = malloc(max);
    double *pp = malloc(sizeof(double) * iters), *gap = malloc(sizeof(double) * iters);
    MPI_Request *req = malloc(sizeof(MPI_Request) * window);
    memset(buf, 1, max * (size_t) window);
    memset(out, 2, max);
    /* This rank's role: 0 starts, 1 answers, -1 only waits. */
    const int role = pairs || rank < 2 ? rank % 2 : -1, peer = rank ^ 1;
    if (0 == rank) {
        printf("# pingpong np=%d pairs=%d iters=%d warmup=%d window=%d\n", size, pairs ? size / 2 : 1, iters,
               warmup, window);
        printf("# %-10s %14s %14s %14s\n", "size", "pp_median_us", "pp_min_us", "gap_median_us");
    }
    /* One empty round trip, subtracted from the streaming time. */
    double rtt0 = 0;
    for (size_t n = min; n <= max; n *= 2) {
        int its = n > (256u << 10) ? (iters + 3) / 4 : iters;
        const double pause_us = pause_per_kib * (double) n / 1024;
        for (int phase = 0; phase < (pause_us > 0 ? 1 : 2); ++phase) {  /* 0: ping-pong, 1: streaming */
            for (int i = -warmup; i < its; ++i) {
                if (pause_us > 0) {
                    struct timespec ts = {(time_t) (pause_us / 1e6), (long) (1e3 * (pause_us - 1e6 * (time_t) (pause_us / 1e6)))};
                    nanosleep(&ts, NULL);
                }
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = MPI_Wtime();
                if (0 == phase && 0 == role) {
                    MPI_Send(out, (int) n, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
                    MPI_Recv(buf, (int) n, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else if (0 == phase && 1 == role) {
                    MPI_Recv(buf, (int) n, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(out, (int) n, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
                } else if (0 == role) {
                    for (int w = 0; w < window; ++w)
                        MPI_Isend(out, (int) n, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &req[w]);
                    MPI_Waitall(window, req, MPI_STATUSES_IGNORE);
                    MPI_Recv(NULL, 0, MPI_CHAR, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else if (1 == role) {
                    for (int w = 0; w < window; ++w)
                        MPI_Irecv(buf + (size_t) w * n, (int) n, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &req[w]);
                    MPI_Waitall(window, req, MPI_STATUSES_IGNORE);
                    MPI_Send(NULL, 0, MPI_CHAR, peer, 3, MPI_COMM_WORLD);
                }
                double t = (MPI_Wtime() - t0) * 1e6, slowest = t;
                if (pairs) MPI_Reduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
                if (i >= 0) (phase ? gap : pp)[i] = phase ? slowest : slowest / 2;
            }
        }
        if (0 == rank) {
            double pp_med = median(pp, its), pp_min = pp[0];
            if (n == min) rtt0 = 2 * pp_med;  /* n = 1 at the start of a default run */
            double g = pause_us > 0 ? 0 : (median(gap, its) - rtt0) / window;
            printf("  %-10zu %14.2f %14.2f %14.3f\n", n, pp_med, pp_min, g > 0 ? g : 0);
            fflush(stdout);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(buf);
    free(out);
    free(pp);
    free(gap);
    free(req);
    MPI_Finalize();
    return 0;
}
