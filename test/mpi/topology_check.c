/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * Multi-level trees under mpirun, with node boundaries declared by hand
 * (coll_adapt2_nodes, the program's first argument) or real ones (argument
 * "real": the nodes are the hosts, e.g. on the emulated cluster). For
 * MPI_COMM_WORLD, a split and a dup: bcast, reduce and allreduce, blocking
 * and not, several sizes and roots; every element checked on every rank.
 * Broadcasts are also counted: the segments all ranks sent to other nodes
 * must be exactly (nodes - 1) per segment, the minimum.
 *
 * Usage: topology_check NODES_SPEC   (block:N | cyclic:N | real)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"

static const char *spec;

/* The node of a world rank: from the declared spec, or the host's name. */
static int node_of_world_rank(int world_rank)
{
    int n = atoi(strchr(spec, ':') + 1);
    return 'b' == spec[0] ? world_rank / n : world_rank % n;
}

/* Nodes a communicator spans, as adapt2 should see them. */
static int nodes_of(MPI_Comm comm)
{
    int size, world_rank, me, count = 0;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &me);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    int *node = malloc((size_t) size * sizeof *node);
    if (0 == strcmp(spec, "real")) {
        char name[MPI_MAX_PROCESSOR_NAME] = {0}, *all = malloc((size_t) size * MPI_MAX_PROCESSOR_NAME);
        int len;
        MPI_Get_processor_name(name, &len);
        MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, comm);
        for (int r = 0; r < size; ++r) {
            node[r] = r;
            for (int q = 0; q < r; ++q) {
                if (0 == strcmp(all + q * MPI_MAX_PROCESSOR_NAME, all + r * MPI_MAX_PROCESSOR_NAME)) {
                    node[r] = node[q];
                    break;
                }
            }
        }
        free(all);
    } else {
        int mine = node_of_world_rank(world_rank);
        MPI_Allgather(&mine, 1, MPI_INT, node, 1, MPI_INT, comm);
    }
    for (int r = 0; r < size; ++r) {
        int seen = 0;
        for (int q = 0; q < r; ++q) seen |= node[q] == node[r];
        count += !seen;
    }
    free(node);
    return count;
}

/* Sum over the communicator of a counter's growth, without adapt2 (gather). */
static long long summed(long long mine, MPI_Comm comm)
{
    int size, rank;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    long long *all = malloc((size_t) size * sizeof *all), total = 0;
    MPI_Gather(&mine, 1, MPI_LONG_LONG, all, 1, MPI_LONG_LONG, 0, comm);
    for (int r = 0; rank == 0 && r < size; ++r) total += all[r];
    MPI_Bcast(&total, 1, MPI_LONG_LONG, 0, comm); /* adapt2: 8 bytes, counted below */
    free(all);
    return total;
}

/* counted: also check the inter-node segments (with decoupled completion
 * off: a call that completed early counts its sends when they are over). */
static void check_bcast(MPI_Comm comm, const char *name, int call, int root, size_t bytes, int nodes, long segment,
                        int blocking, int counted)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    unsigned char *buf = malloc(bytes);
    for (size_t i = 0; i < bytes; ++i) buf[i] = rank == root ? pattern_byte(call, root, i) : 0;
    long long before = adapt2_counter("coll_adapt2_internode_segments");
    if (blocking) {
        MPI_Bcast(buf, (int) bytes, MPI_BYTE, root, comm);
    } else {
        MPI_Request req;
        MPI_Ibcast(buf, (int) bytes, MPI_BYTE, root, comm, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    long long sent = adapt2_counter("coll_adapt2_internode_segments") - before;
    for (size_t i = 0; i < bytes; ++i) {
        if (buf[i] != pattern_byte(call, root, i)) {
            fail("%s bcast %zu bytes root %d: byte %zu is %u, expected %u", name, bytes, root, i, buf[i],
                 pattern_byte(call, root, i));
        }
    }
    free(buf);
    if (!counted) {
        return;
    }
    long long total = summed(sent, comm);
    long long segments = segment > 0 ? (long long) ((bytes + segment - 1) / segment) : 1;
    if (total != (nodes - 1) * segments) {
        fail("%s bcast %zu bytes root %d: %lld segments crossed nodes, expected (%d nodes - 1) x %lld", name, bytes,
             root, total, nodes, segments);
    }
}

static void check_reduction(MPI_Comm comm, const char *name, int call, int root, int count, int all, int blocking)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int *in = malloc((size_t) count * sizeof *in), *out = malloc((size_t) count * sizeof *out);
    for (int i = 0; i < count; ++i) {
        in[i] = rank * 1000 + (i * 7 + call) % 991;
        out[i] = -1;
    }
    reduce_call(in, out, count, MPI_INT, MPI_SUM, root, comm, all, blocking);
    for (int i = 0; (all || rank == root) && i < count; ++i) {
        int want = 0;
        for (int r = 0; r < size; ++r) want += r * 1000 + (i * 7 + call) % 991;
        if (out[i] != want) {
            fail("%s %s of %d ints root %d: element %d is %d, expected %d", name, all ? "allreduce" : "reduce", count,
                 root, i, out[i], want);
        }
    }
    free(in);
    free(out);
}

