/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * Broadcast correctness: every byte on every rank, for every combination of
 * the options given, and proof (adapt2's MPI_T counters) that adapt2 handled
 * the calls. Run under mpirun by the scripts in test/mpi.
 *
 *   bcast_check [--roots all|R,R..] [--sizes B,B..] [--types byte,int,...]
 *               [--algorithms A,A..] [--segsizes B,B..] [--windows R:S,..]
 *               [--nonblocking] [--iters N] [--expect adapt2|previous|none]
 * Default sizes straddle the segment size in force (read through MPI_T).
 */
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"

#define POISON 0xA5
#define MAX_RUNS 4
#define MAX_LIST 64

/* A datatype as the test sees it: data runs inside one element's extent. */
typedef struct layout {
    MPI_Datatype type;
    size_t extent;
    int nruns;
    size_t run_offset[MAX_RUNS];
    size_t run_len[MAX_RUNS];
    int per_element; /* packed units (ints for "mixed") per element */
} layout_t;

typedef struct options {
    int roots[MAX_LIST], nroots; /* nroots 0: all */
    long sizes[MAX_LIST];
    int nsizes;
    char *types[MAX_LIST];
    int ntypes;
    char *algorithms[MAX_LIST];
    int nalgorithms;
    long segsizes[MAX_LIST];
    int nsegsizes;
    int recv_windows[MAX_LIST], send_windows[MAX_LIST], nwindows;
    int nonblocking;
    int iters;
    const char *expect;
} options_t;

static int rank, size;

static size_t packed_size(const layout_t *l)
{
    size_t s = 0;
    for (int i = 0; i < l->nruns; ++i) s += l->run_len[i];
    return s;
}

static layout_t make_contiguous(MPI_Datatype type, size_t bytes)
{
    layout_t l = {.type = type, .extent = bytes, .nruns = 1, .per_element = 1};
    l.run_len[0] = bytes;
    return l;
}

/* vector: 2 blocks of 3 ints with a stride of 5 ints */
static layout_t make_vector(void)
{
    layout_t l = {.extent = 32, .nruns = 2, .per_element = 6};
    MPI_Type_vector(2, 3, 5, MPI_INT, &l.type);
    MPI_Type_commit(&l.type);
    l.run_offset[0] = 0;
    l.run_len[0] = 12;
    l.run_offset[1] = 20;
    l.run_len[1] = 12;
    return l;
}

/* struct { char c; double d; int i[3]; } with its padding holes */
struct with_holes {
    char c;
    double d;
    int i[3];
};
static layout_t make_struct(void)
{
    layout_t l = {.extent = sizeof(struct with_holes), .nruns = 3, .per_element = 1};
    int lens[3] = {1, 1, 3};
    MPI_Aint disps[3] = {offsetof(struct with_holes, c), offsetof(struct with_holes, d),
                         offsetof(struct with_holes, i)};
    MPI_Datatype types[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT}, t;
    MPI_Type_create_struct(3, lens, disps, types, &t);
    MPI_Type_create_resized(t, 0, sizeof(struct with_holes), &l.type);
    MPI_Type_free(&t);
    MPI_Type_commit(&l.type);
    for (int i = 0; i < 3; ++i) l.run_offset[i] = (size_t) disps[i];
    l.run_len[0] = 1;
    l.run_len[1] = 8;
    l.run_len[2] = 12;
    return l;
}

/* "mixed": one signature (ints), three (count, datatype) descriptions:
 * strided ints, plain ints, and pairs of ints (half the count). */
static layout_t make_mixed(int r)
{
    layout_t l;
    switch (r % 3) {
    case 0:
        l = make_contiguous(MPI_DATATYPE_NULL, 4);
        MPI_Type_create_resized(MPI_INT, 0, 8, &l.type);
        MPI_Type_commit(&l.type);
        l.extent = 8;
        return l;
    case 1: return make_contiguous(MPI_INT, 4);
    default:
        l = make_contiguous(MPI_DATATYPE_NULL, 8);
        MPI_Type_contiguous(2, MPI_INT, &l.type);
        MPI_Type_commit(&l.type);
        l.per_element = 2;
        return l;
    }
}

static layout_t make_layout(const char *name, int r)
{
    if (!strcmp(name, "byte")) return make_contiguous(MPI_BYTE, 1);
    if (!strcmp(name, "int")) return make_contiguous(MPI_INT, sizeof(int));
    if (!strcmp(name, "double")) return make_contiguous(MPI_DOUBLE, sizeof(double));
    if (!strcmp(name, "vector")) return make_vector();
    if (!strcmp(name, "struct")) return make_struct();
    if (!strcmp(name, "mixed")) return make_mixed(r);
    fail("unknown type %s", name);
    return make_contiguous(MPI_BYTE, 1);
}

static void free_layout(layout_t *l)
{
    if (l->type != MPI_BYTE && l->type != MPI_INT && l->type != MPI_DOUBLE) MPI_Type_free(&l->type);
}

/* Fills (root) or checks (everyone) the buffer against the call's pattern;
 * bytes outside the data runs must still hold POISON. Returns errors found. */
static long long visit(const layout_t *l, unsigned char *buf, int count, int call, int root, int fill)
{
    size_t pos = 0;
    long long errors = 0;
    for (int e = 0; e < count; ++e) {
        unsigned char *elem = buf + (size_t) e * l->extent;
        size_t covered = 0;
        for (int r = 0; r < l->nruns; ++r) {
            for (size_t b = covered; b < l->run_offset[r]; ++b) { /* hole */
                if (!fill && elem[b] != POISON && errors++ < 5)
                    fprintf(stderr, "rank %d: hole byte %zu of element %d overwritten\n", rank, b, e);
            }
            for (size_t b = 0; b < l->run_len[r]; ++b, ++pos) {
                unsigned char want = pattern_byte(call, root, pos);
                unsigned char *at = elem + l->run_offset[r] + b;
                if (fill) {
                    *at = want;
                } else if (*at != want && errors++ < 5) {
                    fprintf(stderr, "rank %d: call %d root %d: packed byte %zu is %u, expected %u\n", rank, call, root,
                            pos, *at, want);
                }
            }
            covered = l->run_offset[r] + l->run_len[r];
        }
        for (size_t b = covered; b < l->extent; ++b) {
            if (!fill && elem[b] != POISON && errors++ < 5)
                fprintf(stderr, "rank %d: tail byte %zu of element %d overwritten\n", rank, b, e);
        }
    }
    return errors;
}

/* Elements of this layout that carry `units` packed units of the type; at
 * least one (MPI_Bcast returns before any component for count 0). */
static int element_count(const layout_t *l, long units)
{
    long n = units / l->per_element;
    return n < 1 ? 1 : (int) n;
}

typedef struct call {
    const layout_t *l;
    unsigned char *buf;
    int count, number, root;
} call_t;

static void prepare(call_t *c)
{
    size_t bytes = (size_t) c->count * c->l->extent;
    memset(c->buf, POISON, bytes ? bytes : 1);
    if (rank == c->root) visit(c->l, c->buf, c->count, c->number, c->root, 1);
}

static long long check(const call_t *c)
{
    return visit(c->l, c->buf, c->count, c->number, c->root, 0);
}

static long long run_one(const options_t *o, const char *type, long bytes, int *calls)
{
    layout_t l = make_layout(type, rank);
    /* Units (ints for mixed) the message carries, equal on all ranks. */
    long unit = !strcmp(type, "mixed") ? 4 : (long) packed_size(&l);
    long units = bytes / unit < 2 ? 2 : bytes / unit / 2 * 2; /* even for pairs */
    if (!strcmp(type, "byte")) units = bytes < 1 ? 1 : bytes;
    int count = element_count(&l, units);
    unsigned char *buf = malloc((size_t) count * l.extent + 1);
    long long errors = 0;
    if (!buf) fail("out of memory for %ld bytes", bytes);
    for (int ri = 0; ri < (o->nroots ? o->nroots : size); ++ri) {
        int root = o->nroots ? o->roots[ri] : ri;
        if (root >= size) continue;
        for (int it = 0; it < o->iters; ++it) {
            call_t c = {.l = &l, .buf = buf, .count = count, .number = (*calls)++, .root = root};
            prepare(&c);
            if (o->nonblocking) {
                MPI_Request req;
                MPI_Ibcast(buf, count, l.type, root, MPI_COMM_WORLD, &req);
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            } else {
                MPI_Bcast(buf, count, l.type, root, MPI_COMM_WORLD);
            }
            long long e = check(&c);
            if (e) fprintf(stderr, "rank %d: %s, %ld bytes, root %d: %lld bad bytes\n", rank, type, bytes, root, e);
            errors += e;
        }
    }
    free(buf);
    free_layout(&l);
    return errors;
}

static void parse(int argc, char **argv, options_t *o)
{
    static struct option longopts[] = {{"roots", 1, 0, 'r'},       {"sizes", 1, 0, 's'},
                                       {"types", 1, 0, 't'},       {"algorithms", 1, 0, 'a'},
                                       {"segsizes", 1, 0, 'g'},    {"windows", 1, 0, 'w'},
                                       {"nonblocking", 0, 0, 'n'}, {"iters", 1, 0, 'i'},
                                       {"expect", 1, 0, 'e'},      {0, 0, 0, 0}};
    static char *defaults_types[] = {"byte", "int", "double", "vector", "struct", "mixed"};
    int ch;
    memset(o, 0, sizeof *o);
    o->iters = 1;
    o->expect = "adapt2";
    while ((ch = getopt_long(argc, argv, "r:s:t:a:g:w:ni:e:", longopts, NULL)) != -1) {
        switch (ch) {
        case 'r':
            if (strcmp(optarg, "all")) o->nroots = parse_ints(optarg, o->roots, MAX_LIST);
            break;
        case 's': o->nsizes = parse_longs(optarg, o->sizes, MAX_LIST); break;
        case 't': o->ntypes = split_list(optarg, o->types, MAX_LIST); break;
        case 'a': o->nalgorithms = split_list(optarg, o->algorithms, MAX_LIST); break;
        case 'g': o->nsegsizes = parse_longs(optarg, o->segsizes, MAX_LIST); break;
        case 'w': o->nwindows = parse_windows(optarg, o->recv_windows, o->send_windows, MAX_LIST); break;
        case 'n': o->nonblocking = 1; break;
        case 'i': o->iters = atoi(optarg); break;
        case 'e': o->expect = optarg; break;
        default: fail("usage: see the comment at the top of bcast_check.c");
        }
    }
    if (!o->ntypes) {
        o->ntypes = 6;
        memcpy(o->types, defaults_types, sizeof defaults_types);
    }
    if (!o->nsizes) { /* around the segment size in force, and a small multi-segment one */
        long seg = adapt2_get_long("coll_adapt2_bcast_segment_size");
        if (seg <= 1) seg = 65536;
        long defaults[] = {1, 3000, seg - 1, seg, seg + 1, 2 * seg + 7};
        o->nsizes = 6;
        memcpy(o->sizes, defaults, sizeof defaults);
    }
}

int main(int argc, char **argv)
{
    options_t o;
    long long errors = 0;
    int calls = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    parse(argc, argv, &o);

    long long handled0 = adapt2_counter("coll_adapt2_bcast_calls");
    long long fallbacks0 = adapt2_counter("coll_adapt2_fallbacks");
    long long direct0 = adapt2_counter("coll_adapt2_direct_calls");
    if (handled0 < 0 && strcmp(o.expect, "none")) fail("adapt2 is not loaded");

    int na = o.nalgorithms ? o.nalgorithms : 1, ng = o.nsegsizes ? o.nsegsizes : 1;
    int nw = o.nwindows ? o.nwindows : 1;
    for (int a = 0; a < na; ++a) {
        if (o.nalgorithms) adapt2_set_string("coll_adapt2_bcast_algorithm", o.algorithms[a]);
        for (int g = 0; g < ng; ++g) {
            if (o.nsegsizes) adapt2_set_long("coll_adapt2_bcast_segment_size", o.segsizes[g]);
            for (int w = 0; w < nw; ++w) {
                if (o.nwindows) {
                    adapt2_set_int("coll_adapt2_recv_window", o.recv_windows[w]);
                    adapt2_set_int("coll_adapt2_send_window", o.send_windows[w]);
                }
                for (int t = 0; t < o.ntypes; ++t) {
                    for (int s = 0; s < o.nsizes; ++s) errors += run_one(&o, o.types[t], o.sizes[s], &calls);
                }
            }
        }
    }

    long long handled = adapt2_counter("coll_adapt2_bcast_calls") - handled0;
    long long fell = adapt2_counter("coll_adapt2_fallbacks") - fallbacks0;
    if (!strcmp(o.expect, "adapt2") && (handled != calls || fell != 0)) {
        fprintf(stderr, "rank %d: adapt2 handled %lld of %d calls (%lld fell back)\n", rank, handled, calls, fell);
        ++errors;
    }
    if (!strcmp(o.expect, "previous") && (handled != 0 || fell != calls)) {
        fprintf(stderr, "rank %d: expected %d fallbacks, got %lld (adapt2 handled %lld)\n", rank, calls, fell, handled);
        ++errors;
    }
    print_per_rank_range("bcast_check", "direct calls", adapt2_counter("coll_adapt2_direct_calls") - direct0,
                         MPI_COMM_WORLD);
    long long total = total_errors(errors, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("bcast_check: np %d, %d calls per rank%s: %s\n", size, calls, o.nonblocking ? " (nonblocking)" : "",
               total ? "FAILED" : "ok");
    }
    MPI_Finalize();
    return total ? 1 : 0;
}
