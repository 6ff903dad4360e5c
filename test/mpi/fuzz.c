/*
 * Differential fuzzer of adapt2's MPI_Bcast/Ibcast, MPI_Reduce/Ireduce and
 * MPI_Allreduce/Iallreduce. Run under mpirun by test/mpi/fuzz.sh.
 *
 *   fuzz [--seed S] [--cases N] [--case K] [--time-budget SECONDS]
 *        [--max-count N] [--max-bytes B] [--depth D] [--case-timeout SECONDS]
 *        [--set PARAM=VALUE]... [--skip-calls LIST] [--allow-pair-padding]
 *        [--keep-going] [-v]
 *
 * Case K of seed S is the same on every rank and in every run (all choices
 * come from a splitmix64 stream keyed by (S, K)), so `--seed S --case K`
 * with the same mpirun flags and --max-count/--max-bytes reproduces it alone.
 * A case sets adapt2's parameters through MPI_T, may create communicators,
 * then runs 1-6 calls (blocking, or non-blocking outstanding together on
 * several communicators, completed in a per-rank random order), and checks
 * on every rank:
 *   - every unit of the result against a local reference (each rank can
 *     compute every rank's contribution; reductions fold ranks 0..p-1);
 *   - that bytes outside the datatype's typemap (holes, gaps between
 *     elements, guard bytes around the buffer) and send buffers are untouched;
 *   - for a share of the calls, bitwise equality with the same call run with
 *     coll_adapt2_<coll>_algorithm=previous (the component adapt2 falls back to).
 * --set pins one of adapt2's parameters (coll_adapt2_ prefix optional) after
 * the fuzzer set its own, e.g. to look past a known bug. --skip-calls 013
 * generates a case as usual but leaves out its calls 0, 1 and 3 (to bisect).
 * --allow-pair-padding accepts changed padding bytes inside MPI_DOUBLE_INT,
 * MPI_LONG_INT and MPI_SHORT_INT (outside their typemaps, checked by default). --keep-going goes on
 * after mismatches (the exit status still fails).
 * Any mismatch prints the case and a reproduction command. A case that hangs
 * or is killed (a peer aborted) prints the same from a signal handler.
 */
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "mpi_check.h"

#define RECV_SENTINEL 0xA5 /* receive buffers: holes must keep it */
#define SEND_SENTINEL 0x3C /* send buffers' holes: a different byte, so copying them shows */
#define MAX_CALLS 6
#define MAX_FRESH 3

enum coll { C_BCAST, C_REDUCE, C_ALLREDUCE };
static const char *coll_names[] = {"bcast", "reduce", "allreduce"};

static struct options {
    uint64_t seed;
    long cases, only_case, max_count, max_bytes;
    double time_budget;
    int case_timeout, verbose, keep_going, depth;
} opt = {1, 200, -1, 1L << 20, 4L << 20, 0, 60, 0, 0, 2};

static int wrank, wsize;
static char repro_prefix[4096]; /* the mpirun command line up to --case */
#define MAX_PINS 16
static char *pins[MAX_PINS]; /* --set NAME=VALUE */
static int npins;
static void set_pinned(const char *spec);
static unsigned skip_calls; /* --skip-calls: generated, not run (bisecting a case) */
int allow_pair_padding;     /* --allow-pair-padding: pairs' padding may change */

/* ---- communicators ---- */

typedef struct comm {
    MPI_Comm comm;
    int rank, size, color;
    int min_size; /* smallest group of the split, the same on all ranks */
    char name[80];
} comm_t;

/* The smallest size among the groups of a split, known to every rank (by
 * MPI_Allgather, which adapt2 does not implement). */
static void set_min_size(comm_t *c)
{
    int *sizes = malloc(sizeof(int) * (size_t) wsize);
    MPI_Allgather(&c->size, 1, MPI_INT, sizes, 1, MPI_INT, MPI_COMM_WORLD);
    c->min_size = sizes[0];
    for (int r = 1; r < wsize; ++r) c->min_size = sizes[r] < c->min_size ? sizes[r] : c->min_size;
    free(sizes);
}

#define POOL 6
static comm_t pool[POOL];

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
static void pool_create(void)
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

static void pool_free(void)
{
    for (int i = 1; i < POOL; ++i) MPI_Comm_free(&pool[i].comm);
}

/* ---- adapt2's parameters ---- */

static const char *tree_algorithms[] = {"auto", "binomial", "in_order_binomial", "binary", "kary",
                                        "knomial", "chain", "pipeline", "flat"};
static const char *allreduce_algorithms[] = {"auto", "tree", "ring", "recursive_doubling"};

typedef struct params {
    const char *bcast_alg, *reduce_alg, *allreduce_alg, *node_alg;
    long bcast_seg, reduce_seg, allreduce_seg, topo_seg, node_seg, numa_seg;
    int recv_window, send_window, fanout, radix, chains;
    long detach_max_message, await_min, ring_min, ring_max, recdoubling_max;
    int grace_us, reproducible, topology;
    long pool_max_bytes, detach_max_bytes; /* read at a communicator's first collective */
} params_t;