/* Hops from the root node to the farthest in the node tree (the engine's
 * node_tree_depth): a pipeline's nodes, a chain's share, else log2-deep. */
static int node_tree_depth(size_t bytes, int nodes, long base)
{
    int pipeline = adapt2_enum_is("coll_adapt2_node_algorithm", "pipeline");
    if (adapt2_enum_is("coll_adapt2_node_algorithm", "auto")) {
        long segments = base > 0 ? (long) ((bytes + (size_t) base - 1) / (size_t) base) : 1;
        pipeline = nodes <= 2 * segments + 8;
    }
    if (pipeline) return nodes;
    if (adapt2_enum_is("coll_adapt2_node_algorithm", "chain")) {
        const long chains = adapt2_get_long("coll_adapt2_bcast_chains");
        return (int) ((nodes + chains - 1) / chains);
    }
    int depth = 0;
    for (int n = nodes; n > 0; n >>= 1) ++depth;
    return depth;
}

/* Bytes per broadcast message of `bytes` between node leaders: node_segment_size
 * in whole segments of the smallest level size; else from 64 KiB across nodes
 * sqrt(bytes x node_message_cost / node tree depth), a power of two in [8 KiB,
 * topology_segment_size]; else topology_segment_size (0: unsegmented). */
static long node_message_bytes(size_t bytes, int nodes)
{
    const long base = adapt2_get_long("coll_adapt2_topology_segment_size");
    const long node = adapt2_get_long("coll_adapt2_node_segment_size");
    const long numa = adapt2_get_long("coll_adapt2_numa_segment_size");
    const long cost = adapt2_get_long("coll_adapt2_node_message_cost");
    if (base == 0) return 0;
    if (node == 0) {
        if (nodes < 2 || bytes < (64u << 10) || cost == 0) return base;
        const double best_squared = (double) bytes * (double) cost / node_tree_depth(bytes, nodes, base);
        long segment = 8 << 10;
        while ((double) (segment * 2) * (double) (segment * 2) <= best_squared) segment *= 2;
        return segment < base ? segment : base;
    }
    long cut = base < node ? base : node;
    if (numa > 0 && numa < cut) cut = numa;
    return node / cut * cut;
}

/* Every collective with the default settings (calls may complete early),
 * then broadcasts again with decoupling off, counted. */
static void run_all(MPI_Comm comm, const char *name)
{
    int size, call = 0;
    MPI_Comm_size(comm, &size);
    const int nodes = nodes_of(comm);
    const long detach_default = adapt2_get_long("coll_adapt2_detach_max_message");
    const size_t sizes[] = {1, 1000, 300000, 3u << 20};
    for (int s = 0; s < 4; ++s) {
        for (int root = 0; root < size; root += (size > 4 ? size / 3 : 1)) {
            for (int blocking = 0; blocking < 2; ++blocking) {
                check_bcast(comm, name, ++call, root, sizes[s], nodes, node_message_bytes(sizes[s], nodes), blocking,
                            0);
                check_reduction(comm, name, ++call, root, (int) (sizes[s] / 4 + 1), 0, blocking);
                check_reduction(comm, name, ++call, root, (int) (sizes[s] / 4 + 1), 1, blocking);
            }
        }
    }
    adapt2_set_long("coll_adapt2_detach_max_message", 0);
    for (int s = 0; s < 4; ++s) {
        for (int root = 0; root < size; root += (size > 4 ? size / 3 : 1)) {
            check_bcast(comm, name, ++call, root, sizes[s], nodes, node_message_bytes(sizes[s], nodes), root % 2, 1);
        }
    }
    adapt2_set_long("coll_adapt2_detach_max_message", detach_default);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc < 2 || (strcmp(argv[1], "real") && !strchr(argv[1], ':'))) {
        fail("usage: topology_check block:N|cyclic:N|real");
    }
    spec = argv[1];
    adapt2_counter("coll_adapt2_bcast_calls"); /* counters grow from here */
    adapt2_counter("coll_adapt2_internode_segments");
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    run_all(MPI_COMM_WORLD, "world");
    MPI_Comm half, dup;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half); /* reversed order: node ids not by rank */
    run_all(half, "split");
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    run_all(dup, "dup");
    MPI_Comm_free(&half);
    MPI_Comm_free(&dup);
    if (adapt2_counter("coll_adapt2_bcast_calls") <= 0) fail("adapt2 did not run the broadcasts");
    if (0 == rank) printf("topology_check %s: all data and inter-node counts as expected\n", spec);
    MPI_Finalize();
    return 0;
}
