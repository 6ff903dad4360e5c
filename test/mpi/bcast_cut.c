/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * Broadcasts whose segment edges cut predefined elements in two: a struct
 * {double; char; int} (13 packed bytes in a 16-byte extent) and a signature of
 * 3 x short + 5 x char (11 packed bytes) that every rank lays out its own way.
 * Segment edges are byte counts (256 KiB between nodes by default), so they
 * fall inside a double or a short; Open MPI's convertor moves whole elements
 * only (the bug of issue 13: MPI_ERR_OTHER on the root, the others hung).
 * Checks every element on every rank and that holes keep their poison.
 *
 *   bcast_cut [--counts N,N..] [--root R] [--nonblocking]
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"

#define POISON 0x5A
#define MAX_COUNTS 16

static int rank, size;

typedef struct s13 {
    double d;
    char c;
    int i;
} s13_t;

static MPI_Datatype struct13_type(void)
{
    int lens[3] = {1, 1, 1};
    MPI_Aint disps[3] = {offsetof(s13_t, d), offsetof(s13_t, c), offsetof(s13_t, i)};
    MPI_Datatype types[3] = {MPI_DOUBLE, MPI_CHAR, MPI_INT}, t, resized;
    MPI_Type_create_struct(3, lens, disps, types, &t);
    MPI_Type_create_resized(t, 0, sizeof(s13_t), &resized);
    MPI_Type_free(&t);
    MPI_Type_commit(&resized);
    return resized;
}

static int bcast(void *buf, int count, MPI_Datatype type, int root, int nonblocking)
{
    if (!nonblocking) return MPI_Bcast(buf, count, type, root, MPI_COMM_WORLD);
    MPI_Request req;
    int rc = MPI_Ibcast(buf, count, type, root, MPI_COMM_WORLD, &req);
    return rc != MPI_SUCCESS ? rc : MPI_Wait(&req, MPI_STATUS_IGNORE);
}

static long long check_struct13(int count, int root, int nonblocking, MPI_Datatype type)
{
    s13_t *b = malloc((size_t) count * sizeof *b + 1);
    memset(b, POISON, (size_t) count * sizeof *b);
    for (int k = 0; rank == root && k < count; ++k) {
        b[k].d = k * 0.5 + root;
        b[k].c = (char) (k % 101);
        b[k].i = k * 3 - root;
    }
    int rc = bcast(b, count, type, root, nonblocking);
    if (rc != MPI_SUCCESS) fail("struct13 bcast of %d from %d returned %d", count, root, rc);
    long long bad = 0;
    for (int k = 0; k < count; ++k) {
        const unsigned char *raw = (const unsigned char *) &b[k];
        int holes_ok = raw[offsetof(s13_t, c) + 1] == POISON && raw[offsetof(s13_t, i) - 1] == POISON;
        if (b[k].d != k * 0.5 + root || b[k].c != (char) (k % 101) || b[k].i != k * 3 - root ||
            (rank != root && !holes_ok)) {
            if (bad++ < 3) fprintf(stderr, "rank %d: struct13 element %d of %d wrong\n", rank, k, count);
        }
    }
    free(b);
    return bad;
}

/* Per element: 3 shorts, then 5 chars. Each rank picks a layout by rank. */
typedef struct layout {
    MPI_Datatype type;
    int per_type;                         /* elements of the signature per datatype item */
    size_t extent;                        /* bytes per datatype item */
    size_t short_at[2][3], char_at[2][5]; /* byte offsets inside the item */
} layout_t;

/* One signature element per item: 3 shorts from byte `shorts`, 5 chars from
 * byte `chars` (the struct keeps the signature order whatever the memory
 * order), items `extent` bytes apart. */
static layout_t one_element(size_t shorts, size_t chars, size_t extent)
{
    layout_t l = {0};
    MPI_Datatype t;
    int lens[2] = {3, 5};
    MPI_Aint disps[2] = {(MPI_Aint) shorts, (MPI_Aint) chars};
    MPI_Datatype types[2] = {MPI_SHORT, MPI_CHAR};
    MPI_Type_create_struct(2, lens, disps, types, &t);
    MPI_Type_create_resized(t, 0, (MPI_Aint) extent, &l.type);
    MPI_Type_free(&t);
    MPI_Type_commit(&l.type);
    l.per_type = 1;
    l.extent = extent;
    for (int i = 0; i < 3; ++i) l.short_at[0][i] = shorts + 2 * i;
    for (int i = 0; i < 5; ++i) l.char_at[0][i] = chars + i;
    return l;
}

