/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * MPI_Reduce / MPI_Ireduce / MPI_Allreduce / MPI_Iallreduce correctness on
 * MPI_COMM_WORLD: every unit of every element on every rank where the result
 * is defined is compared with the serial left-to-right result in rank order;
 * holes of derived types in the receive buffer must stay untouched, send
 * buffers must not change, and adapt2's MPI_T counters must show that adapt2
 * ran exactly the calls the spec gives it (and handed the others to the
 * previous component). Run under mpirun by the test/mpi/reduce_*.sh scripts.
 *
 *   reduce_check [--coll reduce,ireduce,allreduce,iallreduce]
 *                [--ops all|max,min,sum,prod,land,lor,lxor,band,bor,bxor,maxloc,minloc,matmul,modsum]
 *                [--types all|T,T..]   T: a base (int, double, dcomplex, bool, byte, double_int,
 *                                      mat2i, ...) or SHAPE:BASE, SHAPE in contig, vector,
 *                                      indexed, resized
 *                [--counts N,N..] (elements) | [--sizes B,B..] (bytes of packed data)
 *                [--roots all|R,R..] [--algorithms A,..] (reduce)
 *                [--allreduce-algorithms A,..] [--segsizes B,..] [--windows R:S,..]
 *                [--inplace[=both]] [--iters N] [--expect adapt2|previous|none]
 *                [--reproducible] [--random] [--delays] [--seed N] [--digest FILE]
 *                [--no-null-recv] [--counters-only]
 *
 * Ops are run on the types MPI allows them for (others are skipped). The
 * default counts straddle the segment size in force (read through MPI_T) and
 * the number of ranks. --segsizes sets the segment size of the collective
 * being run (reduce or allreduce family).
 *
 * --expect adapt2 (default): every call is run by adapt2, except those the
 * spec hands to the previous component (user-defined op on a non-contiguous
 * derived type, a derived type built from a pair type with holes, algorithm
 * "previous"), which must show in coll_adapt2_fallbacks instead.
 * --expect previous: every call falls back. --expect none: no counter check.
 *
 * --random: floating SUM/PROD of values that do not sum exactly (varying
 * magnitudes); results are checked against a rounding-error bound, and must
 * be bitwise identical over --iters repetitions and between the blocking and
 * non-blocking call of the same family (and, for allreduce, on every rank).
 * Meant for --reproducible (sets coll_adapt2_reproducible 1). --delays adds
 * random per-rank sleeps and computation around the calls so that arrival
 * orders vary. --digest FILE writes a digest of all results (rank 0), to
 * compare separate runs.
 *
 * Rank 0 also prints the fewest and the most calls any rank ran on adapt2's
 * direct path (coll_adapt2_direct_calls; test/mpi/direct.sh).
 *
 * Non-root ranks pass a NULL receive buffer to every other reduce (it is not
 * significant there) unless --no-null-recv. --counters-only skips the result
 * check (send buffers and counters are still checked): for calls that go to
 * a previous component known to compute them wrongly.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "reduce_common.h"

#define MAX_LIST 64
#define SHARE_BYTES (256 << 10)
enum { C_REDUCE, C_IREDUCE, C_ALLREDUCE, C_IALLREDUCE };
static const char *coll_names[4] = {"reduce", "ireduce", "allreduce", "iallreduce"};

typedef struct options {
    int coll[4];
    const char *ops[MAX_LIST];
    int nops;
    const char *types[MAX_LIST];
    int ntypes;
    long counts[MAX_LIST];
    int ncounts, counts_in_bytes;
    int roots[MAX_LIST], nroots;
    char *ralgos[MAX_LIST], *aalgos[MAX_LIST];
    int nralgos, naalgos;
    long segsizes[MAX_LIST];
    int nsegsizes;
    int rwin[MAX_LIST], swin[MAX_LIST], nwindows;
    int inplace; /* 0: no, 1: only in place, 2: both */
    int iters;
    const char *expect;
    int random, delays, reproducible, null_recv, counters_only;
    unsigned seed;
    const char *digest;
} options_t;

static int rank, size;
static long long errors;
static unsigned jitter_state;

/* ------------------------------------------------------------------ */
/* Spec items (control variables, counters) that adapt2 lacks. */

