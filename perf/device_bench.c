/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * GPU buffers: adapt2 on device buffers against whole-buffer host staging
 * (copy the whole buffer to the host, run the collective on host memory,
 * copy the result back: what Open MPI's coll/cuda does), in one run, for
 * bcast, reduce and allreduce (float sum). Prints per size the time of each
 * (median over iterations of the slowest rank), their ratio, the rate at
 * which adapt2 moved bytes between the GPU and its pinned staging buffers
 * (all ranks' coll_adapt2_device_bytes over the call's time), and checks
 * every element of both results. First, the host-device copy bandwidth of
 * this machine (cuMemcpy between pinned host memory and the device, 64 MiB,
 * one rank alone and every rank at once): what staging can reach.
 *
 * The CUDA driver is loaded at run time (no CUDA headers or libraries needed
 * to build). Each rank uses device rank % devices. With -m (no GPU needed)
 * the "device" is host memory and adapt2 runs its mock device
 * (coll_adapt2_device_mock=1): a check of this program, not a measurement.
 *
 * usage: mpirun -np N device_bench [-m] [-s MIN:MAX] [-i ITERS] [-c bcast,reduce,allreduce]
 */
#include <stdint.h>
#include <string.h>

#include "bench_args.h"
#include "../test/mpi/cuda_driver.h"
#include "../test/mpi/mpi_check.h"

/* ---- the CUDA driver, loaded at run time (test/mpi/cuda_driver.h) ---- */
static cuda_driver_t cu;
static int mock;
static int rank, size;

static void die(const char *what)
{
    fprintf(stderr, "device_bench: rank %d: %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static void check_cu(CUresult rc, const char *what)
{
    if (rc != 0) {
        fprintf(stderr, "device_bench: rank %d: %s failed with CUDA error %d\n", rank, what, rc);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

static void load_driver(void)
{
    char why[256];
    if (cuda_driver_load(&cu, rank, why, sizeof why) != 0) {
        fprintf(stderr, "device_bench: rank %d: %s: run with -m to check the program without a GPU\n", rank, why);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

/* Device memory, or (mock) host memory standing in for it. */
static void *dev_alloc(size_t bytes)
{
    if (mock) return malloc(bytes);
    CUdeviceptr p;
    check_cu(cu.mem_alloc(&p, bytes), "cuMemAlloc");
    return (void *) (uintptr_t) p;
}

static void dev_free(void *p)
{
    if (mock)
        free(p);
    else
        cu.mem_free((CUdeviceptr) (uintptr_t) p);
}

static void to_device(void *dst, const void *src, size_t bytes)
{
    if (mock)
        memcpy(dst, src, bytes);
    else
        check_cu(cu.htod((CUdeviceptr) (uintptr_t) dst, src, bytes), "cuMemcpyHtoD");
}

static void to_host(void *dst, const void *src, size_t bytes)
{
    if (mock)
        memcpy(dst, src, bytes);
    else
        check_cu(cu.dtoh(dst, (CUdeviceptr) (uintptr_t) src, bytes), "cuMemcpyDtoH");
}

/* ---- the machine's host-device copy bandwidth ---- */

/* GB/s of `reps` copies of `bytes` in one direction on the ranks in `active`
 * (all at once), over the slowest of them. */
static double copy_rate(int to_device_dir, int active, void *pinned, CUdeviceptr dev, size_t bytes, int reps)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    for (int k = 0; active && k < reps; ++k) {
        if (to_device_dir)
            check_cu(cu.htod(dev, pinned, bytes), "cuMemcpyHtoD");
        else
            check_cu(cu.dtoh(pinned, dev, bytes), "cuMemcpyDtoH");
    }
    if (active) check_cu(cu.ctx_synchronize(), "cuCtxSynchronize");
    t = MPI_Wtime() - t;
    double slowest;
    int n = 0;
    MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&active, &n, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    return (double) n * (double) reps * (double) bytes / slowest / 1e9;
}

static void print_copy_bandwidth(void)
{
    const size_t bytes = 64 << 20;
    void *pinned = NULL;
    CUdeviceptr dev;
    check_cu(cu.host_alloc(&pinned, bytes, 0), "cuMemHostAlloc");
    check_cu(cu.mem_alloc(&dev, bytes), "cuMemAlloc");
    memset(pinned, 1, bytes);
    copy_rate(1, 1, pinned, dev, bytes, 1); /* warm-up */
    double h2d1 = copy_rate(1, rank == 0, pinned, dev, bytes, 8), d2h1 = copy_rate(0, rank == 0, pinned, dev, bytes, 8);
    double h2dn = copy_rate(1, 1, pinned, dev, bytes, 8), d2hn = copy_rate(0, 1, pinned, dev, bytes, 8);
    if (rank == 0)
        printf(
            "# host-device copies (cuMemcpy, pinned, 64 MiB): 1 rank H2D %.1f GB/s, D2H %.1f GB/s; "
            "%d ranks at once H2D %.1f GB/s, D2H %.1f GB/s\n",
            h2d1, d2h1, size, h2dn, d2hn);
    cu.mem_free(dev);
    cu.free_host(pinned);
}

/* ---- one benchmark case ---- */
enum coll { BCAST, REDUCE, ALLREDUCE };
static const char *coll_name[] = {"bcast", "reduce", "allreduce"};

static float value(int r, size_t i)
{
    return (float) ((r + 1) * (int) (i % 17));
}

static void run(enum coll c, float *in, float *out, size_t n)
{
    if (c == BCAST)
        MPI_Bcast(in, (int) n, MPI_FLOAT, 0, MPI_COMM_WORLD);
    else if (c == REDUCE)
        MPI_Reduce(in, out, (int) n, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
    else
        MPI_Allreduce(in, out, (int) n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}

/* One collective on the device buffers: adapt2 directly, or staged whole
 * through host buffers. Returns the slowest rank's time in seconds. */
static double one(enum coll c, int staged, float *d_in, float *d_out, float *h_in, float *h_out, size_t n)
{
    const size_t bytes = n * sizeof(float);
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    if (!staged) {
        run(c, d_in, d_out, n);
    } else {
        if (c != BCAST || rank == 0) to_host(h_in, d_in, bytes);
        run(c, h_in, h_out, n);
        if (c == BCAST)
            to_device(d_in, h_in, bytes);
        else if (c == ALLREDUCE || rank == 0)
            to_device(d_out, h_out, bytes);
    }
    t = MPI_Wtime() - t;
    double slowest;
    MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
}

static long check(enum coll c, float *d_in, float *d_out, float *h_check, size_t n)
{
    if ((c == REDUCE && rank != 0)) return 0;
    to_host(h_check, c == BCAST ? d_in : d_out, n * sizeof(float));
    long bad = 0;
    for (size_t i = 0; i < n; ++i) {
        float want = 0;
        if (c == BCAST)
            want = value(0, i);
        else
            for (int r = 0; r < size; ++r) want += value(r, i);
        if (h_check[i] != want && bad++ < 3)
            fprintf(stderr, "rank %d %s element %zu: %g, expected %g\n", rank, coll_name[c], i, h_check[i], want);
    }
    return bad;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

/* Median over iters of the slowest rank's time, data checked after each.
 * *staged_bytes: bytes all ranks together copied between the GPU and pinned
 * buffers per call. */
static double measure(enum coll c, int staged, size_t n, int iters, float **bufs, long *bad, double *staged_bytes)
{
    long long before = adapt2_counter("coll_adapt2_device_bytes");
    double *t = malloc((size_t) iters * sizeof *t);
    float *d_in = bufs[0], *d_out = bufs[1], *h_in = bufs[2], *h_out = bufs[3], *h_check = bufs[4];
    for (int it = -1; it < iters; ++it) { /* -1: warm-up */
        for (size_t i = 0; i < n; ++i) h_check[i] = c == BCAST && rank != 0 ? 0 : value(rank, i);
        to_device(d_in, h_check, n * sizeof(float));
        double s = one(c, staged, d_in, d_out, h_in, h_out, n);
        *bad += check(c, d_in, d_out, h_check, n);
        if (it >= 0) t[it] = s;
    }
    double mine = (double) (adapt2_counter("coll_adapt2_device_bytes") - before) / (iters + 1);
    MPI_Allreduce(&mine, staged_bytes, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    qsort(t, (size_t) iters, sizeof *t, cmp_double);
    double median = t[iters / 2];
    free(t);
    return median;
}

/* "bcast,allreduce" -> which[] */
static void parse_collectives(char *list, int which[3])
{
    which[0] = which[1] = which[2] = 0;
    for (char *name = strtok(list, ","); name; name = strtok(NULL, ",")) {
        int k = 0;
        while (k < 3 && strcmp(name, coll_name[k])) ++k;
        if (k == 3) die("-c takes bcast, reduce, allreduce");
        which[k] = 1;
    }
}

int main(int argc, char **argv)
{
    size_t min = 4 << 10, max = 256 << 20;
    int iters = 5, opt, which[3] = {1, 1, 1};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    while ((opt = getopt(argc, argv, "ms:i:c:")) != -1) {
        char *colon;
        switch (opt) {
        case 'm': mock = 1; break;
        case 's':
            colon = strchr(optarg, ':');
            if (!colon) die("-s MIN:MAX");
            *colon = 0;
            if (!parse_size(optarg, &min) || !parse_size(colon + 1, &max) || min < 4 || max < min) die("-s MIN:MAX");
            break;
        case 'i':
            if (!parse_int(optarg, 1, &iters)) die("-i ITERS (>= 1)");
            break;
        case 'c': parse_collectives(optarg, which); break;
        default: die("usage: device_bench [-m] [-s MIN:MAX] [-i ITERS] [-c bcast,reduce,allreduce]");
        }
    }
    if (!mock) load_driver();
    adapt2_counter("coll_adapt2_device_bytes");
    if (!mock) print_copy_bandwidth();
    const size_t cap = max / sizeof(float);
    float *bufs[5] = {dev_alloc(max), dev_alloc(max), malloc(max), malloc(max), malloc(max)};
    if (!bufs[2] || !bufs[3] || !bufs[4]) die("out of host memory");
    if (rank == 0) {
        printf("# %d ranks, %s; median of %d iterations of the slowest rank, float sum\n", size,
               mock ? "MOCK device (host memory: checks the program, measures nothing)" : "CUDA device buffers", iters);
        printf("%-10s %12s %14s %16s %8s %12s\n", "collective", "bytes", "adapt2_us", "host_staged_us", "ratio",
               "staging_GBps");
    }
    long bad = 0;
    for (int c = 0; c < 3; ++c) {
        if (!which[c]) continue;
        for (size_t bytes = min; bytes <= max; bytes *= 4) {
            const size_t n = bytes / sizeof(float) < cap ? bytes / sizeof(float) : cap;
            double moved = 0, ignored;
            double direct = measure((enum coll) c, 0, n, iters, bufs, &bad, &moved);
            double staged = measure((enum coll) c, 1, n, iters, bufs, &bad, &ignored);
            if (rank == 0)
                printf("%-10s %12zu %14.1f %16.1f %8.2f %12.2f\n", coll_name[c], n * sizeof(float), direct * 1e6,
                       staged * 1e6, direct / staged, moved / direct / 1e9);
        }
    }
    long all_bad = 0;
    MPI_Allreduce(&bad, &all_bad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(
            "# ratio = adapt2/host_staged (< 1: adapt2 faster); staging_GBps = bytes all ranks copied between "
            "the GPU and pinned buffers per adapt2 call / its time; %ld wrong elements\n",
            all_bad);
    dev_free(bufs[0]);
    dev_free(bufs[1]);
    for (int k = 2; k < 5; ++k) free(bufs[k]);
    MPI_Finalize();
    return all_bad ? 1 : 0;
}