#define PICK(r, arr) (arr[rng_below(r, sizeof(arr) / sizeof(arr[0]))])

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

static void params_generate(rng_t *r, params_t *p)
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
    p->reduce_alg = rng_chance(r, 25) ? "auto" : PICK(r, tree_algorithms);
    p->allreduce_alg = PICK(r, allreduce_algorithms);
    p->node_alg = rng_chance(r, 50) ? "auto" : PICK(r, tree_algorithms);
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
}

static void set_algorithms(const char *bcast, const char *reduce, const char *allreduce)
{
    adapt2_set_string("coll_adapt2_bcast_algorithm", bcast);
    adapt2_set_string("coll_adapt2_reduce_algorithm", reduce);
    adapt2_set_string("coll_adapt2_allreduce_algorithm", allreduce);
}

/* Every parameter is set at every case, so a case does not depend on the
 * cases before it (--case K reproduces it alone). */
static void params_apply(const params_t *p)
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
    adapt2_set_int("coll_adapt2_reproducible", p->reproducible);
    adapt2_set_int("coll_adapt2_topology", p->topology);
    adapt2_set_long("coll_adapt2_pool_max_bytes", p->pool_max_bytes);
    adapt2_set_long("coll_adapt2_detach_max_bytes", p->detach_max_bytes);
    for (int i = 0; i < npins; ++i) set_pinned(pins[i]);
}

/* Writes a control variable of any type (--set). */
static void set_pinned(const char *spec)
{
    char name[256], desc[256];
    const char *eq = strchr(spec, '=');
    int index, count, namelen = sizeof name, desclen = sizeof desc, verbosity, bind, scope;
    MPI_Datatype type;
    MPI_T_enum enumtype;
    MPI_T_cvar_handle handle;
    snprintf(name, sizeof name, "%s%.*s", strncmp(spec, "coll_adapt2_", 12) ? "coll_adapt2_" : "",
             (int) (eq - spec), spec);
    if (MPI_T_cvar_get_index(name, &index) != MPI_SUCCESS) fail("--set: no parameter %s", name);
    MPI_T_cvar_get_info(index, NULL, NULL, &verbosity, &type, &enumtype, desc, &desclen, &bind, &scope);
    (void) namelen;
    if (MPI_T_cvar_handle_alloc(index, NULL, &handle, &count) != MPI_SUCCESS) fail("--set: %s", name);
    if (type == MPI_CHAR) {
        MPI_T_cvar_write(handle, eq + 1);
    } else if (type == MPI_INT) {
        int v = atoi(eq + 1);
        MPI_T_cvar_write(handle, &v);
    } else {
        long v = atol(eq + 1);
        MPI_T_cvar_write(handle, &v);
    }
    MPI_T_cvar_handle_free(&handle);
}

static void params_describe(const params_t *p, char *out, size_t n)
{
    snprintf(out, n,
             "bcast_algorithm=%s reduce_algorithm=%s allreduce_algorithm=%s node_algorithm=%s "
             "bcast_segment_size=%ld reduce_segment_size=%ld allreduce_segment_size=%ld "
             "topology_segment_size=%ld node_segment_size=%ld numa_segment_size=%ld recv_window=%d "
             "send_window=%d bcast_fanout=%d bcast_radix=%d bcast_chains=%d detach_max_message=%ld "
             "detach_await_min_bytes=%ld detach_grace_us=%d allreduce_ring_min_bytes=%ld "
             "allreduce_ring_max_bytes=%ld allreduce_recdoubling_max_bytes=%ld reproducible=%d topology=%d "
             "pool_max_bytes=%ld detach_max_bytes=%ld (last two: new communicators only)",
             p->bcast_alg, p->reduce_alg, p->allreduce_alg, p->node_alg, p->bcast_seg, p->reduce_seg,
             p->allreduce_seg, p->topo_seg, p->node_seg, p->numa_seg, p->recv_window, p->send_window,
             p->fanout, p->radix, p->chains, p->detach_max_message, p->await_min, p->grace_us, p->ring_min,
             p->ring_max, p->recdoubling_max, p->reproducible, p->topology, p->pool_max_bytes,
             p->detach_max_bytes);
    for (int i = 0; i < npins; ++i) {
        size_t at = strlen(out);
        textf(out + at, n - at, "%s%s", i ? ", " : "; pinned by --set: ", pins[i]);
    }
}

/* ---- a case ---- */

enum free_mode { FREE_AT_END, FREE_WHEN_DONE, FREE_WHILE_PENDING };
static const char *free_mode_names[] = {"freed at the end", "freed once its calls completed here",
                                        "freed right after its calls were posted"};

typedef struct fresh {
    comm_t c;
    int mode, freed;
} fresh_t;

typedef struct call {
    int id;           /* index in the case as generated */
    int coll, nonblocking, op, prim, inplace, prev, release_type, null_recv;
    comm_t *c;
    int fresh;        /* index into the case's fresh communicators, or -1 */
    int root;         /* rank in c */
    uint64_t key;     /* the values' key */
    unitsig_t unit;
    dtype_t *t;       /* this rank's datatype */
    int count;
    char root_desc[760];
    region_t sbuf, scopy, rbuf, rinit, rprev;
    MPI_Request req;
    int done;
} call_t;

