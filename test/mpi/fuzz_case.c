/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/* The fuzzer's cases: adapt2's parameters, the communicators, and the calls
 * of case K of seed S, all drawn from streams keyed by (S, K) so that every
 * rank generates the same case without communicating (a rank's own
 * broadcast layout from its own stream), and descriptions of them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_case.h"
#include "mpi_check.h"

static const char *free_mode_names[] = {"freed at the end", "freed once its calls completed here",
                                        "freed right after its calls were posted"};

/* ---- communicators ---- */

/* The smallest size among the groups of a split, known to every rank (by
 * MPI_Allgather, which the cases test too: gen_allgather; and
 * MPI_Reduce_scatter_block: gen_reduce_scatter). */
static void set_min_size(comm_t *c)
{
    int *sizes = malloc(sizeof(int) * (size_t) wsize);
    MPI_Allgather(&c->size, 1, MPI_INT, sizes, 1, MPI_INT, MPI_COMM_WORLD);
    c->min_size = sizes[0];
    for (int r = 1; r < wsize; ++r) c->min_size = sizes[r] < c->min_size ? sizes[r] : c->min_size;
    free(sizes);
}

comm_t pool[POOL];

static void comm_split(comm_t *c, MPI_Comm parent, int color, int key, const char *name)
{
    if (MPI_Comm_split(parent, color, key, &c->comm) != MPI_SUCCESS) fail("MPI_Comm_split %s", name);
    MPI_Comm_rank(c->comm, &c->rank);
    MPI_Comm_size(c->comm, &c->size);
    c->color = color;
    snprintf(c->name, sizeof c->name, "%s", name);
    set_min_size(c);
}

static void comm_dup(comm_t *c, const comm_t *parent, const char *name)
{
    if (MPI_Comm_dup(parent->comm, &c->comm) != MPI_SUCCESS) fail("MPI_Comm_dup %s", name);
    c->rank = parent->rank;
    c->size = parent->size;
    c->color = parent->color;
    c->min_size = parent->min_size;
    snprintf(c->name, sizeof c->name, "%s", name);
}

/* Long-lived communicators: world, a duplicate, and splits with odd sizes,
 * reversed and shuffled keys. Each rank belongs to one of each split's
 * groups, so every rank takes part in every call on a "communicator slot". */
void pool_create(void)
{
    pool[0] = (comm_t){MPI_COMM_WORLD, wrank, wsize, 0, wsize, "world"};
    comm_dup(&pool[1], &pool[0], "dup(world)");
    comm_split(&pool[2], MPI_COMM_WORLD, wrank % 2, -wrank, "split(rank%2, reversed keys)");
    comm_split(&pool[3], MPI_COMM_WORLD, wrank % 3, wrank, "split(rank%3)");
    int cut = wsize / 3 > 0 ? wsize / 3 : 1;
    comm_split(&pool[4], MPI_COMM_WORLD, wrank < cut ? 0 : 1, -wrank, "split(first np/3 | rest, reversed keys)");
    comm_split(&pool[5], MPI_COMM_WORLD, 0, (int) (mix64(opt.seed ^ (uint64_t) wrank) % 1000000),
               "world shuffled by key");
}

void pool_free(void)
{
    for (int i = 1; i < POOL; ++i) MPI_Comm_free(&pool[i].comm);
}

/* ---- adapt2's parameters ---- */

static const char *tree_algorithms[] = {"auto",    "binomial", "in_order_binomial", "binary", "kary",
                                        "knomial", "chain",    "pipeline",          "flat"};
static const char *allreduce_algorithms[] = {"auto", "tree", "ring", "recursive_doubling", "rabenseifner"};

static long pick_segment(rng_t *r)
{
    static const long sizes[] = {0, 512, 999, 1003, 4096, 8192, 65536, 65537, 262144, 1048576};
    return rng_chance(r, 20) ? rng_range(r, 200, 300000) : PICK(r, sizes);
}

static int pick_window(rng_t *r)
{
    static const int windows[] = {1, 1, 2, 4, 64};
    return rng_chance(r, 30) ? (int) rng_range(r, 1, 64) : PICK(r, windows);
}

