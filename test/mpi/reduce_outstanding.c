/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * Many outstanding MPI_Ireduce / MPI_Iallreduce calls at once on several
 * communicators (dup, reversed split, two halves, a shuffled split), with
 * mixed types and ops (non-commutative user op included), in place or not,
 * completed in an order that differs per rank (MPI_Wait in random order,
 * MPI_Waitany, MPI_Testsome polling). Each round also posts one call whose
 * user-defined op and one whose datatype are freed right after posting.
 * Every element is checked where the result is defined, and adapt2's
 * counters must show it ran every call (but those on a one-process half,
 * which adapt2 declines).
 *   reduce_outstanding [calls per round (24)] [rounds (4)]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reduce_common.h"

#define NCOMMS 4

static const struct {
    const char *type, *op;
} cases[] = {
    {"int", "sum"},         {"double", "max"},  {"dcomplex", "prod"},       {"mat2i", "matmul"},
    {"unsigned", "modsum"}, {"2int", "maxloc"}, {"float_int", "minloc"},    {"bool", "lxor"},
    {"byte", "bxor"},       {"llong", "band"},  {"contig:mat2i", "matmul"}, {"float", "sum"},
    {"mat2d", "matmul"},    {"short", "min"},
};
#define NCASES ((int) (sizeof cases / sizeof cases[0]))
static const int counts[] = {1, 3, 1000, 4097, 70000, 5};
#define NCOUNTS ((int) (sizeof counts / sizeof counts[0]))

int main(int argc, char **argv)
{
    int rank, size;
    mpi_start(&argc, &argv, 0, &rank, &size);
    int per_round = int_arg(argc, argv, 1, 24), rounds = int_arg(argc, argv, 2, 4);
    rc_init();

    rc_layout_t layouts[NCASES];
    for (int i = 0; i < NCASES; ++i) {
        if (rc_layout_create(cases[i].type, &layouts[i])) fail("unknown type %s", cases[i].type);
    }
    MPI_Comm comms[NCOMMS];
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[0]);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &comms[1]); /* ranks reversed */
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &comms[2]); /* two halves */
    MPI_Comm_split(MPI_COMM_WORLD, 0, (rank * 5) % size, &comms[3]);
    /* communicator creation runs collectives of its own: count after it */
    long long r0 = adapt2_counter("coll_adapt2_reduce_calls");
    long long a0 = adapt2_counter("coll_adapt2_allreduce_calls");
    long long f0 = adapt2_counter("coll_adapt2_fallbacks");
    if (r0 < 0 || a0 < 0 || f0 < 0) fail("adapt2's reduce/allreduce counters are missing");

    int total = per_round + 2;
    rc_call_t *calls = calloc(total, sizeof *calls);
    char(*what)[200] = calloc(total, sizeof *what);
    rc_layout_t *dup_layouts = calloc(rounds, sizeof *dup_layouts);
    MPI_Request *reqs = malloc(total * sizeof *reqs);
    int *order = malloc(total * sizeof *order), *done = malloc(total * sizeof *done);
    long long errors = 0, nreduce = 0, nallreduce = 0, ncalls = 0;
    unsigned shared = 12345, mine = 777u + 31u * (unsigned) rank; /* same draws on all ranks; own order */

    for (int round = 0; round < rounds; ++round) {
        rc_layout_create("dup:mat2i", &dup_layouts[round]);
        for (int i = 0; i < total; ++i) {
            rc_call_t *c = &calls[i];
            memset(c, 0, sizeof *c);
            int k = rand_r(&shared) % NCASES;
            c->comm = comms[rand_r(&shared) % NCOMMS];
            int csize;
            MPI_Comm_size(c->comm, &csize);
            c->l = &layouts[k];
            c->op = rc_find_op(cases[k].op);
            c->count = counts[rand_r(&shared) % NCOUNTS];
            c->all = rand_r(&shared) % 2;
            c->root = rand_r(&shared) % csize;
            c->inplace = rand_r(&shared) % 4 == 0;
            c->seed = (uint64_t) round * 1000 + (uint64_t) i;
            if (i == per_round) { /* its op freed right after posting */
                c->l = &layouts[3];
                c->op = rc_find_op("matmul");
                MPI_Op_create(rc_user_function(RC_MATMUL), 0, &c->mpi_op);
            } else if (i == per_round + 1) { /* its datatype freed right after posting */
                c->l = &dup_layouts[round];
                c->op = rc_find_op("matmul");
            }
            rc_call_prepare(c);
            rc_call_start(c, 1);
            reqs[i] = c->req;
            if (i == per_round) MPI_Op_free(&c->mpi_op);
            if (i == per_round + 1) MPI_Type_free(&dup_layouts[round].type); /* stays registered */
            if (csize > 1) c->all ? ++nallreduce : ++nreduce;                /* adapt2 declines 1-process comms */
            ++ncalls;
            snprintf(what[i], sizeof what[i], "rank %d: round %d call %d: i%s %s %s count %d root %d%s", rank, round, i,
                     c->all ? "allreduce" : "reduce", c->l->name, c->op->name, c->count, c->root,
                     c->inplace ? " in place" : "");
            order[i] = i;
            done[i] = 0;
        }
        for (int i = total - 1; i > 0; --i) {
            int j = rand_r(&mine) % (i + 1), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        int mode = round % 3, ndone = 0;
        while (ndone < total) {
            int idx[64], n = 0;
            if (mode == 0) { /* MPI_Wait in a random order */
                idx[n++] = order[ndone];
                MPI_Wait(&reqs[idx[0]], MPI_STATUS_IGNORE);
            } else if (mode == 1) {
                MPI_Waitany(total, reqs, &idx[0], MPI_STATUS_IGNORE);
                n = 1;
            } else {
                int out[256];
                if (total > 256) fail("too many calls for Testsome");
                MPI_Testsome(total, reqs, &n, out, MPI_STATUSES_IGNORE);
                if (n == MPI_UNDEFINED) fail("Testsome: no active requests left");
                for (int j = 0; j < n && j < 64; ++j) idx[j] = out[j];
            }
            for (int j = 0; j < n; ++j) {
                if (done[idx[j]]++) fail("request %d completed twice", idx[j]);
                errors += rc_call_check(&calls[idx[j]], what[idx[j]]);
                ++ndone;
            }
        }
        /* the freed type's object is gone now */
        dup_layouts[round].derived = 0;
    }
    long long dr = adapt2_counter("coll_adapt2_reduce_calls") - r0;
    long long da = adapt2_counter("coll_adapt2_allreduce_calls") - a0;
    long long df = adapt2_counter("coll_adapt2_fallbacks") - f0;
    if (dr != nreduce || da != nallreduce || df != 0) {
        fprintf(stderr, "rank %d: adapt2 ran %lld of %lld ireduce and %lld of %lld iallreduce calls, %lld fell back\n",
                rank, dr, nreduce, da, nallreduce, df);
        ++errors;
    }
    errors += rc_user_fn_errors();
    for (int c = 0; c < NCOMMS; ++c) MPI_Comm_free(&comms[c]);
    for (int i = 0; i < NCASES; ++i) rc_layout_free(&layouts[i]);
    long long sum = total_errors(errors, MPI_COMM_WORLD);
    if (rank == 0) printf("reduce_outstanding: np %d, %lld calls per rank: %s\n", size, ncalls, sum ? "FAILED" : "ok");
    free(calls);
    free(what);
    free(dup_layouts);
    free(reqs);
    free(order);
    free(done);
    rc_finalize();
    MPI_Finalize();
    return sum ? 1 : 0;
}