/* Two signature elements per item, each with holes. */
static layout_t two_elements(void)
{
    layout_t l = {0};
    MPI_Datatype t;
    int lens[4] = {3, 5, 3, 5};
    MPI_Aint disps[4] = {0, 8, 16, 24};
    MPI_Datatype types[4] = {MPI_SHORT, MPI_CHAR, MPI_SHORT, MPI_CHAR};
    MPI_Type_create_struct(4, lens, disps, types, &t);
    MPI_Type_create_resized(t, 0, 32, &l.type);
    MPI_Type_free(&t);
    MPI_Type_commit(&l.type);
    l.per_type = 2;
    l.extent = 32;
    for (int e = 0; e < 2; ++e) {
        for (int i = 0; i < 3; ++i) l.short_at[e][i] = 16 * e + 2 * i;
        for (int i = 0; i < 5; ++i) l.char_at[e][i] = 16 * e + 8 + i;
    }
    return l;
}

/* Each rank lays the signature out its own way. */
static layout_t make_layout(int r)
{
    switch (r % 3) {
    case 0: return one_element(0, 6, 16);  /* packed, then padded */
    case 1: return one_element(12, 1, 20); /* chars first in memory, shorts after a gap */
    default: return two_elements();
    }
}

static short short_value(long e, int i, int root)
{
    return (short) (e * 7 + i * 1000 + root);
}
static char char_value(long e, int i, int root)
{
    return (char) (e * 13 + i * 31 + root);
}

static long long check_mixed(int elements, int root, int nonblocking)
{
    layout_t l = make_layout(rank);
    int items = elements / l.per_type; /* elements is even: every layout fits */
    size_t bytes = (size_t) items * l.extent;
    unsigned char *b = malloc(bytes + 1), *ref = malloc(bytes + 1);
    memset(b, POISON, bytes);
    for (long e = 0; e < elements; ++e) {
        unsigned char *item = b + (e / l.per_type) * l.extent;
        int k = (int) (e % l.per_type);
        for (int i = 0; i < 3 && rank == root; ++i) {
            short v = short_value(e, i, root);
            memcpy(item + l.short_at[k][i], &v, sizeof v);
        }
        for (int i = 0; i < 5 && rank == root; ++i) item[l.char_at[k][i]] = (unsigned char) char_value(e, i, root);
    }
    memcpy(ref, b, bytes);
    int rc = bcast(b, items, l.type, root, nonblocking);
    if (rc != MPI_SUCCESS) fail("mixed bcast of %d elements from %d returned %d", elements, root, rc);
    /* expected: the data where the layout has it, the poison elsewhere */
    for (long e = 0; e < elements && rank != root; ++e) {
        unsigned char *item = ref + (e / l.per_type) * l.extent;
        int k = (int) (e % l.per_type);
        for (int i = 0; i < 3; ++i) {
            short v = short_value(e, i, root);
            memcpy(item + l.short_at[k][i], &v, sizeof v);
        }
        for (int i = 0; i < 5; ++i) item[l.char_at[k][i]] = (unsigned char) char_value(e, i, root);
    }
    long long bad = 0;
    for (size_t i = 0; i < bytes; ++i) {
        if (b[i] != ref[i] && bad++ < 3) {
            fprintf(stderr, "rank %d: mixed byte %zu of %zu (item %zu) is %d, expected %d\n", rank, i, bytes,
                    i / l.extent, b[i], ref[i]);
        }
    }
    MPI_Type_free(&l.type);
    free(b);
    free(ref);
    return bad;
}

int main(int argc, char **argv)
{
    int counts[MAX_COUNTS] = {1000, 20000, 65530, 70000, 100001}, ncounts = 5, root = 0, nonblocking = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    bcast_test_options(argc, argv, counts, MAX_COUNTS, &ncounts, &root, &nonblocking);
    MPI_Datatype s13 = struct13_type();
    long long bad = 0, calls = adapt2_counter("coll_adapt2_bcast_calls");
    for (int i = 0; i < ncounts; ++i) {
        bad += check_struct13(counts[i], root, nonblocking, s13);
        bad += check_mixed(counts[i] & ~1, root, nonblocking);
    }
    calls = adapt2_counter("coll_adapt2_bcast_calls");
    if (calls != 2 * ncounts) fail("adapt2 ran %lld of %d broadcasts", calls, 2 * ncounts);
    MPI_Type_free(&s13);
    long long total = total_errors(bad, MPI_COMM_WORLD);
    if (rank == 0) printf("bcast_cut: %d counts, root %d, %lld wrong elements\n", ncounts, root, total);
    MPI_Finalize();
    return total != 0;
}
