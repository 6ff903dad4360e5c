/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * Every adapt2 collective on GPU buffers, through the whole component (MCA
 * parameters, pointer classification, device queues polled from Open MPI's
 * progress loop, pinned staging), on a mock GPU (coll_adapt2_device_mock):
 * its "device memory" is host memory and its copies complete late and out of
 * order, from the progress loop. Data checked on every rank for bcast,
 * ibcast, reduce, ireduce, allreduce, iallreduce with int and float sums and
 * other ops (max, prod, band, minloc), several sizes and roots, in place or
 * not; the device-bytes counter must grow on ranks whose buffers are on the
 * device, and stay put on the others; predefined ops are combined by the
 * (mock) GPU's kernels somewhere.
 *
 * usage: device_check all|mixed
 *   all:   every rank's buffers are on the (mock) device
 *   mixed: even ranks' buffers on the device, odd ranks' in host memory
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"

static int rank, size, on_device;

static int int_value(int r, int i, int call)
{
    return (r + 1) * 1000 + (i * 7 + call) % 991;
}

/* What op gives over every rank's int_value (commutative ops only). */
static int int_expected(MPI_Op op, int i, int call)
{
    int acc = int_value(0, i, call);
    for (int r = 1; r < size; ++r) {
        int x = int_value(r, i, call);
        if (MPI_SUM == op)
            acc += x;
        else if (MPI_MAX == op)
            acc = x > acc ? x : acc;
        else if (MPI_BAND == op)
            acc &= x;
    }
    return acc;
}

static int prod_operand(int r, int i, int call)
{
    return int_value(r, i, call) % 7 + 1;
}