void params_generate(rng_t *r, params_t *p)
{
    static const long detach_msgs[] = {0, 4096, 1L << 20, 64L << 20};
    static const long await_mins[] = {-1, 0, 131072};
    static const long ring_mins[] = {0, 4096, 262144};
    static const long ring_maxs[] = {8L << 20, 1L << 40};
    static const long recdbl[] = {0, 0, 65536, 1L << 40};
    static const long pool_caps[] = {0, 4096, 1L << 20, 32L << 20};
    static const long detach_caps[] = {0, 65536, 8L << 20};
    static const long node_segs[] = {0, 0, 1003, 4096, 65536};
    static const int graces[] = {0, 100, 2000};
    p->bcast_alg = rng_chance(r, 25) ? "auto" : PICK(r, tree_algorithms);
    /* two_tree (the two-tree broadcast) takes half of the binary picks, by a
     * bit of the generator's state read without drawing: the numbers of
     * every case stay as they were (fuzz_regressions.sh) */
    if (!strcmp(p->bcast_alg, "binary") && (r->s >> 17 & 1)) p->bcast_alg = "two_tree";
    p->reduce_alg = rng_chance(r, 25) ? "auto" : PICK(r, tree_algorithms);
    if (!strcmp(p->reduce_alg, "binary") && (r->s >> 21 & 1)) p->reduce_alg = "two_tree"; /* as bcast_alg's */
    p->allreduce_alg = PICK(r, allreduce_algorithms);
    p->node_alg = rng_chance(r, 50) ? "auto" : PICK(r, tree_algorithms);
    if (!strcmp(p->node_alg, "binary") && (r->s >> 19 & 1)) p->node_alg = "two_tree"; /* as bcast_alg's */
    p->bcast_seg = pick_segment(r);
    p->reduce_seg = pick_segment(r);
    p->allreduce_seg = pick_segment(r);
    p->topo_seg = pick_segment(r);
    p->node_seg = PICK(r, node_segs);
    p->numa_seg = PICK(r, node_segs);
    p->recv_window = pick_window(r);
    p->send_window = pick_window(r);
    p->fanout = (int) rng_range(r, 1, 6);
    p->radix = (int) rng_range(r, 2, 9);
    p->chains = (int) rng_range(r, 1, 5);
    p->detach_max_message = PICK(r, detach_msgs);
    p->await_min = PICK(r, await_mins);
    p->ring_min = PICK(r, ring_mins);
    p->ring_max = PICK(r, ring_maxs);
    p->recdoubling_max = PICK(r, recdbl);
    p->grace_us = PICK(r, graces);
    p->reproducible = rng_chance(r, 30);
    p->topology = rng_chance(r, 85);
    p->pool_max_bytes = PICK(r, pool_caps);
    p->detach_max_bytes = PICK(r, detach_caps);
    /* No new draw (fuzz_regressions.sh's case numbers hold): half the cases
     * keep the latency path's default, half detach from 1 byte. */
    p->detach_min_message = p->chains % 2 ? 256 : 0;
    /* Across nodes from 64 KiB segments sized by it, from 8 KiB up (the
     * most segments) to topology_segment_size (0) */
    p->node_message_cost = p->fanout % 3 == 0 ? 0 : p->fanout % 3 == 1 ? 1 : 16384;
    /* Two radixes of seven say the shared memory has no single copy: auto's
     * broadcasts from 64 KiB go down the two trees inside the nodes */
    p->single_copy = p->radix % 3 == 0 ? "no" : "auto";
}

void set_algorithms(const char *bcast, const char *reduce, const char *allreduce)
{
    adapt2_set_string("coll_adapt2_bcast_algorithm", bcast);
    adapt2_set_string("coll_adapt2_reduce_algorithm", reduce);
    adapt2_set_string("coll_adapt2_allreduce_algorithm", allreduce);
}

/* Every parameter is set at every case, so a case does not depend on the
 * cases before it (--case K reproduces it alone). */
