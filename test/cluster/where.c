/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * Where does every rank run? For the emulated cluster's tests.
 *
 *   where --nodes N --slots S --map slot|node [--prefix node]
 *
 * Every rank prints "rank R of P on HOST" (MPI_Get_processor_name), then
 * checks, for every rank of MPI_COMM_WORLD (gathered with MPI_Allgather):
 *  - its host is the one the mapping predicts: slot (block): rank r on node
 *    (r / S) % N; node (round-robin): rank r on node r % N;
 *  - Open MPI's own view of locality agrees: the ranks of this rank's
 *    MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) communicator are exactly the
 *    ranks whose host is this rank's host.
 * Each mismatch is printed by the rank that sees it; rank 0 prints
 * "where: OK, P ranks on K nodes" when no rank saw one. Exit status 1 on any
 * mismatch (every rank), 2 on bad arguments.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int expected_node(int r, int nodes, int slots, int by_node)
{
    return by_node ? r % nodes : (r / slots) % nodes;
}

int main(int argc, char **argv)
{
    int rank, size, nodes = 0, slots = 0, by_node = -1;
    const char *prefix = "node";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--nodes"))
            nodes = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--slots"))
            slots = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--prefix"))
            prefix = argv[i + 1];
        else if (!strcmp(argv[i], "--map"))
            by_node = !strcmp(argv[i + 1], "node") ? 1 : !strcmp(argv[i + 1], "slot") ? 0 : -1;
    }
    if (nodes < 1 || slots < 1 || by_node < 0 || argc % 2 == 0) {
        if (rank == 0) fprintf(stderr, "usage: where --nodes N --slots S --map slot|node [--prefix P]\n");
        MPI_Finalize();
        return 2;
    }

    char me[MPI_MAX_PROCESSOR_NAME] = {0};
    int len;
    MPI_Get_processor_name(me, &len);
    printf("rank %d of %d on %s\n", rank, size, me);
    fflush(stdout);

    char *all = calloc((size_t) size, MPI_MAX_PROCESSOR_NAME);
    MPI_Allgather(me, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, MPI_COMM_WORLD);
    int errors = 0;
    for (int r = 0; r < size; ++r) {
        char want[MPI_MAX_PROCESSOR_NAME];
        snprintf(want, sizeof(want), "%s%d", prefix, expected_node(r, nodes, slots, by_node));
        const char *got = all + (size_t) r * MPI_MAX_PROCESSOR_NAME;
        if (strcmp(got, want)) {
            printf("MISMATCH rank %d sees rank %d on %s, expected %s\n", rank, r, got, want);
            ++errors;
        }
    }

    /* Open MPI's locality: the shared-memory communicator is this host's ranks. */
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
    int lsize;
    MPI_Comm_size(local, &lsize);
    int *members = malloc(sizeof(int) * (size_t) lsize);
    MPI_Allgather(&rank, 1, MPI_INT, members, 1, MPI_INT, local);
    int same_host = 0;
    for (int r = 0; r < size; ++r) same_host += !strcmp(all + (size_t) r * MPI_MAX_PROCESSOR_NAME, me);
    if (same_host != lsize) {
        printf("MISMATCH rank %d: %d ranks share memory with it, %d share its host %s\n", rank, lsize, same_host, me);
        ++errors;
    }
    for (int i = 0; i < lsize; ++i) {
        if (strcmp(all + (size_t) members[i] * MPI_MAX_PROCESSOR_NAME, me)) {
            printf("MISMATCH rank %d: rank %d shares memory with it but runs on %s, not %s\n", rank, members[i],
                   all + (size_t) members[i] * MPI_MAX_PROCESSOR_NAME, me);
            ++errors;
        }
    }
    MPI_Comm_free(&local);

    int total = 0;
    MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (total == 0) {
            int distinct = 0;
            for (int r = 0; r < size; ++r) {
                int seen = 0;
                for (int q = 0; q < r && !seen; ++q)
                    seen =
                        !strcmp(all + (size_t) q * MPI_MAX_PROCESSOR_NAME, all + (size_t) r * MPI_MAX_PROCESSOR_NAME);
                distinct += !seen;
            }
            printf("where: OK, %d ranks on %d nodes\n", size, distinct);
        } else {
            printf("where: %d mismatch(es)\n", total);
        }
    }
    free(members);
    free(all);
    MPI_Finalize();
    return total ? 1 : 0;
}
