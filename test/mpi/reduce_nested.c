/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * An in-place MPI_Allreduce (MPI_MIN) of a nested vector type,
 * vector(4, 1, 1, vector(2, 1, 3, MPI_INT)): 8 ints in an extent of 16 with
 * holes between. With segments that end inside an element of the outer
 * vector (725 bytes), Open MPI 4.1's convertor crashed when adapt2 moved it
 * forward from a position it had rounded down (found by the fuzzer). Every
 * data int must hold the minimum over the ranks, every hole its own value.
 *   reduce_nested [count]    (default 32769)
 */
#include <stdio.h>
#include <stdlib.h>

#include "mpi_check.h"

#define INTS_PER_ELEMENT 16 /* the extent, in ints */

static int value(size_t i, int rank)
{
    return (int) ((i * 7 + (size_t) rank * 13) % 1000) - (int) (i % 5);
}

/* Whether int i of the buffer is data: inner vector(2, 1, 3) puts ints at 0
 * and 3 (extent 4 ints), the outer vector(4, 1, 1) repeats it 4 times. */
static int is_data(size_t i)
{
    size_t in_element = i % INTS_PER_ELEMENT;
    return in_element % 4 == 0 || in_element % 4 == 3;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Datatype inner, type;
    MPI_Type_vector(2, 1, 3, MPI_INT, &inner);
    MPI_Type_vector(4, 1, 1, inner, &type);
    MPI_Type_commit(&type);
    MPI_Aint lb, extent;
    MPI_Type_get_extent(type, &lb, &extent);
    if (extent != INTS_PER_ELEMENT * (MPI_Aint) sizeof(int)) fail("unexpected extent %ld", (long) extent);
    const int count = argc > 1 ? atoi(argv[1]) : 32769;
    const size_t n = (size_t) count * INTS_PER_ELEMENT;
    int *buf = malloc(n * sizeof(int));
    for (size_t i = 0; i < n; ++i) buf[i] = value(i, rank);
    int rc = MPI_Allreduce(MPI_IN_PLACE, buf, count, type, MPI_MIN, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) fail("MPI_Allreduce returned %d", rc);
    long bad = 0;
    for (size_t i = 0; i < n; ++i) {
        int want = value(i, rank);
        for (int r = 0; is_data(i) && r < size; ++r) want = value(i, r) < want ? value(i, r) : want;
        if (buf[i] != want && bad++ < 5)
            fprintf(stderr, "rank %d: int %zu (%s) is %d, expected %d\n", rank, i, is_data(i) ? "data" : "hole", buf[i],
                    want);
    }
    long total = 0;
    MPI_Allreduce(&bad, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (total) fail("%ld ints wrong over all ranks", total);
    if (rank == 0) printf("reduce_nested: np %d, %d elements: ok\n", size, count);
    MPI_Type_free(&type);
    MPI_Type_free(&inner);
    free(buf);
    MPI_Finalize();
    return 0;
}