void params_apply(const params_t *p)
{
    set_algorithms(p->bcast_alg, p->reduce_alg, p->allreduce_alg);
    adapt2_set_string("coll_adapt2_node_algorithm", p->node_alg);
    adapt2_set_long("coll_adapt2_bcast_segment_size", p->bcast_seg);
    adapt2_set_long("coll_adapt2_reduce_segment_size", p->reduce_seg);
    adapt2_set_long("coll_adapt2_allreduce_segment_size", p->allreduce_seg);
    adapt2_set_long("coll_adapt2_topology_segment_size", p->topo_seg);
    adapt2_set_long("coll_adapt2_node_segment_size", p->node_seg);
    adapt2_set_long("coll_adapt2_numa_segment_size", p->numa_seg);
    adapt2_set_int("coll_adapt2_recv_window", p->recv_window);
    adapt2_set_int("coll_adapt2_send_window", p->send_window);
    adapt2_set_int("coll_adapt2_bcast_fanout", p->fanout);
    adapt2_set_int("coll_adapt2_bcast_radix", p->radix);
    adapt2_set_int("coll_adapt2_bcast_chains", p->chains);
    adapt2_set_long("coll_adapt2_detach_max_message", p->detach_max_message);
    adapt2_set_long("coll_adapt2_detach_await_min_bytes", p->await_min);
    adapt2_set_int("coll_adapt2_detach_grace_us", p->grace_us);
    adapt2_set_long("coll_adapt2_allreduce_ring_min_bytes", p->ring_min);
    adapt2_set_long("coll_adapt2_allreduce_ring_max_bytes", p->ring_max);
    adapt2_set_long("coll_adapt2_allreduce_recdoubling_max_bytes", p->recdoubling_max);
    /* one threshold on every rank count, as before the 4-rank one */
    adapt2_set_long("coll_adapt2_allreduce_recdoubling_few_ranks_max_bytes", p->recdoubling_max);
    /* recursive doubling at every rank count the size allows, as before the
     * rank limit: the fuzzer covers its non-power-of-two exchanges */
    adapt2_set_int("coll_adapt2_allreduce_recdoubling_max_ranks", 1 << 20);
    adapt2_set_long("coll_adapt2_detach_min_message", p->detach_min_message);
    adapt2_set_long("coll_adapt2_node_message_cost", p->node_message_cost);
    adapt2_set_string("coll_adapt2_single_copy", p->single_copy);
    adapt2_set_int("coll_adapt2_reproducible", p->reproducible);
    adapt2_set_int("coll_adapt2_topology", p->topology);
    adapt2_set_long("coll_adapt2_pool_max_bytes", p->pool_max_bytes);
    adapt2_set_long("coll_adapt2_detach_max_bytes", p->detach_max_bytes);
    for (int i = 0; i < npins; ++i) set_pinned(pins[i]);
}

/* Writes a control variable of any type (--set NAME=VALUE; NAME may omit
 * coll_adapt2_). */
void set_pinned(const char *spec)
{
    char name[256];
    const char *eq = strchr(spec, '=');
    snprintf(name, sizeof name, "%s%.*s", strncmp(spec, "coll_adapt2_", 12) ? "coll_adapt2_" : "", (int) (eq - spec),
             spec);
    adapt2_set(name, eq + 1);
}

void params_describe(const params_t *p, char *out, size_t n)
{
    snprintf(
        out, n,
        "bcast_algorithm=%s reduce_algorithm=%s allreduce_algorithm=%s node_algorithm=%s "
        "bcast_segment_size=%ld reduce_segment_size=%ld allreduce_segment_size=%ld "
        "topology_segment_size=%ld node_segment_size=%ld numa_segment_size=%ld recv_window=%d "
        "send_window=%d bcast_fanout=%d bcast_radix=%d bcast_chains=%d detach_min_message=%ld detach_max_message=%ld "
        "detach_await_min_bytes=%ld detach_grace_us=%d allreduce_ring_min_bytes=%ld "
        "allreduce_ring_max_bytes=%ld allreduce_recdoubling_max_bytes=%ld "
        "allreduce_recdoubling_few_ranks_max_bytes=(the same) allreduce_recdoubling_max_ranks=1048576 reproducible=%d "
        "topology=%d node_message_cost=%ld "
        "single_copy=%s pool_max_bytes=%ld detach_max_bytes=%ld (last two: new communicators only)",
        p->bcast_alg, p->reduce_alg, p->allreduce_alg, p->node_alg, p->bcast_seg, p->reduce_seg, p->allreduce_seg,
        p->topo_seg, p->node_seg, p->numa_seg, p->recv_window, p->send_window, p->fanout, p->radix, p->chains,
        p->detach_min_message, p->detach_max_message, p->await_min, p->grace_us, p->ring_min, p->ring_max,
        p->recdoubling_max, p->reproducible, p->topology, p->node_message_cost, p->single_copy, p->pool_max_bytes,
        p->detach_max_bytes);
    for (int i = 0; i < npins; ++i) {
        size_t at = strlen(out);
        textf(out + at, n - at, "%s%s", i ? ", " : "; pinned by --set: ", pins[i]);
    }
}