typedef struct kase {
    long index;
    params_t par;
    int ncalls, nfresh, wait_mode;
    call_t calls[MAX_CALLS];
    fresh_t fresh[MAX_FRESH];
    char desc[32768];
} case_t;

static params_t pool_par; /* in force when the pool communicators got their engines */

static struct stats {
    long cases, calls[3], nonblocking, mismatches, prev_compared, prev_warnings;
    long adapt2_expected[3];
} stats;

/* What the signal handlers write (formatted before each case), and where
 * this rank was: per call, '.' not started, 'r' running (blocking call) or
 * posted, 'd' done; for the reference run with algorithm=previous and for
 * adapt2's run. */
static char crash_text[40000];
static volatile size_t crash_len;
static char state_line[128];
static int state_prev, state_adapt2; /* offsets of the two call lists in state_line */

static void on_signal(int sig)
{
    ssize_t w = write(2, crash_text, crash_len);
    w = write(2, state_line, strlen(state_line));
    (void) w;
    _exit(sig == SIGALRM ? 3 : 128 + sig);
}

static void set_state(int list, int call, char s) { state_line[list + call] = s; }
#define STATE_PREV state_prev
#define STATE_ADAPT2 state_adapt2

static long long case_errors;
static int case_reported;

static void report_header(const case_t *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void report_header(const case_t *k, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "FUZZ MISMATCH [rank %d] seed %llu case %ld: ", wrank, (unsigned long long) opt.seed,
            k->index);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    if (!case_reported++) {
        fprintf(stderr, "%s", k->desc);
        fprintf(stderr, "reproduce: %s --case %ld\n", repro_prefix, k->index);
    }
    fflush(stderr);
}