static long long spec_missing(const char *item)
{
    static char seen[32][96];
    static int nseen;
    for (int i = 0; i < nseen; ++i) {
        if (!strcmp(seen[i], item)) return 0;
    }
    if (nseen < 32) snprintf(seen[nseen++], sizeof seen[0], "%s", item);
    if (rank == 0) fprintf(stderr, "SPEC NOT MET: %s\n", item);
    return 1;
}

static int cvar_exists(const char *name)
{
    int index;
    adapt2_counter("coll_adapt2_fallbacks"); /* initialises MPI_T */
    return MPI_T_cvar_get_index(name, &index) == MPI_SUCCESS;
}

/* Sets an adapt2 control variable if it exists; a missing one is a spec
 * failure unless nothing is expected of adapt2. Returns 1 if set. */
static int set_cvar(const options_t *o, const char *name, const char *svalue, long lvalue, int is_int)
{
    char item[128];
    if (!cvar_exists(name)) {
        snprintf(item, sizeof item, "control variable %s is missing", name);
        if (strcmp(o->expect, "none"))
            errors += spec_missing(item);
        else if (rank == 0)
            spec_missing(item);
        return 0;
    }
    if (svalue)
        adapt2_set_string(name, svalue);
    else if (is_int)
        adapt2_set_int(name, (int) lvalue);
    else
        adapt2_set_long(name, lvalue);
    return 1;
}

/* ------------------------------------------------------------------ */

static void jitter(const options_t *o)
{
    if (!o->delays) return;
    unsigned r = (unsigned) rand_r(&jitter_state);
    if (r % 3 == 0) {
        usleep(r % 1500);
    } else if (r % 3 == 1) {
        volatile double x = 1;
        for (unsigned i = 0; i < (r >> 4) % 40000; ++i) x = x * 1.0000001 + 1e-9;
    }
}

static uint64_t fnv(uint64_t h, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001B3ull;
    return h;
}

/* Results of one group of calls that must be bitwise identical (--random). */
typedef struct group {
    unsigned char *first;
    size_t n;
    char first_what[300];
} group_t;

static uint64_t digest = 0xCBF29CE484222325ull;
static int call_number;

typedef struct tally {
    long long adapt2[2], fallback, maybe[2]; /* per family: reduce, allreduce */
} tally_t;