params_t pool_par;

/* ---- generating calls ---- */

static long clamp_count(long count, long cap)
{
    return count < 0 ? 0 : count > cap ? cap : count;
}

/* An element count: small, around segment boundaries of the case (packed
 * bytes a multiple of a segment size, plus or minus a few elements, or a few
 * bytes that cut an element), around 256 KiB and 1 MiB, or log-uniform. */
static int choose_count(rng_t *r, long elem_bytes, const long *segs, int nsegs, long max_bytes)
{
    static const long fixed[] = {65536, 262144, 524288, 1048576, 2097152, 4194304};
    long cap = opt.max_count, count;
    if (elem_bytes > 0 && max_bytes / elem_bytes < cap) cap = max_bytes / elem_bytes;
    if (elem_bytes <= 0) elem_bytes = 1;
    int how = (int) rng_below(r, 20);
    long seg = how < 11 ? segs[rng_below(r, (uint64_t) nsegs)] : PICK(r, fixed);
    if (how < 5) {
        count = rng_range(r, 0, 8);
    } else if (how < 15 && seg > 0) {
        long bytes = rng_range(r, 1, 4) * seg + rng_range(r, -3 * elem_bytes - 5, 3 * elem_bytes + 5);
        count = bytes / elem_bytes;
    } else {
        long top = cap * elem_bytes, bits = 1;
        while ((1L << bits) < top && bits < 40) ++bits;
        count = rng_range(r, 1, 1L << rng_range(r, 0, bits)) / elem_bytes;
    }
    if (rng_chance(r, 25)) count |= 1;
    return (int) clamp_count(count, cap);
}

/* A signature unit for a broadcast: a predefined type, struct {double; char;
 * int}, {3 x short, 5 x char}, or a random sequence. */
static void bcast_unit(rng_t *r, unitsig_t *u)
{
    int how = (int) rng_below(r, 20);
    if (how < 10) {
        u->n = 1;
        u->p[0] = (int) rng_below(r, P_COUNT);
    } else if (how < 13) {
        *u = (unitsig_t){3, {P_DOUBLE, P_CHAR, P_INT}};
    } else if (how < 16) {
        *u = (unitsig_t){8, {P_SHORT, P_SHORT, P_SHORT, P_CHAR, P_CHAR, P_CHAR, P_CHAR, P_CHAR}};
    } else {
        u->n = (int) rng_range(r, 2, 6);
        for (int i = 0; i < u->n; ++i) u->p[i] = (int) rng_below(r, P_COUNT);
    }
}

/* Units per element for one rank's broadcast layout: a divisor of the total
 * number of units, so count * m covers the message exactly. */
static int units_per_element(rng_t *r, long units, const unitsig_t *u)
{
    int hi = MAP_MAX / u->n < 12 ? MAP_MAX / u->n : 12, cand[12], n = 0;
    for (int m = 1; m <= hi; ++m) {
        if (units == 0 || units % m == 0) cand[n++] = m;
    }
    return cand[rng_below(r, (uint64_t) n)];
}

/* The layout rank `who` of the call uses: from its own stream, so ranks
 * describe one signature in different ways. */
static dtype_t *bcast_layout(const case_t *k, int i, const call_t *c, int who, long units, int same, int *count)
{
    rng_t rr = rng_make(opt.seed, (uint64_t) k->index * 64 + (uint64_t) i,
                        0x10000ULL + (uint64_t) c->c->color * 4096 + (uint64_t) (same ? c->root : who));
    int m = units_per_element(&rr, units, &c->unit);
    *count = (int) (units / m);
    return dtype_generate(&rr, &c->unit, m, opt.depth);
}

