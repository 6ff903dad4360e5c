/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * Broadcasts of derived datatypes whose elements sit at misaligned offsets,
 * in buffers at every misalignment. Open MPI 5.0.7's convertor writes
 * elements into the holes when it resumes inside a datatype instance of such
 * a type (4.1.4's does not): plain MPI_Recv shows it, and so did adapt2's
 * segments (edges at any byte) and its direct path (which handed the
 * datatype to the PML). Two shapes:
 *   doubles: hvector(2, 1, 18, MPI_DOUBLE) on every rank (doubles at 0, 18);
 *   longs:   the root sends contiguous long longs, the others receive
 *            hvector(2, 1, 62, struct{long long@28, @10, @2}) (lb 2).
 * Every rank checks every byte of its buffer: the values where its layout
 * has them, the poison everywhere else.
 *
 *   bcast_misaligned [--counts N,N..] [--root R] [--nonblocking]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"

#define POISON 0xA5
#define MAX_COUNTS 16
#define MAX_PER_ITEM 6

static int rank, size;

/* A layout: `per_item` elements of `elem` bytes at `at[]` in items `extent`
 * bytes apart. */
typedef struct shape {
    const char *name;
    MPI_Datatype type;
    int per_item;
    size_t elem, extent, at[MAX_PER_ITEM];
} shape_t;

static shape_t commit(shape_t s)
{
    MPI_Aint lb, extent;
    MPI_Type_commit(&s.type);
    MPI_Type_get_extent(s.type, &lb, &extent);
    s.extent = (size_t) extent;
    return s;
}

static shape_t doubles_at_0_and_18(void)
{
    shape_t s = {.name = "hvector(2, 1, 18, double)", .per_item = 2, .elem = 8, .at = {0, 18}};
    MPI_Type_create_hvector(2, 1, 18, MPI_DOUBLE, &s.type);
    return commit(s);
}

static shape_t longs_scattered(void)
{
    shape_t s = {.name = "hvector(2, 1, 62, struct{ll@28, ll@10, ll@2})",
                 .per_item = 6,
                 .elem = 8,
                 .at = {28, 10, 2, 62 + 28, 62 + 10, 62 + 2}};
    int lens[3] = {1, 1, 1};
    MPI_Aint disps[3] = {28, 10, 2};
    MPI_Datatype types[3] = {MPI_LONG_LONG, MPI_LONG_LONG, MPI_LONG_LONG}, t;
    MPI_Type_create_struct(3, lens, disps, types, &t);
    MPI_Type_create_hvector(2, 1, 62, t, &s.type);
    MPI_Type_free(&t);
    return commit(s);
}

static shape_t longs_contiguous(void)
{
    shape_t s = {.name = "6 x long long", .per_item = 6, .elem = 8, .at = {0, 8, 16, 24, 32, 40}};
    MPI_Type_contiguous(6, MPI_LONG_LONG, &s.type);
    return commit(s);
}

/* Element e's 8 bytes (a double or a long long, exact either way). */
static void element_bytes(long e, int root, int is_double, unsigned char out[8])
{
    if (is_double) {
        double v = (double) e * 0.5 + root;
        memcpy(out, &v, 8);
    } else {
        long long v = e * 1000003LL - root;
        memcpy(out, &v, 8);
    }
}

/* The buffer as it must be: the poison, and the data where `s` has it. */
static void fill(unsigned char *b, size_t bytes, const shape_t *s, int items, int root, int is_double)
{
    memset(b, POISON, bytes);
    for (long e = 0; e < (long) items * s->per_item; ++e) {
        element_bytes(e, root, is_double, b + (e / s->per_item) * s->extent + s->at[e % s->per_item]);
    }
}

static int bcast(void *buf, int count, MPI_Datatype type, int root, int nonblocking)
{
    if (!nonblocking) return MPI_Bcast(buf, count, type, root, MPI_COMM_WORLD);
    MPI_Request req;
    int rc = MPI_Ibcast(buf, count, type, root, MPI_COMM_WORLD, &req);
    return rc != MPI_SUCCESS ? rc : MPI_Wait(&req, MPI_STATUS_IGNORE);
}

/* One broadcast of `items` items of `s` (`root_s` at the root) into a buffer
 * `shift` bytes past an 8-byte boundary; returns the wrong bytes here. */
static long long check(const shape_t *s, const shape_t *root_s, int items, int root, int shift, int nonblocking,
                       int is_double)
{
    const shape_t *mine = rank == root ? root_s : s;
    const size_t bytes = (size_t) items * mine->extent + 64;
    unsigned char *mem = malloc(bytes + 8), *ref = malloc(bytes);
    unsigned char *b = mem + shift;
    fill(ref, bytes, mine, items, root, is_double);
    if (rank == root)
        memcpy(b, ref, bytes);
    else
        memset(b, POISON, bytes);
    int rc = bcast(b, items, mine->type, root, nonblocking);
    if (rc != MPI_SUCCESS) fail("bcast of %d x %s from %d (shift %d) returned %d", items, mine->name, root, shift, rc);
    long long bad = 0;
    for (size_t i = 0; i < bytes; ++i) {
        if (b[i] != ref[i] && bad++ < 3) {
            fprintf(stderr, "rank %d: %d x %s, shift %d: byte %zu (item %zu, byte %zu) is 0x%02x, expected 0x%02x\n",
                    rank, items, mine->name, shift, i, i / mine->extent, i % mine->extent, b[i], ref[i]);
        }
    }
    free(mem);
    free(ref);
    return bad;
}

int main(int argc, char **argv)
{
    int counts[MAX_COUNTS] = {100, 1000, 49149}, ncounts = 3, root = 0, nonblocking = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    bcast_test_options(argc, argv, counts, MAX_COUNTS, &ncounts, &root, &nonblocking);
    shape_t doubles = doubles_at_0_and_18(), scattered = longs_scattered(), contiguous = longs_contiguous();
    const int shifts[] = {0, 2, 6};
    long long bad = 0, calls = 0;
    (void) adapt2_counter("coll_adapt2_bcast_calls"); /* counts from its first read */
    for (int i = 0; i < ncounts; ++i) {
        for (int k = 0; k < 3; ++k) {
            bad += check(&doubles, &doubles, counts[i], root, shifts[k], nonblocking, 1);
            bad += check(&scattered, &contiguous, counts[i], root, shifts[k], nonblocking, 0);
            calls += 2;
        }
    }
    const long long ran = adapt2_counter("coll_adapt2_bcast_calls");
    if (ran != calls) fail("adapt2 ran %lld of %lld broadcasts", ran, calls);
    MPI_Type_free(&doubles.type);
    MPI_Type_free(&scattered.type);
    MPI_Type_free(&contiguous.type);
    long long total = total_errors(bad, MPI_COMM_WORLD);
    if (rank == 0)
        printf("bcast_misaligned: %d counts x 3 shifts x 2 shapes, root %d, %lld wrong bytes\n", ncounts, root, total);
    MPI_Finalize();
    return total != 0;
}