/* One call; returns nothing, adds to errors. */
static void run_call(const options_t *o, int coll, const rc_layout_t *l, const rc_op_t *op, int count, int root,
                     int inplace, uint64_t seed, group_t *g, const char *ctx)
{
    int all = coll >= C_ALLREDUCE, holds = all || rank == root;
    size_t bytes = (size_t) count * l->extent;
    char what[300];
    if (all)
        snprintf(what, sizeof what, "rank %d: %s %s %s count %d%s [%s]", rank, coll_names[coll], l->name, op->name,
                 count, inplace ? " in place" : "", ctx);
    else
        snprintf(what, sizeof what, "rank %d: %s %s %s count %d root %d%s [%s]", rank, coll_names[coll], l->name,
                 op->name, count, root, inplace ? " in place" : "", ctx);
    ++call_number;

    unsigned char *sbuf = malloc(bytes + 1), *scopy = malloc(bytes + 1), *rbuf = NULL;
    if (!sbuf || !scopy) fail("out of memory (%zu bytes)", bytes);
    rc_fill(l, op, sbuf, count, rank, size, seed, o->random);
    memcpy(scopy, sbuf, bytes);
    if (holds) {
        rbuf = malloc(bytes + 1);
        if (!rbuf) fail("out of memory (%zu bytes)", bytes);
        if (inplace)
            memcpy(rbuf, sbuf, bytes);
        else
            memset(rbuf, RC_POISON, bytes);
    } else if (!o->null_recv || call_number % 2) {
        rbuf = malloc(bytes + 1); /* not significant at non-roots: left unchecked */
        memset(rbuf, RC_POISON, bytes);
    }
    const void *send = inplace && holds ? MPI_IN_PLACE : sbuf;

    jitter(o);
    MPI_Request req;
    int rc = MPI_SUCCESS;
    switch (coll) {
    case C_REDUCE: rc = MPI_Reduce(send, rbuf, count, l->type, op->op, root, MPI_COMM_WORLD); break;
    case C_IREDUCE: rc = MPI_Ireduce(send, rbuf, count, l->type, op->op, root, MPI_COMM_WORLD, &req); break;
    case C_ALLREDUCE: rc = MPI_Allreduce(send, rbuf, count, l->type, op->op, MPI_COMM_WORLD); break;
    case C_IALLREDUCE: rc = MPI_Iallreduce(send, rbuf, count, l->type, op->op, MPI_COMM_WORLD, &req); break;
    }
    if (rc != MPI_SUCCESS) fail("%s: returned %d", what, rc);
    if (coll == C_IREDUCE || coll == C_IALLREDUCE) {
        jitter(o);
        if (call_number % 3 == 0) { /* poll instead of waiting */
            int done = 0;
            while (!done) MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        } else {
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
    }

    long long e = 0;
    /* Large allreduce results: rank 0 compares with the serial result, the
     * others must hold exactly rank 0's bits (saves np-1 serial computations). */
    int share = all && !o->random && bytes >= SHARE_BYTES;
    if (holds && !o->counters_only) {
        if (o->random) {
            e += rc_compare_approx(l, op, rbuf, count, size, seed, what);
            size_t n = rc_sig_bytes(l, count);
            unsigned char *bits = malloc(n + 1);
            rc_pack_sig(l, rbuf, count, bits);
            if (!g->first) {
                g->first = bits;
                g->n = n;
                snprintf(g->first_what, sizeof g->first_what, "%s", what);
                digest = fnv(digest, bits, n);
                bits = NULL;
            } else if (memcmp(bits, g->first, n)) {
                size_t at = 0;
                while (at < n && bits[at] == g->first[at]) ++at;
                if (rc_may_print())
                    fprintf(stderr,
                            "coll_adapt2_reproducible: %s: result differs bitwise (first at "
                            "packed byte %zu) from the first call of its group (%s)\n",
                            what, at, g->first_what);
                ++e;
            }
            free(bits);
        } else if (share && rank != 0) { /* must equal rank 0's result, checked there */
            size_t n = rc_sig_bytes(l, count);
            unsigned char *mine = malloc(n + 1), *theirs = malloc(n + 1);
            rc_pack_sig(l, rbuf, count, mine);
            MPI_Recv(theirs, (int) n, MPI_BYTE, 0, 4244, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (memcmp(mine, theirs, n)) {
                size_t at = 0;
                while (at < n && mine[at] == theirs[at]) ++at;
                if (rc_may_print())
                    fprintf(stderr, "%s: result differs from rank 0's (checked there) from packed byte %zu on\n", what,
                            at);
                ++e;
            }
            e += rc_check_holes(l, rbuf, count, what);
            free(mine);
            free(theirs);
        } else {
            unsigned char *want = malloc(bytes + 1);
            rc_expected(l, op, want, count, size, seed);
            e += rc_compare(l, rbuf, want, count, what);
            free(want);
            if (share) {
                size_t n = rc_sig_bytes(l, count);
                unsigned char *mine = malloc(n + 1);
                rc_pack_sig(l, rbuf, count, mine);
                for (int r = 1; r < size; ++r) MPI_Send(mine, (int) n, MPI_BYTE, r, 4244, MPI_COMM_WORLD);
                free(mine);
            }
        }
    }
    if (!inplace || !holds) {
        if (memcmp(sbuf, scopy, bytes)) {
            if (rc_may_print()) fprintf(stderr, "%s: the send buffer was modified\n", what);
            ++e;
        }
    }
    errors += e;
    free(sbuf);
    free(scopy);
    free(rbuf);
}

/* --random, allreduce: every rank must hold rank 0's bits. */
static void compare_across_ranks(group_t *g)
{
    if (rank == 0) {
        for (int r = 1; r < size; ++r) MPI_Send(g->first, (int) g->n, MPI_BYTE, r, 4242, MPI_COMM_WORLD);
    } else {
        unsigned char *theirs = malloc(g->n + 1);
        MPI_Recv(theirs, (int) g->n, MPI_BYTE, 0, 4242, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (memcmp(theirs, g->first, g->n)) {
            if (rc_may_print())
                fprintf(stderr,
                        "coll_adapt2_reproducible: %s: allreduce result differs bitwise "
                        "from rank 0's\n",
                        g->first_what);
            ++errors;
        }
        free(theirs);
    }
}

static int default_counts(const rc_layout_t *l, long seg, long *out)
{
    long segc = seg / (long) l->size;
    if (segc < 1) segc = 1;
    long c[] = {1, 2, size - 1, size + 1, segc - 1, segc, segc + 1, 2 * segc + size + 1};
    int n = 0;
    for (size_t i = 0; i < sizeof c / sizeof c[0]; ++i) {
        int dup = c[i] < 1;
        for (int j = 0; j < n && !dup; ++j) dup = out[j] == c[i];
        if (!dup) out[n++] = c[i];
    }
    return n;
}

static void parse(int argc, char **argv, options_t *o)
{
    enum { O_AALG = 256, O_NONULL, O_CONLY };
    static struct option longopts[] = {{"coll", 1, 0, 'c'},
                                       {"ops", 1, 0, 'o'},
                                       {"types", 1, 0, 't'},
                                       {"counts", 1, 0, 'n'},
                                       {"sizes", 1, 0, 's'},
                                       {"roots", 1, 0, 'r'},
                                       {"algorithms", 1, 0, 'a'},
                                       {"allreduce-algorithms", 1, 0, O_AALG},
                                       {"segsizes", 1, 0, 'g'},
                                       {"windows", 1, 0, 'w'},
                                       {"inplace", 2, 0, 'p'},
                                       {"iters", 1, 0, 'i'},
                                       {"expect", 1, 0, 'e'},
                                       {"reproducible", 0, 0, 'R'},
                                       {"random", 0, 0, 'X'},
                                       {"delays", 0, 0, 'D'},
                                       {"seed", 1, 0, 'S'},
                                       {"digest", 1, 0, 'G'},
                                       {"no-null-recv", 0, 0, O_NONULL},
                                       {"counters-only", 0, 0, O_CONLY},
                                       {0, 0, 0, 0}};
    static const char *default_types[] = {"int",      "unsigned", "llong",     "float",      "double",    "ldouble",
                                          "fcomplex", "dcomplex", "bool",      "byte",       "float_int", "double_int",
                                          "long_int", "2int",     "short_int", "ldouble_int"};
    char *items[MAX_LIST];
    int ch, n;
    memset(o, 0, sizeof *o);
    o->iters = 1;
    o->expect = "adapt2";
    o->null_recv = 1;
    o->seed = 1;
    while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (ch) {
        case 'c':
            n = split_list(optarg, items, MAX_LIST);
            for (int i = 0; i < n; ++i) {
                int k;
                for (k = 0; k < 4 && strcmp(items[i], coll_names[k]); ++k) {
                }
                if (k == 4) fail("unknown collective %s", items[i]);
                o->coll[k] = 1;
            }
            break;
        case 'o':
            if (!strcmp(optarg, "all"))
                o->nops = rc_all_ops(o->ops, MAX_LIST);
            else
                o->nops = split_list(optarg, (char **) o->ops, MAX_LIST);
            break;
        case 't':
            if (!strcmp(optarg, "all")) {
                o->ntypes = rc_all_bases(o->types, MAX_LIST) - 2; /* not mat2i, mat2d */
            } else {
                o->ntypes = split_list(optarg, (char **) o->types, MAX_LIST);
            }
            break;
        case 'n':
        case 's':
            o->ncounts = parse_longs(optarg, o->counts, MAX_LIST);
            o->counts_in_bytes = ch == 's';
            break;
        case 'r':
            if (strcmp(optarg, "all")) o->nroots = parse_ints(optarg, o->roots, MAX_LIST);
            break;
        case 'a': o->nralgos = split_list(optarg, o->ralgos, MAX_LIST); break;
        case O_AALG: o->naalgos = split_list(optarg, o->aalgos, MAX_LIST); break;
        case 'g': o->nsegsizes = parse_longs(optarg, o->segsizes, MAX_LIST); break;
        case 'w': o->nwindows = parse_windows(optarg, o->rwin, o->swin, MAX_LIST); break;
        case 'p': o->inplace = optarg && !strcmp(optarg, "both") ? 2 : 1; break;
        case 'i': o->iters = atoi(optarg); break;
        case 'e': o->expect = optarg; break;
        case 'R': o->reproducible = 1; break;
        case 'X': o->random = 1; break;
        case 'D': o->delays = 1; break;
        case 'S': o->seed = (unsigned) atol(optarg); break;
        case 'G': o->digest = optarg; break;
        case O_NONULL: o->null_recv = 0; break;
        case O_CONLY: o->counters_only = 1; break;
        default: fail("usage: see the comment at the top of reduce_check.c");
        }
    }
    if (strcmp(o->expect, "adapt2") && strcmp(o->expect, "previous") && strcmp(o->expect, "none"))
        fail("--expect adapt2|previous|none");
    if (!o->coll[0] && !o->coll[1] && !o->coll[2] && !o->coll[3]) o->coll[0] = o->coll[1] = o->coll[2] = o->coll[3] = 1;
    if (!o->nops) o->nops = rc_all_ops(o->ops, MAX_LIST);
    if (!o->ntypes) {
        o->ntypes = sizeof default_types / sizeof default_types[0];
        memcpy(o->types, default_types, sizeof default_types);
    }
}

int main(int argc, char **argv)
{
    options_t o;
    tally_t tally = {{0, 0}, 0, {0, 0}};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    parse(argc, argv, &o);
    rc_init();
    jitter_state = o.seed * 7919u + (unsigned) rank * 104729u + 17u;

    int check_counters = strcmp(o.expect, "none") != 0;
    static const char *counter_names[3] = {"coll_adapt2_reduce_calls", "coll_adapt2_allreduce_calls",
                                           "coll_adapt2_fallbacks"};
    long long c0[3], direct0 = adapt2_counter("coll_adapt2_direct_calls");
    long long sent0 = adapt2_counter("coll_adapt2_bytes_sent");
    for (int i = 0; i < 3; ++i) {
        c0[i] = adapt2_counter(counter_names[i]);
        if (c0[i] < 0 && check_counters) {
            char item[128];
            snprintf(item, sizeof item, "MPI_T counter %s is missing", counter_names[i]);
            errors += spec_missing(item);
        }
    }
    if (o.reproducible) set_cvar(&o, "coll_adapt2_reproducible", NULL, 1, 1);

    int ncalls = 0, ngroups = 0;
    for (int fam = 0; fam < 2; ++fam) {
        if (!o.coll[2 * fam] && !o.coll[2 * fam + 1]) continue;
        char **algos = fam ? o.aalgos : o.ralgos;
        int na = fam ? o.naalgos : o.nralgos;
        const char *algparam = fam ? "coll_adapt2_allreduce_algorithm" : "coll_adapt2_reduce_algorithm";
        const char *segparam = fam ? "coll_adapt2_allreduce_segment_size" : "coll_adapt2_reduce_segment_size";
        for (int a = 0; a < (na ? na : 1); ++a) {
            int previous = 0;
            if (na) {
                set_cvar(&o, algparam, algos[a], 0, 0);
                previous = !strcmp(algos[a], "previous");
            }
            for (int g = 0; g < (o.nsegsizes ? o.nsegsizes : 1); ++g) {
                if (o.nsegsizes) set_cvar(&o, segparam, NULL, o.segsizes[g], 0);
                long seg = adapt2_get_long(segparam);
                if (seg <= 0) seg = seg == 0 ? 65536 : 4096; /* 0: unsegmented; -1: not there */
                for (int w = 0; w < (o.nwindows ? o.nwindows : 1); ++w) {
                    if (o.nwindows) {
                        set_cvar(&o, "coll_adapt2_recv_window", NULL, o.rwin[w], 1);
                        set_cvar(&o, "coll_adapt2_send_window", NULL, o.swin[w], 1);
                    }
                    char ctx[160];
                    snprintf(ctx, sizeof ctx, "algorithm %s, segment %ld, windows %d:%d", na ? algos[a] : "default",
                             seg, o.nwindows ? o.rwin[w] : -1, o.nwindows ? o.swin[w] : -1);
                    for (int t = 0; t < o.ntypes; ++t) {
                        rc_layout_t l;
                        if (rc_layout_create(o.types[t], &l)) fail("unknown type %s", o.types[t]);
                        for (int oi = 0; oi < o.nops; ++oi) {
                            const rc_op_t *op = rc_find_op(o.ops[oi]);
                            if (!op) fail("unknown op %s", o.ops[oi]);
                            if (!rc_valid(op, &l)) continue;
                            if (o.random && (!l.base->ncomp || (op->code != RC_SUM && op->code != RC_PROD))) continue;
                            long counts[MAX_LIST];
                            int nc;
                            if (o.ncounts) {
                                nc = o.ncounts;
                                for (int i = 0; i < nc; ++i) {
                                    counts[i] = o.counts_in_bytes ? o.counts[i] / (long) l.size : o.counts[i];
                                    if (o.counts_in_bytes && counts[i] < 1) counts[i] = 1;
                                }
                            } else {
                                nc = default_counts(&l, seg, counts);
                            }
                            for (int ci = 0; ci < nc; ++ci) {
                                int fallback = !strcmp(o.expect, "previous") || previous ||
                                               rc_spec_fallback(op, &l, (int) counts[ci]);
                                int nr = fam ? 1 : (o.nroots ? o.nroots : size);
                                for (int ri = 0; ri < nr; ++ri) {
                                    int root = fam ? 0 : (o.nroots ? o.roots[ri] : ri);
                                    if (root >= size) continue;
                                    for (int ip = o.inplace == 1; ip <= (o.inplace != 0); ++ip) {
                                        group_t grp = {NULL, 0, ""};
                                        ++ngroups;
                                        for (int it = 0; it < o.iters; ++it) {
                                            for (int k = 2 * fam; k < 2 * fam + 2; ++k) {
                                                if (!o.coll[k]) continue;
                                                /* --random: one data set per group; otherwise new data per call */
                                                uint64_t seed =
                                                    o.random ? (uint64_t) ngroups : (uint64_t) ncalls * 1000003u + 11;
                                                run_call(&o, k, &l, op, (int) counts[ci], root, ip, seed, &grp, ctx);
                                                ++ncalls;
                                                if (counts[ci] == 0)
                                                    tally.maybe[fam]++;
                                                else if (fallback)
                                                    tally.fallback++;
                                                else
                                                    tally.adapt2[fam]++;
                                                if (o.random && fam == 1 && it == 0 &&
                                                    k == 2 * fam + (o.coll[2 * fam] ? 0 : 1))
                                                    compare_across_ranks(&grp);
                                            }
                                        }
                                        free(grp.first);
                                    }
                                }
                            }
                        }
                        rc_layout_free(&l);
                    }
                }
            }
        }
    }

    if (rc_user_fn_errors()) {
        fprintf(stderr, "rank %d: %lld errors inside user-defined op functions\n", rank, rc_user_fn_errors());
        errors += rc_user_fn_errors();
    }
    if (check_counters) {
        long long d[3];
        for (int i = 0; i < 3; ++i) d[i] = c0[i] < 0 ? -1 : adapt2_counter(counter_names[i]) - c0[i];
        long long maybe = tally.maybe[0] + tally.maybe[1];
        for (int f = 0; f < 2; ++f) {
            if (d[f] >= 0 && (d[f] < tally.adapt2[f] || d[f] > tally.adapt2[f] + tally.maybe[f])) {
                fprintf(stderr, "rank %d: %s grew by %lld, expected %lld%s\n", rank, counter_names[f], d[f],
                        tally.adapt2[f], tally.maybe[f] ? " (+ count-0 calls)" : "");
                ++errors;
            }
        }
        if (d[2] >= 0 && (d[2] < tally.fallback || d[2] > tally.fallback + maybe)) {
            fprintf(stderr, "rank %d: coll_adapt2_fallbacks grew by %lld, expected %lld%s\n", rank, d[2],
                    tally.fallback, maybe ? " (+ count-0 calls)" : "");
            ++errors;
        }
    }
    if (o.digest) { /* rank 0 writes every rank's digest */
        if (rank == 0) {
            FILE *f = fopen(o.digest, "w");
            if (!f) fail("cannot write %s", o.digest);
            for (int r = 0; r < size; ++r) {
                unsigned long long d = digest;
                if (r) MPI_Recv(&d, 1, MPI_UNSIGNED_LONG_LONG, r, 4243, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                fprintf(f, "rank %d %016llx\n", r, d);
            }
            fclose(f);
        } else {
            unsigned long long d = digest;
            MPI_Send(&d, 1, MPI_UNSIGNED_LONG_LONG, 0, 4243, MPI_COMM_WORLD);
        }
    }
    /* one allreduce for both (as many collectives as before the second) */
    static const char *const counted[2] = {"direct calls", "bytes sent"};
    const long long counts[2] = {adapt2_counter("coll_adapt2_direct_calls") - direct0,
                                 adapt2_counter("coll_adapt2_bytes_sent") - sent0};
    print_per_rank_ranges("reduce_check", 2, counted, counts, MPI_COMM_WORLD);
    long long total = total_errors(errors, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("reduce_check: np %d, %d calls per rank (%d groups)%s: %s\n", size, ncalls, ngroups,
               o.random ? " (random values)" : "", total ? "FAILED" : "ok");
        if (!ncalls) printf("reduce_check: nothing was run (no valid op/type combination)\n");
    }
    rc_finalize();
    MPI_Finalize();
    return total || !ncalls ? 1 : 0;
}