/* A call returned an error: its peers may wait forever, so stop the job. */
static void call_error(const case_t *k, int i, int rc, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(rc, msg, &len);
    report_header(k, "call %d (%s) returned %s", k->calls[i].id, what, msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

/* ---- generating calls ---- */

static long clamp_count(long count, long cap) { return count < 0 ? 0 : count > cap ? cap : count; }

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
    textf(c->root_desc, sizeof c->root_desc, "%ld units of %s; root: count %d of %s", units, sig,
             root_count, rt->desc);
    if (c->c->rank == c->root) {
        c->t = rt;
        c->count = root_count;
    } else {
        dtype_free(rt);
        c->t = bcast_layout(k, i, c, c->c->rank, units, same, &c->count);
    }
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
    int hole_pair = c->prim == P_DOUBLE_INT || c->prim == P_LONG_INT || c->prim == P_SHORT_INT;
    int derived = c->unit.n > 1 || (!hole_pair && rng_chance(r, 55));
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
 * layouts, which adapt2 combines itself, are kept; with an lb other than 0
 * they are not compared with the previous component. */
static void user_op_layout(rng_t *r, call_t *c)
{
    if (!c->t->contiguous) {
        int m = c->t->m;
        dtype_free(c->t);
        c->t = dtype_plain_vector(&c->unit, m, 2);
    } else if (c->t->lb != 0 || !c->t->monotonic) {
        if (rng_chance(r, 50)) {
            c->prev = 0;
        } else {
            int m = c->t->m;
            dtype_free(c->t);
            c->t = dtype_plain_vector(&c->unit, m, 1);
        }
    }
}

/* Whether adapt2 itself should run the call (for the counter check): it
 * hands user ops on non-contiguous data to the previous component. */
static int adapt2_runs(const call_t *c)
{
    if (c->c->size < 2) return 0;
    if (c->coll == C_BCAST || !ops[c->op].user) return 1;
    return c->t->contiguous || (c->count <= 1 && c->t->tub - c->t->tlb == c->t->size);
}

static void describe_call(const case_t *k, int i, char *out, size_t n)
{
    const call_t *c = &k->calls[i];
    static const char *blocking[] = {"MPI_Bcast", "MPI_Reduce", "MPI_Allreduce"};
    static const char *nonblocking[] = {"MPI_Ibcast", "MPI_Ireduce", "MPI_Iallreduce"};
    int at = snprintf(out, n, "  call %d: %s on %s (color %d, size %d, rank here %d)",
                      c->id, c->nonblocking ? nonblocking[c->coll] : blocking[c->coll], c->c->name, c->c->color,
                      c->c->size, c->c->rank);
    if (c->coll != C_ALLREDUCE) at += snprintf(out + at, n - (size_t) at, ", root %d", c->root);
    if (c->coll == C_BCAST) {
        at += snprintf(out + at, n - (size_t) at, ": %s; here: count %d of %s", c->root_desc, c->count, c->t->desc);
    } else {
        at += snprintf(out + at, n - (size_t) at, ", op %s, count %d of %s%s%s", ops[c->op].name, c->count,
                       c->t->desc, c->inplace ? (c->coll == C_REDUCE ? ", MPI_IN_PLACE at the root" : ", MPI_IN_PLACE") : "",
                       c->coll == C_REDUCE ? (c->null_recv ? ", recvbuf NULL elsewhere" : ", recvbuf checked untouched elsewhere") : "");
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
    at += (size_t) snprintf(k->desc + at, n - at, "case %ld of seed %llu (np %d): %d call(s), %s\n  params: %s\n"
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

static void gen_case(case_t *k)
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
        c->key = mix64(opt.seed * 0x100000001b3ULL ^ (uint64_t) k->index << 20 ^ (uint64_t) i << 8 ^
                       (uint64_t) c->c->color);
        const long segs[3] = {c->coll == C_BCAST ? k->par.bcast_seg
                              : c->coll == C_REDUCE ? k->par.reduce_seg : k->par.allreduce_seg,
                              k->par.topo_seg, c->coll == C_BCAST ? k->par.node_seg : k->par.topo_seg};
        if (c->coll == C_BCAST) gen_bcast(&r, k, i, c, segs, max_bytes);
        else gen_reduction(&r, c, segs, max_bytes);
        /* user ops: always compared with the previous component; predefined
         * ops on derived types never (Open MPI 4.1's components combine only
         * the first predefined element of each derived element) */
        int derived_predefined_op = c->coll != C_BCAST && !ops[c->op].user && c->unit.n == 1 &&
                                    c->t->handle != prims[c->prim].type;
        c->prev = c->coll != C_BCAST && ops[c->op].user ? 1 : !derived_predefined_op && rng_chance(&r, 20);
        if (c->coll != C_BCAST && ops[c->op].user) user_op_layout(&r, c);
        c->release_type = c->nonblocking && rng_chance(&r, 15);
    }
    int kept = 0;
    for (int i = 0; i < k->ncalls; ++i) {
        if (skip_calls & (1u << i)) dtype_free(k->calls[i].t);
        else k->calls[kept++] = k->calls[i];
    }
    k->ncalls = kept;
    describe_case(k);
}

/* ---- buffers of a call ---- */

static void fill(const call_t *c, region_t *g, int rank)
{
    unsigned char v[16];
    const dtype_t *t = c->t;
    for (long e = 0; e < c->count; ++e) {
        for (int j = 0; j < t->nmap; ++j) {
            const prim_info_t *p = &prims[t->map[j].prim];
            unsigned char *at = g->buf + e * t->extent + t->map[j].off;
            gen_value(c->key, rank, (uint64_t) (e * t->nmap + j), t->map[j].prim, c->op, v);
            for (int s = 0; s < p->nsig; ++s) memcpy(at + p->sig_off[s], v + p->sig_off[s], (size_t) p->sig_len[s]);
        }
    }
}

static int has_result(const call_t *c) { return c->coll != C_REDUCE || c->c->rank == c->root; }

static void prepare(call_t *c)
{
    int me = c->c->rank;
    if (c->coll == C_BCAST) {
        region_alloc(&c->rbuf, c->t, c->count, RECV_SENTINEL);
        if (me == c->root) {
            fill(c, &c->rbuf, me);
            region_copy(&c->scopy, &c->rbuf);
        }
    } else {
        int inplace_here = c->inplace && has_result(c);
        if (!inplace_here) {
            region_alloc(&c->sbuf, c->t, c->count, SEND_SENTINEL);
            fill(c, &c->sbuf, me);
            region_copy(&c->scopy, &c->sbuf);
        }
        if (has_result(c) || !c->null_recv) {
            region_alloc(&c->rbuf, c->t, c->count, RECV_SENTINEL);
            if (inplace_here) fill(c, &c->rbuf, me);
        }
    }
    if (c->prev && c->rbuf.mem) region_copy(&c->rprev, &c->rbuf);
}

static void release_buffers(call_t *c)
{
    region_free(&c->sbuf);
    region_free(&c->scopy);
    region_free(&c->rbuf);
    region_free(&c->rprev);
}

/* Starts (non-blocking) or runs the call with its receive buffer rb. */
static int start(call_t *c, region_t *rb, int nonblocking)
{
    MPI_Comm comm = c->c->comm;
    MPI_Datatype t = c->t->type;
    void *recv = rb->mem ? rb->buf : NULL;
    const void *send = c->sbuf.mem ? c->sbuf.buf : MPI_IN_PLACE;
    MPI_Op op = ops[c->op].op;
    switch (c->coll) {
    case C_BCAST:
        return nonblocking ? MPI_Ibcast(recv, c->count, t, c->root, comm, &c->req)
                           : MPI_Bcast(recv, c->count, t, c->root, comm);
    case C_REDUCE:
        return nonblocking ? MPI_Ireduce(send, recv, c->count, t, op, c->root, comm, &c->req)
                           : MPI_Reduce(send, recv, c->count, t, op, c->root, comm);
    default:
        return nonblocking ? MPI_Iallreduce(send, recv, c->count, t, op, comm, &c->req)
                           : MPI_Allreduce(send, recv, c->count, t, op, comm);
    }
}

/* ---- checks ---- */

/* Every unit of the result (values only). */
static long long check_values(const case_t *k, int i, const region_t *g, const char *what, int quiet)
{
    const call_t *c = &k->calls[i];
    const dtype_t *t = c->t;
    int group = ops[c->op].group, pg[4], shown = 0;
    unsigned char want[4][16];
    long long bad = 0;
    for (long e = 0; e < c->count; ++e) {
        for (int j = 0; j < t->nmap; j += group) {
            uint64_t u = (uint64_t) (e * t->nmap + j);
            for (int q = 0; q < group; ++q) pg[q] = t->map[j + q].prim;
            if (c->coll == C_BCAST) gen_value(c->key, c->root, u, pg[0], OP_NONE, want[0]);
            else expected_group(c->key, c->c->size, u, pg, group, c->op, want);
            for (int q = 0; q < group; ++q) {
                const unsigned char *got = g->buf + e * t->extent + t->map[j + q].off;
                if (prim_equal(pg[q], got, want[q])) continue;
                if (!quiet && shown++ < 5) {
                    char a[64], b[64];
                    prim_show(pg[q], got, a, sizeof a);
                    prim_show(pg[q], want[q], b, sizeof b);
                    if (bad == 0) report_header(k, "call %d: %s: wrong values", k->calls[i].id, what);
                    fprintf(stderr, "  %s: element %ld, unit %d (%s at buffer offset %ld): got %s, expected %s\n",
                            what, e, j + q, prims[pg[q]].name, e * t->extent + t->map[j + q].off, a, b);
                }
                ++bad;
            }
        }
    }
    if (!quiet && bad) fprintf(stderr, "  %s: %lld wrong units of %ld\n", what, bad, (long) c->count * t->nmap);
    return bad;
}

/* Values and holes of a receive buffer where the result is defined. */
static long long check_result(const case_t *k, int i, const region_t *g, const char *what, int quiet)
{
    const call_t *c = &k->calls[i];
    long long bad = check_values(k, i, g, what, quiet);
    int budget = quiet ? 0 : 5;
    long long holes = check_holes(c->t, c->count, g, RECV_SENTINEL, what, &budget);
    if (holes && !quiet) {
        if (!bad) report_header(k, "call %d: %s: bytes outside the typemap overwritten", k->calls[i].id, what);
        fprintf(stderr, "  %s: %lld bytes outside the typemap overwritten\n", what, holes);
    }
    return bad + holes;
}

static long long check_unchanged(const case_t *k, int i, const region_t *now, const region_t *before,
                                 const char *what)
{
    if (!now->mem || !memcmp(now->mem, before->mem, now->bytes)) return 0;
    size_t at = 0;
    while (now->mem[at] == before->mem[at]) ++at;
    report_header(k, "call %d: %s was modified (first at buffer offset %ld)", k->calls[i].id, what,
                  (long) (now->mem + at - now->buf));
    return 1;
}

static long long check_call(const case_t *k, int i)
{
    call_t *c = (call_t *) &k->calls[i];
    long long bad = 0;
    int me = c->c->rank;
    if (c->coll == C_BCAST && me == c->root) {
        bad += check_unchanged(k, i, &c->rbuf, &c->scopy, "the root's buffer");
    } else if (c->coll == C_BCAST || has_result(c)) {
        bad += check_result(k, i, &c->rbuf, "result", 0);
    } else if (c->rbuf.mem) {
        int budget = 5;
        long long b = check_holes(c->t, 0, &c->rbuf, RECV_SENTINEL, "recvbuf of a non-root", &budget);
        if (b) report_header(k, "call %d: MPI_Reduce wrote %lld bytes into a non-root's recvbuf", k->calls[i].id, b);
        bad += b;
    }
    if (c->sbuf.mem) bad += check_unchanged(k, i, &c->sbuf, &c->scopy, "the send buffer");
    if (c->rprev.mem && (c->coll != C_REDUCE || has_result(c))) {
        stats.prev_compared++;
        if (allow_pair_padding) {
            reset_pair_padding(c->t, c->count, &c->rbuf, RECV_SENTINEL);
            reset_pair_padding(c->t, c->count, &c->rprev, RECV_SENTINEL);
        }
        if (memcmp(c->rprev.mem, c->rbuf.mem, c->rbuf.bytes)) {
            /* blame: the previous component may be the one that is wrong */
            long long prev_bad = c->coll == C_BCAST && me == c->root ? 0 : check_result(k, i, &c->rprev, "previous", 1);
            if (prev_bad && !bad) {
                if (stats.prev_warnings++ < 3)
                    fprintf(stderr, "fuzz: warning [rank %d]: case %ld call %d: the previous component's result "
                            "differs from the reference (%lld units/bytes), adapt2's is right\n",
                            wrank, k->index, c->id, prev_bad);
            } else if (!bad) {
                size_t at = 0;
                while (c->rprev.mem[at] == c->rbuf.mem[at]) ++at;
                report_header(k, "call %d: adapt2's result differs from algorithm=previous at buffer offset %ld "
                              "(0x%02x, previous 0x%02x)", c->id, (long) (c->rbuf.mem + at - c->rbuf.buf),
                              c->rbuf.mem[at], c->rprev.mem[at]);
                ++bad;
            }
        }
    }
    return bad;
}

/* ---- running a case ---- */

static void free_fresh(fresh_t *f)
{
    if (!f->freed) MPI_Comm_free(&f->c.comm);
    f->freed = 1;
}

/* Frees the fresh communicators whose calls all completed on this rank. */
static void free_finished(case_t *k)
{
    for (int f = 0; f < k->nfresh; ++f) {
        if (k->fresh[f].mode != FREE_WHEN_DONE || k->fresh[f].freed) continue;
        int pending = 0;
        for (int i = 0; i < k->ncalls; ++i) pending |= k->calls[i].fresh == f && !k->calls[i].done;
        if (!pending) free_fresh(&k->fresh[f]);
    }
}

/* The reference run: every call with compare-with-previous, blocking, in call
 * order, with all three algorithms set to previous. */
static void run_previous(case_t *k)
{
    int any = 0;
    for (int i = 0; i < k->ncalls; ++i) any |= k->calls[i].prev;
    if (!any) return;
    set_algorithms("previous", "previous", "previous");
    for (int i = 0; i < k->ncalls; ++i) {
        call_t *c = &k->calls[i];
        if (!c->prev) continue;
        region_t none = {0};
        set_state(STATE_PREV, i, 'r');
        int rc = start(c, c->rprev.mem ? &c->rprev : &none, 0);
        if (rc != MPI_SUCCESS) call_error(k, i, rc, "algorithm=previous");
        set_state(STATE_PREV, i, 'd');
    }
    set_algorithms(k->par.bcast_alg, k->par.reduce_alg, k->par.allreduce_alg);
    for (int p = 0; p < npins; ++p) set_pinned(pins[p]);
}

static void run_adapt2(case_t *k)
{
    MPI_Request reqs[MAX_CALLS];
    int idx[MAX_CALLS], n = 0;
    for (int i = 0; i < k->ncalls; ++i) {
        call_t *c = &k->calls[i];
        set_state(STATE_ADAPT2, i, 'r');
        int rc = start(c, &c->rbuf, c->nonblocking);
        if (rc != MPI_SUCCESS) call_error(k, i, rc, "adapt2");
        if (!c->nonblocking) {
            c->done = 1;
            set_state(STATE_ADAPT2, i, 'd');
            continue;
        }
        if (c->release_type) dtype_release(c->t);
        reqs[n] = c->req;
        idx[n++] = i;
    }
    for (int f = 0; f < k->nfresh; ++f) {
        if (k->fresh[f].mode == FREE_WHILE_PENDING) free_fresh(&k->fresh[f]);
    }
    free_finished(k);
    /* each rank completes in its own order */
    rng_t pr = rng_make(opt.seed, (uint64_t) k->index, 0x1000 + (uint64_t) wrank);
    if (k->wait_mode == 0 && n) {
        int rc = MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
        if (rc != MPI_SUCCESS) call_error(k, idx[0], rc, "MPI_Waitall");
        for (int j = 0; j < n; ++j) k->calls[idx[j]].done = 1, set_state(STATE_ADAPT2, idx[j], 'd');
    } else if (k->wait_mode == 1) {
        for (int j = n - 1; j > 0; --j) {
            int s = (int) rng_below(&pr, (uint64_t) j + 1), x = idx[j];
            MPI_Request q = reqs[j];
            idx[j] = idx[s], reqs[j] = reqs[s];
            idx[s] = x, reqs[s] = q;
        }
        for (int j = 0; j < n; ++j) {
            int rc = MPI_Wait(&reqs[j], MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS) call_error(k, idx[j], rc, "MPI_Wait");
            k->calls[idx[j]].done = 1;
            set_state(STATE_ADAPT2, idx[j], 'd');
            free_finished(k);
        }
    } else {
        for (int left = n; left > 0; --left) {
            int which, rc = MPI_Waitany(n, reqs, &which, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS || which == MPI_UNDEFINED) call_error(k, idx[0], rc, "MPI_Waitany");
            k->calls[idx[which]].done = 1;
            set_state(STATE_ADAPT2, idx[which], 'd');
            free_finished(k);
        }
    }
    free_finished(k);
}

static void prepare_signals(const case_t *k)
{
    size_t at = 0, n = sizeof crash_text;
    at += (size_t) snprintf(crash_text + at, n - at,
                            "fuzz: [rank %d] stopped in case %ld of seed %llu (timed out after %d s, or killed: "
                            "a peer aborted)\n", wrank, k->index, (unsigned long long) opt.seed, opt.case_timeout);
    if (wrank == 0 && at < n) at += (size_t) snprintf(crash_text + at, n - at, "%s", k->desc);
    if (at < n) at += (size_t) snprintf(crash_text + at, n - at, "reproduce: %s --case %ld\n", repro_prefix, k->index);
    crash_len = at < n ? at : n - 1;
    /* "calls with algorithm=previous [dd-] then adapt2 [ddr]" */
    int len = snprintf(state_line, sizeof state_line, "fuzz: [rank %d] calls with algorithm=previous [", wrank);
    state_prev = len;
    for (int i = 0; i < k->ncalls; ++i) state_line[len++] = k->calls[i].prev ? '.' : '-';
    len += snprintf(state_line + len, sizeof state_line - (size_t) len, "] then adapt2 [");
    state_adapt2 = len;
    for (int i = 0; i < k->ncalls; ++i) state_line[len++] = '.';
    snprintf(state_line + len, sizeof state_line - (size_t) len,
             "] (d done, r running or posted, . not started, - none)\n");
}

static case_t the_case;

static long long run_case(long index)
{
    case_t *k = &the_case;
    memset(k, 0, sizeof *k);
    k->index = index;
    case_errors = 0;
    case_reported = 0;
    gen_case(k);
    prepare_signals(k);
    alarm((unsigned) opt.case_timeout);
    if (opt.verbose && wrank == 0) printf("%s", k->desc), fflush(stdout);
    for (int i = 0; opt.verbose && wrank != 0 && i < k->ncalls; ++i) {
        /* broadcast layouts differ per rank: each rank says its own */
        char line[2048];
        if (k->calls[i].coll != C_BCAST) continue;
        describe_call(k, i, line, sizeof line);
        printf("[rank %d] %s", wrank, line);
    }
    for (int i = 0; i < k->ncalls; ++i) prepare(&k->calls[i]);
    run_previous(k);
    run_adapt2(k);
    for (int i = 0; i < k->ncalls; ++i) {
        call_t *c = &k->calls[i];
        case_errors += check_call(k, i);
        stats.calls[c->coll]++;
        stats.nonblocking += c->nonblocking;
        stats.adapt2_expected[c->coll] += adapt2_runs(c);
        release_buffers(c);
        dtype_free(c->t);
    }
    for (int f = 0; f < k->nfresh; ++f) free_fresh(&k->fresh[f]);
    if (user_fn_errors) {
        report_header(k, "user op function errors: %lld", user_fn_errors);
        case_errors += user_fn_errors;
        user_fn_errors = 0;
    }
    if (case_errors && !opt.keep_going) MPI_Abort(MPI_COMM_WORLD, 1);
    return case_errors;
}

/* ---- main ---- */

static void usage(void)
{
    if (wrank == 0)
        fprintf(stderr, "usage: fuzz [--seed S] [--cases N] [--case K] [--time-budget SECONDS] [--max-count N]\n"
                        "            [--max-bytes B] [--case-timeout SECONDS] [--depth D] [--set PARAM=VALUE]...\n"
                        "            [--skip-calls LIST] [--allow-pair-padding] [--keep-going] [-v]\n");
    MPI_Finalize();
    exit(2);
}

static void parse(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-v")) opt.verbose = 1;
        else if (!strcmp(a, "--keep-going")) opt.keep_going = 1;
        else if (!strcmp(a, "--allow-pair-padding")) allow_pair_padding = 1;
        else if (!v) usage();
        else if (!strcmp(a, "--seed")) opt.seed = strtoull(v, NULL, 0), ++i;
        else if (!strcmp(a, "--cases")) opt.cases = atol(v), ++i;
        else if (!strcmp(a, "--case")) opt.only_case = atol(v), ++i;
        else if (!strcmp(a, "--time-budget")) opt.time_budget = atof(v), ++i;
        else if (!strcmp(a, "--max-count")) opt.max_count = atol(v), ++i;
        else if (!strcmp(a, "--max-bytes")) opt.max_bytes = atol(v), ++i;
        else if (!strcmp(a, "--case-timeout")) opt.case_timeout = atoi(v), ++i;
        else if (!strcmp(a, "--depth")) opt.depth = atoi(v), ++i;
        else if (!strcmp(a, "--set") && strchr(v, '=') && npins < MAX_PINS) pins[npins++] = argv[++i];
        else if (!strcmp(a, "--skip-calls")) {
            for (char *s = argv[++i]; *s; ++s)
                if (*s >= '0' && *s < '0' + MAX_CALLS) skip_calls |= 1u << (*s - '0');
        }
        else usage();
    }
    if (opt.max_count < 0 || opt.max_count > INT_MAX || opt.max_bytes < 1 || opt.depth < 0 || opt.depth > 3)
        usage();
}

/* The mpirun command that reruns one case: the MCA settings this process
 * got (mpirun passes --mca as OMPI_MCA_* variables) and the options that
 * shape the cases. */
static void build_repro(const char *argv0)
{
    extern char **environ;
    static const char *prefixes[] = {"coll", "pml", "btl", "op", "mtl", "osc", "mpi_param_check",
                                     "mpi_yield_when_idle", "mca_base_component_path"};
    size_t at = 0, n = sizeof repro_prefix;
    char path[PATH_MAX];
    at += (size_t) snprintf(repro_prefix, n, "mpirun -np %d --oversubscribe", wsize);
    for (char **e = environ; *e && at < n; ++e) {
        if (strncmp(*e, "OMPI_MCA_", 9)) continue;
        const char *name = *e + 9, *eq = strchr(name, '=');
        for (size_t p = 0; eq && p < sizeof prefixes / sizeof prefixes[0]; ++p) {
            if (!strncmp(name, prefixes[p], strlen(prefixes[p]))) {
                at += (size_t) snprintf(repro_prefix + at, n - at, " --mca %.*s '%s'", (int) (eq - name), name, eq + 1);
                break;
            }
        }
    }
    if (at < n)
        textf(repro_prefix + at, n - at, " %s --seed %llu --max-count %ld --max-bytes %ld --depth %d",
                 realpath(argv0, path) ? path : argv0, (unsigned long long) opt.seed, opt.max_count,
                 opt.max_bytes, opt.depth);
    for (int i = 0; i < npins; ++i) {
        at = strlen(repro_prefix);
        if (at < n) textf(repro_prefix + at, n - at, " --set %s", pins[i]);
    }
    for (int i = 0; i < MAX_CALLS; ++i) {
        at = strlen(repro_prefix);
        if ((skip_calls & (1u << i)) && at < n) textf(repro_prefix + at, n - at, " --skip-calls %d", i);
    }
    at = strlen(repro_prefix);
    if (allow_pair_padding && at < n) textf(repro_prefix + at, n - at, " --allow-pair-padding");
}

/* adapt2 must have run a good share of the calls it should run: the test
 * must not pass because adapt2 was not selected. */
static void check_counters(void)
{
    static const char *names[] = {"coll_adapt2_bcast_calls", "coll_adapt2_reduce_calls",
                                  "coll_adapt2_allreduce_calls"};
    for (int c = 0; c < 3; ++c) {
        long long got = adapt2_counter(names[c]);
        if (opt.verbose) printf("fuzz: [rank %d] %s %lld, expected at least %ld\n", wrank, names[c], got,
                                stats.adapt2_expected[c] / 2);
        if (stats.adapt2_expected[c] >= 10 && got < stats.adapt2_expected[c] / 2)
            fail("adapt2 ran %lld %s calls, expected about %ld: is adapt2 selected?", got, coll_names[c],
                 stats.adapt2_expected[c]);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    parse(argc, argv);
    /* errors come back to the fuzzer, which says which case failed */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (adapt2_counter("coll_adapt2_bcast_calls") < 0) fail("adapt2 is not loaded");
    adapt2_counter("coll_adapt2_reduce_calls");
    adapt2_counter("coll_adapt2_allreduce_calls");
    prims_init();
    ops_init();
    build_repro(argv[0]);
    signal(SIGALRM, on_signal);
    signal(SIGTERM, on_signal);
    /* Engines of the pool communicators are created by their first
     * collective, with these seed-derived caps (the same with --case K). */
    rng_t pr = rng_make(opt.seed, 0, 1);
    params_generate(&pr, &pool_par);
    params_apply(&pool_par);
    pool_create();
    for (int i = 0; i < POOL; ++i) {
        int x = pool[i].rank;
        if (MPI_Bcast(&x, 1, MPI_INT, 0, pool[i].comm) != MPI_SUCCESS) fail("warm-up bcast on %s", pool[i].name);
    }
    double t0 = MPI_Wtime();
    long first = opt.only_case >= 0 ? opt.only_case : 0, last = opt.only_case >= 0 ? opt.only_case + 1 : opt.cases;
    long bad_cases = 0;
    for (long k = first; k < last; ++k) {
        long long errors = run_case(k);
        stats.cases++;
        stats.mismatches += errors;
        alarm(0);
        /* end of case, together: nobody runs ahead into the next case (a hang
         * is reported in the case that hung), and everybody stops together */
        int mine[2] = {errors > 0, opt.time_budget > 0 && MPI_Wtime() - t0 >= opt.time_budget}, all[2 * 64];
        int *flags = wsize <= 64 ? all : malloc(sizeof(int) * 2 * (size_t) wsize);
        MPI_Allgather(mine, 2, MPI_INT, flags, 2, MPI_INT, MPI_COMM_WORLD);
        int any_bad = 0;
        for (int r = 0; r < wsize; ++r) any_bad |= flags[2 * r];
        bad_cases += any_bad;
        int stop = flags[1];
        if (flags != all) free(flags);
        if (stop) {
            if (wrank == 0) printf("fuzz: time budget of %g s used up after %ld cases\n", opt.time_budget, stats.cases);
            break;
        }
    }
    check_counters();
    if (wrank == 0) {
        printf("fuzz: %ld cases (bcast %ld, reduce %ld, allreduce %ld; nonblocking %ld), %ld mismatches, seed %llu\n",
               stats.cases, stats.calls[0], stats.calls[1], stats.calls[2], stats.nonblocking, bad_cases,
               (unsigned long long) opt.seed);
        if (opt.verbose) printf("fuzz: %ld results compared with algorithm=previous\n", stats.prev_compared);
    }
    pool_free();
    ops_finalize();
    MPI_Finalize();
    return bad_cases ? 1 : 0;
}