static void check_bcast(int call, int root, int count, int blocking)
{
    unsigned char *buf = malloc((size_t) count);
    for (int i = 0; i < count; ++i) buf[i] = rank == root ? pattern_byte(call, root, i) : 0;
    if (blocking) {
        MPI_Bcast(buf, count, MPI_BYTE, root, MPI_COMM_WORLD);
    } else {
        MPI_Request req;
        MPI_Ibcast(buf, count, MPI_BYTE, root, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    for (int i = 0; i < count; ++i) {
        if (buf[i] != pattern_byte(call, root, i)) {
            fail("bcast of %d bytes from %d (%s): byte %d is %u, expected %u", count, root,
                 blocking ? "blocking" : "ibcast", i, buf[i], pattern_byte(call, root, i));
        }
    }
    free(buf);
}

static void check_int_reduction(int call, MPI_Op op, const char *opname, int root, int count, int all, int blocking,
                                int in_place)
{
    int *in = malloc((size_t) count * sizeof *in), *out = malloc((size_t) count * sizeof *out);
    for (int i = 0; i < count; ++i) {
        in[i] = MPI_PROD == op ? prod_operand(rank, i, call) : int_value(rank, i, call);
        out[i] = -1;
    }
    const int here_in_place = in_place && (all || rank == root);
    if (here_in_place) memcpy(out, in, (size_t) count * sizeof *in);
    reduce_call(here_in_place ? MPI_IN_PLACE : in, out, count, MPI_INT, op, root, MPI_COMM_WORLD, all, blocking);
    for (int i = 0; (all || rank == root) && i < count; ++i) {
        int want = int_expected(op, i, call);
        if (MPI_PROD == op) {
            unsigned p = 1;
            for (int r = 0; r < size; ++r) p *= (unsigned) prod_operand(r, i, call);
            want = (int) p;
        }
        if (out[i] != want) {
            fail("%s %s of %d ints root %d%s%s: element %d is %d, expected %d", all ? "allreduce" : "reduce", opname,
                 count, root, blocking ? "" : " (non-blocking)", here_in_place ? " in place" : "", i, out[i], want);
        }
    }
    free(in);
    free(out);
}

/* Float sums of small integers are exact in any order. */
static void check_float_sum(int call, int root, int count, int all)
{
    float *in = malloc((size_t) count * sizeof *in), *out = malloc((size_t) count * sizeof *out);
    for (int i = 0; i < count; ++i) in[i] = (float) ((rank + 1) * (i % 13 + call % 5));
    reduce_call(in, out, count, MPI_FLOAT, MPI_SUM, root, MPI_COMM_WORLD, all, 1);
    for (int i = 0; (all || rank == root) && i < count; ++i) {
        float want = 0;
        for (int r = 0; r < size; ++r) want += (float) ((r + 1) * (i % 13 + call % 5));
        if (out[i] != want) fail("float sum of %d: element %d is %g, expected %g", count, i, out[i], want);
    }
    free(in);
    free(out);
}

static void check_minloc(int call, int root, int count, int all)
{
    struct {
        int v, i;
    } *in = malloc((size_t) count * sizeof *in), *out = malloc((size_t) count * sizeof *out);
    for (int i = 0; i < count; ++i) {
        in[i].v = (i * 31 + rank * 17 + call) % (size + 3); /* ties across ranks */
        in[i].i = rank;
    }
    reduce_call(in, out, count, MPI_2INT, MPI_MINLOC, root, MPI_COMM_WORLD, all, 0);
    for (int i = 0; (all || rank == root) && i < count; ++i) {
        int best = -1, where = -1;
        for (int r = 0; r < size; ++r) {
            int v = (i * 31 + r * 17 + call) % (size + 3);
            if (where < 0 || v < best) best = v, where = r;
        }
        if (out[i].v != best || out[i].i != where) {
            fail("minloc of %d: element %d is (%d,%d), expected (%d,%d)", count, i, out[i].v, out[i].i, best, where);
        }
    }
    free(in);
    free(out);
}

/* A strided type on a GPU buffer. A blocking call up to
 * coll_adapt2_device_bounce_max is adapt2's: a rank with a device buffer
 * copies its span through host memory, and the holes (odd ints) come back
 * as they were. A non-blocking one is not staged: it goes to the previous
 * component on every rank (verbose 20 says so). The data must arrive either
 * way, and the fallback counter says who ran it. */
static void check_vector_bcast(int call, int root, int blocking)
{
    MPI_Datatype vec;
    MPI_Type_vector(100, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int buf[200];
    for (int i = 0; i < 200; ++i) buf[i] = rank == root || i % 2 ? int_value(root, i, call) : -1;
    const long long handed_before = adapt2_counter("coll_adapt2_fallbacks");
    const long long copied_before = adapt2_counter("coll_adapt2_device_bytes");
    if (blocking) {
        MPI_Bcast(buf, 1, vec, root, MPI_COMM_WORLD);
    } else {
        MPI_Request req;
        MPI_Ibcast(buf, 1, vec, root, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    for (int i = 0; i < 200; ++i) {
        if (buf[i] != int_value(root, i, call))
            fail("vector %s: int %d is %d", blocking ? "bcast" : "ibcast", i, buf[i]);
    }
    const long long handed = adapt2_counter("coll_adapt2_fallbacks") - handed_before;
    if (handed != !blocking) {
        fail("vector %s: %lld calls went to the previous component, expected %d", blocking ? "bcast" : "ibcast", handed,
             !blocking);
    }
    /* bounced: the root's span goes in; elsewhere it goes in (holes) and out */
    const long long span = 199 * (long long) sizeof(int),
                    copied = adapt2_counter("coll_adapt2_device_bytes") - copied_before;
    const long long want = !on_device || !blocking ? 0 : rank == root ? span : 2 * span;
    if (copied != want) {
        fail("vector %s: %lld bytes copied between the GPU and host memory, expected %lld",
             blocking ? "bcast" : "ibcast", copied, want);
    }
    MPI_Type_free(&vec);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2 || (strcmp(argv[1], "all") && strcmp(argv[1], "mixed"))) fail("usage: device_check all|mixed");
    /* Before adapt2's first collective, which decides about the device. */
    on_device = !strcmp(argv[1], "all") || rank % 2 == 0;
    adapt2_set_int("coll_adapt2_device_mock", on_device ? 1 : 2);
    adapt2_counter("coll_adapt2_device_bytes");
    adapt2_counter("coll_adapt2_device_combines");
    adapt2_counter("coll_adapt2_fallbacks");

    const int counts[] = {1, 1000, 70000, 300001};
    int call = 0;
    for (int c = 0; c < 4; ++c) {
        for (int root = 0; root < size; root += 2) {
            check_bcast(++call, root, counts[c] * 3, 1);
            check_bcast(++call, root, counts[c] * 3, 0);
            for (int all = 0; all < 2; ++all) {
                for (int blocking = 0; blocking < 2; ++blocking) {
                    check_int_reduction(++call, MPI_SUM, "sum", root, counts[c], all, blocking, 0);
                    check_int_reduction(++call, MPI_SUM, "sum", root, counts[c], all, blocking, 1);
                }
                check_int_reduction(++call, MPI_MAX, "max", root, counts[c], all, 1, 0);
                check_int_reduction(++call, MPI_PROD, "prod", root, counts[c], all, 0, 0);
                check_int_reduction(++call, MPI_BAND, "band", root, counts[c], all, 1, 1);
                check_float_sum(++call, root, counts[c], all);
                check_minloc(++call, root, counts[c], all);
            }
        }
    }
    check_vector_bcast(++call, size - 1, 1);
    check_vector_bcast(++call, size - 1, 0);
    long long copied = adapt2_counter("coll_adapt2_device_bytes");
    if (on_device && copied <= 0) fail("device buffers but no bytes copied to or from the device");
    if (!on_device && copied != 0) fail("host buffers but %lld bytes copied to or from the device", copied);
    /* Ranks with device data and children combine predefined ops on the GPU. */
    long long combined = adapt2_counter("coll_adapt2_device_combines"), all_combined = 0;
    if (!on_device && combined != 0) fail("host buffers but %lld GPU combines", combined);
    MPI_Allreduce(&combined, &all_combined, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (all_combined <= 0) fail("no segment was combined on the GPU");
    if (0 == rank) printf("device_check %s: every collective's data as expected\n", argv[1]);
    MPI_Finalize();
    return 0;
}