static void gen_bcast(rng_t *r, const case_t *k, int i, call_t *c, const long *segs, long max_bytes)
{
    char sig[160];
    bcast_unit(r, &c->unit);
    int same = rng_chance(r, 30);
    static const long grains[] = {2, 3, 4, 6, 12};
    long grain = rng_chance(r, 50) ? 1 : PICK(r, grains);
    long units = choose_count(r, (long) sig_bytes(&c->unit), segs, 3, max_bytes);
    if (units > 0) units = units < grain ? grain : units / grain * grain;
    c->op = OP_NONE;
    int root_count;
    dtype_t *rt = bcast_layout(k, i, c, c->root, units, same, &root_count);
    sig_describe(&c->unit, sig, sizeof sig);
    textf(c->root_desc, sizeof c->root_desc, "%ld units of %s; root: count %d of %s", units, sig, root_count, rt->desc);
    if (c->c->rank == c->root) {
        c->t = rt;
        c->count = root_count;
    } else {
        dtype_free(rt);
        c->t = bcast_layout(k, i, c, c->c->rank, units, same, &c->count);
    }
}

static int pair_with_padding(int prim)
{
    return prim == P_DOUBLE_INT || prim == P_LONG_INT || prim == P_SHORT_INT;
}

static void gen_reduction(rng_t *r, call_t *c, const long *segs, long max_bytes)
{
    static const int numeric[] = {P_SHORT, P_INT, P_UNSIGNED, P_LLONG, P_ULLONG, P_FLOAT, P_DOUBLE};
    static const int pairs[] = {P_2INT, P_FLOAT_INT, P_DOUBLE_INT, P_LONG_INT, P_SHORT_INT};
    if (rng_chance(r, 25)) {
        c->op = (int) rng_range(r, OP_MATMUL, OP_DSUM);
        c->prim = c->op == OP_DSUM ? P_DOUBLE : c->op == OP_AFFINE ? P_ULLONG : P_UNSIGNED;
    } else {
        c->op = (int) rng_range(r, OP_SUM, OP_MINLOC);
        do {
            c->prim = c->op >= OP_MAXLOC ? PICK(r, pairs) : PICK(r, numeric);
        } while (!op_allows(c->op, c->prim));
    }
    op_unit(c->op, c->prim, &c->unit);
    /* Derived types of pairs with holes go to the previous component, which
     * in Open MPI 4.1 combines only the first pair of each element (wrong
     * whoever runs it): predefined pair types only for those. */
    int derived = c->unit.n > 1 || (!pair_with_padding(c->prim) && rng_chance(r, 55));
    int m = derived ? (int) rng_range(r, 1, MAP_MAX / c->unit.n < 8 ? MAP_MAX / c->unit.n : 8) : 1;
    c->t = dtype_generate(r, &c->unit, m, derived ? opt.depth : 0);
    c->count = choose_count(r, c->t->size, segs, 2, max_bytes);
    c->inplace = rng_chance(r, 30);
    c->null_recv = rng_chance(r, 50);
}

/* Open MPI 4.1's own components (tuned, libnbc) corrupt the heap or give
 * wrong results on user ops over datatypes whose lb is not 0, whose typemap
 * is not in memory order, or that start with a gap (each checked without
 * adapt2). adapt2 hands user ops on non-contiguous data to them, so those
 * calls get a plain vector (lb 0, no leading gap, in memory order). Dense
 * layouts that adapt2 combines itself (Open MPI flags them contiguous) are
 * kept; with an lb other than 0 they are not compared with the previous
 * component. A dense layout with an lb other than 0 that Open MPI does not
 * flag contiguous goes to those components too: Open MPI 5.0.7's libnbc
 * crashes on it (MPI_Ireduce, np 7, contig(2, indexed([1@3], double)),
 * without adapt2), so it becomes a plain vector as well. */
static void user_op_layout(rng_t *r, call_t *c)
{
    if (!c->t->contiguous) {
        int m = c->t->m;
        dtype_free(c->t);
        c->t = dtype_plain_vector(&c->unit, m, 2);
    } else if (c->t->lb != 0 || !c->t->monotonic) {
        /* drawn whatever the type: the numbers of later cases stay */
        if (rng_chance(r, 50) && c->t->ompi_contig) {
            c->prev = 0;
        } else {
            int m = c->t->m;
            dtype_free(c->t);
            c->t = dtype_plain_vector(&c->unit, m, 1);
        }
    }
}

/* A call of `coll` appended to the case (room checked by the caller): blocking
 * or not, its communicator and its values' key drawn from `g` (`salt` tells
 * its key from an earlier kind's). */
static call_t *append_call(case_t *k, rng_t *g, int coll, uint64_t salt)
{
    call_t *c = &k->calls[k->ncalls];
    memset(c, 0, sizeof *c);
    c->id = k->ncalls++;
    c->coll = coll;
    c->nonblocking = rng_chance(g, 50);
    int slot = (int) rng_below(g, (uint64_t) (POOL + k->nfresh));
    c->fresh = slot >= POOL ? slot - POOL : -1;
    c->c = c->fresh >= 0 ? &k->fresh[c->fresh].c : &pool[slot];
    c->key = mix64(opt.seed * 0x100000001b3ULL ^ (uint64_t) k->index << 20 ^ (uint64_t) c->id << 8 ^
                   (uint64_t) c->c->color ^ salt);
    return c;
}

/* An allgather, appended to a case from the case's second stream, so that
 * the calls drawn before it (and every case's numbers, the regressions')
 * stay: each rank's block is `count` elements of one datatype, the same on
 * every rank (per-rank layouts: test/mpi/layouts.sh), derived with holes or
 * predefined; sent from a buffer of that datatype or in place. */
static void gen_allgather(case_t *k, long max_bytes)
{
    rng_t g = rng_make(opt.seed, (uint64_t) k->index, 2);
    if (k->ncalls >= MAX_CALLS || !rng_chance(&g, 40)) return;
    call_t *c = append_call(k, &g, C_ALLGATHER, 0);
    c->op = OP_NONE;
    bcast_unit(&g, &c->unit);
    int derived = rng_chance(&g, 60);
    int m = derived ? (int) rng_range(&g, 1, MAP_MAX / c->unit.n < 8 ? MAP_MAX / c->unit.n : 8) : 1;
    c->t = dtype_generate(&g, &c->unit, m, derived ? opt.depth : 0);
    const long segs[2] = {k->par.topo_seg, 65536};
    c->count = choose_count(&g, c->t->size, segs, 2, max_bytes / (c->c->size > 0 ? c->c->size : 1));
    c->inplace = rng_chance(&g, 30);
    c->release_type = c->nonblocking && rng_chance(&g, 15);
}

/* A reduce_scatter_block, appended from the case's third stream after the
 * allgather (so that every earlier call and case number stays): an op, type
 * and count per rank drawn as for the reductions, the same on every rank,
 * each rank's p blocks in one buffer of that type, or in place; not compared
 * with algorithm=previous (Open MPI 4.1's own components combine only the
 * first predefined element of a derived one: the reference values decide). */
static void gen_reduce_scatter(case_t *k, long max_bytes)
{
    rng_t g = rng_make(opt.seed, (uint64_t) k->index, 3);
    if (k->ncalls >= MAX_CALLS || !rng_chance(&g, 30)) return;
    call_t *c = append_call(k, &g, C_RSB, 0x5eedULL);
    const long segs[2] = {k->par.topo_seg, 65536};
    gen_reduction(&g, c, segs, max_bytes / (c->c->size > 0 ? c->c->size : 1));
    c->null_recv = 0;
    if (ops[c->op].user) user_op_layout(&g, c);
    c->prev = 0;
    c->release_type = c->nonblocking && rng_chance(&g, 15);
}

/* Whether adapt2 itself should run the call (for the counter check): it
 * hands user ops on non-contiguous data, and reductions of pair types with
 * padding, to the previous component. */
int adapt2_runs(const call_t *c)
{
    if (c->c->size < 2) return 0;
    if (c->coll == C_BCAST || c->coll == C_ALLGATHER) return 1;
    /* (reduce_scatter_block: as the reductions, its p blocks one message) */
    if (!ops[c->op].user) return !pair_with_padding(c->prim);
    /* adapt2 asks Open MPI (ompi_datatype_is_contiguous_memory_layout), whose
     * flag is stricter than density: see dtype_t.ompi_contig. */
    return c->t->ompi_contig && (c->t->contiguous || (c->count <= 1 && c->t->tub - c->t->tlb == c->t->size));
}

void describe_call(const case_t *k, int i, char *out, size_t n)
{
    const call_t *c = &k->calls[i];
    static const char *blocking[] = {"MPI_Bcast", "MPI_Reduce", "MPI_Allreduce", "MPI_Allgather",
                                     "MPI_Reduce_scatter_block"};
    static const char *nonblocking[] = {"MPI_Ibcast", "MPI_Ireduce", "MPI_Iallreduce", "MPI_Iallgather",
                                        "MPI_Ireduce_scatter_block"};
    int at = snprintf(out, n, "  call %d: %s on %s (color %d, size %d, rank here %d)", c->id,
                      c->nonblocking ? nonblocking[c->coll] : blocking[c->coll], c->c->name, c->c->color, c->c->size,
                      c->c->rank);
    if (c->coll == C_BCAST || c->coll == C_REDUCE) at += snprintf(out + at, n - (size_t) at, ", root %d", c->root);
    if (c->coll == C_ALLGATHER) {
        at += snprintf(out + at, n - (size_t) at, ": count %d of %s per rank%s", c->count, c->t->desc,
                       c->inplace ? ", MPI_IN_PLACE" : "");
    } else if (c->coll == C_BCAST) {
        at += snprintf(out + at, n - (size_t) at, ": %s; here: count %d of %s", c->root_desc, c->count, c->t->desc);
    } else {
        at += snprintf(out + at, n - (size_t) at, ", op %s, count %d of %s%s%s%s", ops[c->op].name, c->count,
                       c->t->desc, c->coll == C_RSB ? " per rank" : "",
                       c->inplace ? (c->coll == C_REDUCE ? ", MPI_IN_PLACE at the root" : ", MPI_IN_PLACE") : "",
                       c->coll == C_REDUCE
                           ? (c->null_recv ? ", recvbuf NULL elsewhere" : ", recvbuf checked untouched elsewhere")
                           : "");
    }
    snprintf(out + at, n - (size_t) at, "%s%s\n", c->prev ? "; compared with algorithm=previous" : "",
             c->release_type ? "; datatype freed before completion" : "");
}

static void describe_case(case_t *k)
{
    static const char *waits[] = {"MPI_Waitall", "MPI_Wait in random order", "MPI_Waitany"};
    char par[2048];
    size_t at = 0, n = sizeof k->desc;
    params_describe(&k->par, par, sizeof par);
    at += (size_t) snprintf(k->desc + at, n - at,
                            "case %ld of seed %llu (np %d): %d call(s), %s\n  params: %s\n"
                            "  pool communicators (all but new ones) got pool_max_bytes=%ld detach_max_bytes=%ld\n",
                            k->index, (unsigned long long) opt.seed, wsize, k->ncalls, waits[k->wait_mode], par,
                            pool_par.pool_max_bytes, pool_par.detach_max_bytes);
    for (int f = 0; f < k->nfresh && at < n; ++f)
        at += (size_t) snprintf(k->desc + at, n - at, "  new communicator %s: %s\n", k->fresh[f].c.name,
                                free_mode_names[k->fresh[f].mode]);
    for (int i = 0; i < k->ncalls && at < n; ++i) describe_call(k, i, k->desc + at, n - at), at = strlen(k->desc);
}

/* Creates a fresh communicator of the case (collective on world or on a
 * pool communicator: every rank creates the same ones in the same order). */
static void make_fresh(rng_t *r, fresh_t *f)
{
    char name[80];
    int how = (int) rng_below(r, 4), reversed = rng_chance(r, 50);
    int key = reversed ? -wrank : wrank;
    if (how == 0) {
        int mod = (int) rng_range(r, 2, 4);
        snprintf(name, sizeof name, "new split(rank%%%d%s)", mod, reversed ? ", reversed keys" : "");
        comm_split(&f->c, MPI_COMM_WORLD, wrank % mod, key, name);
    } else if (how == 1 && wsize > 1) {
        int cut = (int) rng_range(r, 1, wsize - 1);
        snprintf(name, sizeof name, "new split(rank<%d%s)", cut, reversed ? ", reversed keys" : "");
        comm_split(&f->c, MPI_COMM_WORLD, wrank < cut, key, name);
    } else {
        const comm_t *parent = &pool[how == 3 ? rng_range(r, 1, POOL - 1) : 0];
        snprintf(name, sizeof name, "new dup(%s)", parent->name);
        comm_dup(&f->c, parent, name);
    }
    f->mode = (int) rng_below(r, 3);
    f->freed = 0;
}

/* Open MPI 4.1.4's libnbc crashes (np 4: a segfault in NBC_Progress) when a
 * communicator is freed while its non-blocking collectives are pending, with
 * adapt2 off too. adapt2 keeps its own calls alive, so cases still free early
 * when adapt2 runs every non-blocking call; a communicator with one that
 * adapt2 hands to the previous component is freed once its calls completed. */
static void keep_handed_calls_alive(case_t *k)
{
    for (int i = 0; i < k->ncalls; ++i) {
        const call_t *c = &k->calls[i];
        if (c->fresh >= 0 && c->nonblocking && !adapt2_runs(c) && k->fresh[c->fresh].mode == FREE_WHILE_PENDING)
            k->fresh[c->fresh].mode = FREE_WHEN_DONE;
    }
}

void gen_case(case_t *k)
{
    rng_t r = rng_make(opt.seed, (uint64_t) k->index, 0);
    params_generate(&r, &k->par);
    params_apply(&k->par);
    k->ncalls = rng_chance(&r, 50) ? 1 : (int) rng_range(&r, 2, MAX_CALLS);
    k->nfresh = rng_chance(&r, 35) ? (int) rng_range(&r, 1, MAX_FRESH) : 0;
    k->wait_mode = (int) rng_below(&r, 3);
    for (int f = 0; f < k->nfresh; ++f) make_fresh(&r, &k->fresh[f]);
    long max_bytes = k->ncalls > 1 ? opt.max_bytes / 2 : opt.max_bytes;
    for (int i = 0; i < k->ncalls; ++i) {
        call_t *c = &k->calls[i];
        memset(c, 0, sizeof *c);
        c->id = i;
        c->coll = (int) rng_below(&r, 10);
        c->coll = c->coll < 4 ? C_BCAST : c->coll < 7 ? C_REDUCE : C_ALLREDUCE;
        c->nonblocking = rng_chance(&r, k->ncalls == 1 ? 30 : 70);
        /* communicators with single-process groups: adapt2 declines them, so
         * most calls on them are moved to another slot */
        int slot = (int) rng_below(&r, (uint64_t) (POOL + k->nfresh));
        comm_t *cc = slot >= POOL ? &k->fresh[slot - POOL].c : &pool[slot];
        if (cc->min_size < 2 && rng_chance(&r, 75)) slot = (int) rng_below(&r, (uint64_t) (POOL + k->nfresh));
        c->fresh = slot >= POOL ? slot - POOL : -1;
        c->c = c->fresh >= 0 ? &k->fresh[c->fresh].c : &pool[slot];
        c->root = (int) (rng_next(&r) % (uint64_t) c->c->size);
        c->key =
            mix64(opt.seed * 0x100000001b3ULL ^ (uint64_t) k->index << 20 ^ (uint64_t) i << 8 ^ (uint64_t) c->c->color);
        const long segs[3] = {c->coll == C_BCAST    ? k->par.bcast_seg
                              : c->coll == C_REDUCE ? k->par.reduce_seg
                                                    : k->par.allreduce_seg,
                              k->par.topo_seg, c->coll == C_BCAST ? k->par.node_seg : k->par.topo_seg};
        if (c->coll == C_BCAST)
            gen_bcast(&r, k, i, c, segs, max_bytes);
        else
            gen_reduction(&r, c, segs, max_bytes);
        /* user ops: always compared with the previous component; predefined
         * ops on derived types never (Open MPI 4.1's components combine only
         * the first predefined element of each derived element) */
        int derived_predefined_op =
            c->coll != C_BCAST && !ops[c->op].user && c->unit.n == 1 && c->t->handle != prims[c->prim].type;
        c->prev = c->coll != C_BCAST && ops[c->op].user ? 1 : !derived_predefined_op && rng_chance(&r, 20);
        if (c->coll != C_BCAST && ops[c->op].user) user_op_layout(&r, c);
        c->release_type = c->nonblocking && rng_chance(&r, 15);
    }
    gen_allgather(k, max_bytes);
    gen_reduce_scatter(k, max_bytes);
    keep_handed_calls_alive(k);
    int kept = 0;
    for (int i = 0; i < k->ncalls; ++i) {
        if (skip_calls & (1u << i))
            dtype_free(k->calls[i].t);
        else
            k->calls[kept++] = k->calls[i];
    }
    k->ncalls = kept;
    describe_case(k);
}
