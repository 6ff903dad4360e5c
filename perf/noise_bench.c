/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * noise_bench: how much of the OS noise injected on the ranks does a
 * collective amplify?
 *
 * Plain MPI only (no adapt2 headers): the component under test is chosen at
 * run time with mpirun's --mca flags (see perf/compare.py noise).
 *
 * Each rank runs N iterations of
 *     blocking:      work; collective
 *     non-blocking:  post; work; wait        (the work overlaps the call)
 * with NO barrier in the loop, where "work" is W microseconds of compute
 * (a sleep by default, so that ranks oversubscribing a core do not steal it
 * from each other; -b spins) plus this iteration's injected noise (perf/noise.h:
 * which ranks, how often, how long, sleep or spin; deterministic for a seed).
 *
 * One invocation runs the loop twice, separated by barriers: once without
 * noise ("clean") and once with it ("noisy"), after an untimed warm-up
 * without noise.  Each rank times its own loop (CLOCK_MONOTONIC from the
 * barrier's exit to the return of its last collective).  Then, with
 *   Tc_r, Tn_r   rank r's clean and noisy loop times,
 *   N_r          the total noise injected on rank r (nominal durations; the
 *                injector's absolute deadlines make that exactly what the
 *                noise adds to the rank's own work),
 *   n_r,i        the noise of iteration i on rank r,
 * it reports
 *   amplification = (mean_r Tn_r - mean_r Tc_r) / mean_r N_r
 *       1.0: every rank loses exactly its own noise (noise is absorbed, no
 *       rank waits for another's); larger: ranks also wait for the noise of
 *       others;
 *   sync_bound    = sum_i max_r n_r,i / mean_r N_r
 *       what a fully synchronized (lock-step) collective costs: every
 *       iteration waits for the noisiest rank of that iteration (computed
 *       from the noise actually injected);
 *   amp_last      = (max_r Tn_r - max_r Tc_r) / mean_r N_r (the last rank);
 *   floor, floor_last: the least amplification (mean, last rank) that the
 *       data's dependencies allow this draw of noise, whatever the algorithm
 *       (no latency, unbounded decoupling): rank r's delay after call i is
 *         D_r,i = max(D_r,i-1 + n_r,i, max over its sources s of E_s,i)
 *       where a source's data leaves at E_s,i = D_s,i-1 + n_s,i (blocking:
 *       after its work) or D_s,i-1 (non-blocking: posted before the work),
 *       and the sources are: a broadcast's non-root, the root; a reduce's
 *       root, every rank; an allreduce's rank, every rank (then floor is
 *       sync_bound); a broadcast's root and a reduce's non-roots none. So a
 *       broadcast whose root draws more noise than the mean rank cannot
 *       reach 1: its root's noise reaches every rank. Calls are taken to
 *       cost nothing: where they take long against the noise (1 MiB), a
 *       rank that comes late finds its data there and saves the call's time,
 *       so the measured figure may lie below the floor.
 * With one noisy rank out of np, lock-step gives np, full absorption 1.
 *
 * Validation (-c): before each loop the sources fill their buffers with a
 * pattern that depends on the loop and the receivers poison theirs; after the
 * loop every receiver checks every element (and every rank of a reduction its
 * unchanged send buffer).  -C does that around every iteration instead (its
 * cost is then inside the timed loops).  Reductions are sums of small
 * integers, exact in every datatype.
 *
 * What the loops cost besides time (measured around each timed loop, from
 * its start to the return of its last collective):
 *   cpu_{clean,noisy}_ms   each rank's process CPU time in the loop
 *                          (CLOCK_PROCESS_CPUTIME_ID: every thread, so a
 *                          progress thread shows here too), mean over ranks;
 * and, when the component exports them through MPI_T (adapt2's
 * coll_adapt2_* counters; absent, e.g. with tuned and no adapt2 loaded, the
 * keys are left out):
 *   copied_bytes_per_call_{clean,noisy}  bytes copied into private buffers
 *                          so that calls could return before their peers had
 *                          the data (decoupled completion): per rank the
 *                          coll_adapt2_detach_bytes delta / iterations, mean
 *                          over ranks;
 *   detached_frac_{clean,noisy}  calls that returned early
 *                          (coll_adapt2_detached_calls) / (np x iterations);
 *                          a broadcast's leaves and a reduce's root never
 *                          detach, so it stays below 1;
 *   detach_refused_{clean,noisy}  calls that found the per-communicator
 *                          detach cap reached (coll_adapt2_detach_refused),
 *                          summed over ranks;
 *   pt_cpu_{clean,noisy}_ms, pt_polls_{clean,noisy}  the progress thread's
 *                          CPU time and polls (coll_adapt2_progress_thread_*),
 *                          mean over ranks.
 * -t initialises MPI with MPI_THREAD_MULTIPLE (adapt2's progress thread
 * drives Open MPI's progress engine only at that level); the level provided
 * is reported as thread=.
 *
 * Output: '#' comment lines, a per-rank table, one machine-readable line
 * starting "RESULT " (key=value pairs, read by compare.py) and readable
 * summary lines.
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_args.h"
#include <mpi.h>

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "noise.h"

#define DEFAULT_ITERS 200
#define DEFAULT_WARMUP 10
#define DEFAULT_SIZE (1UL << 20)
#define DEFAULT_COMPUTE 2000.0 /* us */
#define DEFAULT_NOISE "p=0.1,d=5ms"
#define DEFAULT_SEED 1

/* ------------------------------------------------------------------------ */
/* datatypes                                                                 */

typedef struct {
    const char *name;
    MPI_Datatype (*mpi_type)(void);
    size_t size;
    void (*store)(void *, size_t, int);
    int (*load)(const void *, size_t);
} type_desc_t;

#define DEFINE_TYPE(NAME, CTYPE)                       \
    static MPI_Datatype t_##NAME(void);                \
    static void store_##NAME(void *b, size_t j, int v) \
    {                                                  \
        ((CTYPE *) b)[j] = (CTYPE) v;                  \
    }                                                  \
    static int load_##NAME(const void *b, size_t j)    \
    {                                                  \
        return (int) ((const CTYPE *) b)[j];           \
    }
DEFINE_TYPE(char, char)
DEFINE_TYPE(int, int)
DEFINE_TYPE(float, float)
DEFINE_TYPE(double, double)
static MPI_Datatype t_char(void)
{
    return MPI_CHAR;
}
static MPI_Datatype t_int(void)
{
    return MPI_INT;
}
static MPI_Datatype t_float(void)
{
    return MPI_FLOAT;
}
static MPI_Datatype t_double(void)
{
    return MPI_DOUBLE;
}

static const type_desc_t type_table[] = {
    {"char", t_char, sizeof(char), store_char, load_char},
    {"int", t_int, sizeof(int), store_int, load_int},
    {"float", t_float, sizeof(float), store_float, load_float},
    {"double", t_double, sizeof(double), store_double, load_double},
};
#define NTYPES (sizeof(type_table) / sizeof(type_table[0]))

static const type_desc_t *find_type(const char *name)
{
    for (size_t i = 0; i < NTYPES; i++)
        if (!strcmp(name, type_table[i].name)) return &type_table[i];
    return NULL;
}

/* Validation values: element j of key k.  Broadcast: 0..99 (fits every
 * type).  Reductions: rank r contributes -1, 0 or 1, so any sum is exact
 * (char: up to 127 ranks).  Poison: a value the check never expects. */
static int bcast_value(size_t j, long key)
{
    return (int) (((uint64_t) j * 2654435761u + (uint64_t) key * 977u + 17u) % 100u);
}

static int contribution(size_t j, long key, int r)
{
    uint64_t h = (uint64_t) j * 0x9e3779b1u + (uint64_t) key * 40503u + (uint64_t) r * 7919u;
    h ^= h >> 13;
    return (int) (h % 3u) - 1;
}

/* ------------------------------------------------------------------------ */
/* collectives                                                               */

typedef enum { ROOT_SENDS, ROOT_RECEIVES, NO_ROOT } flow_t;

typedef struct {
    MPI_Comm comm;
    int rank, nprocs, root;
    const type_desc_t *type;
    MPI_Datatype dtype;
    size_t count;
    void *sbuf, *rbuf;
    int thread_level; /* provided by MPI_Init[_thread] */
} ctx_t;

typedef struct {
    const char *name, *help;
    int blocking;
    flow_t flow;
    const char *default_type;
    /* blocking: the call; non-blocking: the post (req) */
    int (*call)(ctx_t *c, MPI_Request *req);
} coll_desc_t;

static int c_bcast(ctx_t *c, MPI_Request *r)
{
    (void) r;
    return MPI_Bcast(c->sbuf, (int) c->count, c->dtype, c->root, c->comm);
}
static int c_ibcast(ctx_t *c, MPI_Request *r)
{
    return MPI_Ibcast(c->sbuf, (int) c->count, c->dtype, c->root, c->comm, r);
}
static int c_reduce(ctx_t *c, MPI_Request *r)
{
    (void) r;
    return MPI_Reduce(c->sbuf, c->rbuf, (int) c->count, c->dtype, MPI_SUM, c->root, c->comm);
}
static int c_ireduce(ctx_t *c, MPI_Request *r)
{
    return MPI_Ireduce(c->sbuf, c->rbuf, (int) c->count, c->dtype, MPI_SUM, c->root, c->comm, r);
}
static int c_allreduce(ctx_t *c, MPI_Request *r)
{
    (void) r;
    return MPI_Allreduce(c->sbuf, c->rbuf, (int) c->count, c->dtype, MPI_SUM, c->comm);
}
static int c_iallreduce(ctx_t *c, MPI_Request *r)
{
    return MPI_Iallreduce(c->sbuf, c->rbuf, (int) c->count, c->dtype, MPI_SUM, c->comm, r);
}

static const coll_desc_t coll_table[] = {
    {"bcast", "MPI_Bcast", 1, ROOT_SENDS, "char", c_bcast},
    {"ibcast", "MPI_Ibcast; work; MPI_Wait", 0, ROOT_SENDS, "char", c_ibcast},
    {"reduce", "MPI_Reduce (MPI_SUM)", 1, ROOT_RECEIVES, "float", c_reduce},
    {"ireduce", "MPI_Ireduce; work; MPI_Wait", 0, ROOT_RECEIVES, "float", c_ireduce},
    {"allreduce", "MPI_Allreduce (MPI_SUM)", 1, NO_ROOT, "float", c_allreduce},
    {"iallreduce", "MPI_Iallreduce; work; MPI_Wait", 0, NO_ROOT, "float", c_iallreduce},
};
#define NCOLLS (sizeof(coll_table) / sizeof(coll_table[0]))

static int is_receiver(const coll_desc_t *d, const ctx_t *c)
{
    return d->flow != ROOT_RECEIVES || c->rank == c->root;
}

/* Sets the buffers up for validation key `key`. */
static void prepare(const coll_desc_t *d, ctx_t *c, long key)
{
    const type_desc_t *t = c->type;
    if (d->flow == ROOT_SENDS) {
        int root = c->rank == c->root;
        for (size_t j = 0; j < c->count; j++) t->store(c->sbuf, j, root ? bcast_value(j, key) : 100 + (int) (j % 7));
        return;
    }
    int recv = is_receiver(d, c);
    for (size_t j = 0; j < c->count; j++) {
        t->store(c->sbuf, j, contribution(j, key, c->rank));
        if (recv) t->store(c->rbuf, j, 100 + (int) (j % 7));
    }
}

/* First wrong element on this rank for key `key`, or -1 (what: a message). */
static long check(const coll_desc_t *d, ctx_t *c, long key, char *what, size_t len)
{
    const type_desc_t *t = c->type;
    if (d->flow == ROOT_SENDS) {
        for (size_t j = 0; j < c->count; j++) {
            int want = bcast_value(j, key), got = t->load(c->sbuf, j);
            if (got != want) {
                snprintf(what, len, "expected %d, got %d", want, got);
                return (long) j;
            }
        }
        return -1;
    }
    int recv = is_receiver(d, c);
    for (size_t j = 0; j < c->count; j++) {
        int mine = contribution(j, key, c->rank), got = t->load(c->sbuf, j);
        if (got != mine) {
            snprintf(what, len, "send buffer modified: expected %d, got %d", mine, got);
            return (long) j;
        }
        if (!recv) continue;
        int want = 0;
        for (int r = 0; r < c->nprocs; r++) want += contribution(j, key, r);
        got = t->load(c->rbuf, j);
        if (got != want) {
            snprintf(what, len, "result: expected %d, got %d", want, got);
            return (long) j;
        }
    }
    return -1;
}

/* ------------------------------------------------------------------------ */
/* options                                                                   */

typedef struct {
    const coll_desc_t *coll;
    const type_desc_t *type;
    size_t size;
    int root, root_given;
    int iters, warmup;
    double compute_us, poll_us;
    int spin_compute;
    const char *noise_text;
    noise_spec_t noise;
    unsigned long long seed;
    int validate;        /* 0, 1: after each loop, 2: every iteration */
    int quiet;           /* no per-rank table */
    int thread_multiple; /* -t: MPI_Init_thread(MPI_THREAD_MULTIPLE) */
    int help;
} options_t;

#define OPTSTRING ":k:m:T:r:i:x:w:bP:n:s:cCqth"

static void usage(FILE *f, const char *prog)
{
    fprintf(f,
            "Usage: %s [options]\n"
            "Noise absorption: N iterations of (work; collective), or (post; work; wait) for\n"
            "the non-blocking ones, with no barrier in the loop; work = compute + injected\n"
            "noise.  Runs the loop without noise, then with noise (same seed), and reports\n"
            "amplification = (mean T_noisy - mean T_clean) / mean noise injected per rank\n"
            "(1: each rank's noise costs only that rank) and sync_bound (what a lock-step\n"
            "collective would cost, from the noise actually injected).\n"
            "  -k NAME      collective:",
            prog);
    for (size_t i = 0; i < NCOLLS; i++) fprintf(f, " %s%s", coll_table[i].name, i ? "" : " (default)");
    fprintf(f,
            "\n"
            "  -m SIZE      message size in bytes, K/M/G suffixes (default 1M)\n"
            "  -T TYPE      char, int, float, double (default: char for broadcasts, float for\n"
            "               reductions; the reductions are MPI_SUM)\n"
            "  -r ROOT      root of bcast/ibcast/reduce/ireduce (default 0)\n"
            "  -i N         iterations per loop (default %d)\n"
            "  -x N         untimed warm-up iterations without noise (default %d)\n"
            "  -w US        compute per iteration in microseconds (default %g)\n"
            "  -b           busy compute (spin) instead of sleeping (dedicated cores only)\n"
            "  -P US        non-blocking collectives: call MPI_Test every US microseconds\n"
            "               during the compute (default 0: never; noise never polls)\n"
            "  -n SPEC      the noise (default \"%s\"):\n"
            "                 none | [random:]KEY=VAL,... | periodic:KEY=VAL,...\n"
            "                 random:   p=PROB (0.1)  d=DUR (5ms; exp: mean, pareto: minimum)\n"
            "                           dist=fixed|exp|pareto  alpha=A (1.5)  cap=DUR (20*d)\n"
            "                 periodic: d=DUR (5ms) once every=DUR (50ms), phase=rand|same\n"
            "                 both:     ranks=all|R|R+R+...  or frac=F (chosen by the seed);\n"
            "                           how=sleep|spin (default sleep)\n"
            "                 DUR: number with us, ms or s (default us)\n"
            "  -s SEED      noise seed (default %d); the same seed gives the same noise\n"
            "  -c           validate the data after each loop (every receiver, every element)\n"
            "  -C           validate around every iteration (inside the timed loops)\n"
            "  -q           no per-rank table\n"
            "  -t           MPI_Init_thread(MPI_THREAD_MULTIPLE) instead of MPI_Init (what\n"
            "               adapt2's progress thread needs to drive Open MPI's progress)\n"
            "  -h           this help\n"
            "Output: '#' comments, a per-rank table, a line 'RESULT key=value ...' and a\n"
            "readable summary.  Besides times it reports each rank's process CPU time per\n"
            "loop and, where the component exports them through MPI_T (adapt2), what\n"
            "decoupled completion cost: bytes copied per call, the fraction of calls that\n"
            "returned early, refusals at the cap, the progress thread's CPU time.\n"
            "Exit status 2 on argument errors, 1 on validation errors.\n",
            DEFAULT_ITERS, DEFAULT_WARMUP, DEFAULT_COMPUTE, DEFAULT_NOISE, DEFAULT_SEED);
}

static int parse_us(const char *s, double *out)
{
    char *end;
    if (!*s) return 0;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v) || v < 0 || v > 1e9) return 0;
    *out = v;
    return 1;
}

static const char *finish_args(options_t *o, int nprocs, char *msg, size_t len)
{
    char err[200];
    if (o->size < 1) return "message size must be at least 1 byte";
    if (o->root >= nprocs) {
        snprintf(msg, len, "root %d is not a rank (np=%d)", o->root, nprocs);
        return msg;
    }
    if (o->root_given && o->coll->flow == NO_ROOT) {
        snprintf(msg, len, "-r does not apply to %s (it has no root)", o->coll->name);
        return msg;
    }
    if (!o->type) o->type = find_type(o->coll->default_type);
    if (o->size < o->type->size) {
        snprintf(msg, len, "size %zu is smaller than one %s", o->size, o->type->name);
        return msg;
    }
    if (o->size / o->type->size > (size_t) INT_MAX) return "message too large (count > INT_MAX)";
    if (o->poll_us > 0 && o->coll->blocking) {
        snprintf(msg, len, "-P applies to the non-blocking collectives only, not to %s", o->coll->name);
        return msg;
    }
    if (noise_parse(o->noise_text, &o->noise, err, sizeof(err)) ||
        noise_check_ranks(&o->noise, nprocs, err, sizeof(err))) {
        snprintf(msg, len, "bad noise spec '%s': %s", o->noise_text, err);
        return msg;
    }
    return NULL;
}

/* NULL on success, or an error message. */
static const char *parse_args(int argc, char **argv, int nprocs, options_t *o)
{
    static char msg[320];
    int opt;
    char *end;
    memset(o, 0, sizeof(*o));
    o->coll = &coll_table[0];
    o->size = DEFAULT_SIZE;
    o->iters = DEFAULT_ITERS;
    o->warmup = DEFAULT_WARMUP;
    o->compute_us = DEFAULT_COMPUTE;
    o->noise_text = DEFAULT_NOISE;
    o->seed = DEFAULT_SEED;

    opterr = 0;
    while ((opt = getopt(argc, argv, OPTSTRING)) != -1) {
        switch (opt) {
        case 'k':
            o->coll = NULL;
            for (size_t i = 0; i < NCOLLS; i++)
                if (!strcmp(optarg, coll_table[i].name)) o->coll = &coll_table[i];
            if (!o->coll) {
                snprintf(msg, sizeof(msg), "unknown collective '%s'", optarg);
                return msg;
            }
            break;
        case 'm':
            if (!parse_size(optarg, &o->size)) {
                snprintf(msg, sizeof(msg), "bad message size '%s'", optarg);
                return msg;
            }
            break;
        case 'T':
            if (!(o->type = find_type(optarg))) {
                snprintf(msg, sizeof(msg), "unknown datatype '%s'", optarg);
                return msg;
            }
            break;
        case 'r':
            if (!parse_int(optarg, 0, &o->root)) {
                snprintf(msg, sizeof(msg), "bad root '%s'", optarg);
                return msg;
            }
            o->root_given = 1;
            break;
        case 'i':
            if (!parse_int(optarg, 1, &o->iters)) {
                snprintf(msg, sizeof(msg), "bad iteration count '%s' (at least 1)", optarg);
                return msg;
            }
            break;
        case 'x':
            if (!parse_int(optarg, 0, &o->warmup)) {
                snprintf(msg, sizeof(msg), "bad warm-up count '%s'", optarg);
                return msg;
            }
            break;
        case 'w':
            if (!parse_us(optarg, &o->compute_us)) {
                snprintf(msg, sizeof(msg), "bad compute time '%s' (microseconds)", optarg);
                return msg;
            }
            break;
        case 'P':
            if (!parse_us(optarg, &o->poll_us)) {
                snprintf(msg, sizeof(msg), "bad poll interval '%s' (microseconds)", optarg);
                return msg;
            }
            break;
        case 'b': o->spin_compute = 1; break;
        case 'n': o->noise_text = optarg; break;
        case 's':
            errno = 0;
            o->seed = strtoull(optarg, &end, 10);
            if (errno || !*optarg || *end || !isdigit((unsigned char) *optarg)) {
                snprintf(msg, sizeof(msg), "bad seed '%s'", optarg);
                return msg;
            }
            break;
        case 'c':
            if (o->validate < 1) o->validate = 1;
            break;
        case 'C': o->validate = 2; break;
        case 'q': o->quiet = 1; break;
        case 't': o->thread_multiple = 1; break;
        case 'h': o->help = 1; return NULL;
        case ':': snprintf(msg, sizeof(msg), "option -%c needs an argument", optopt); return msg;
        default: snprintf(msg, sizeof(msg), "unknown option -%c", optopt); return msg;
        }
    }
    if (optind < argc) {
        snprintf(msg, sizeof(msg), "unexpected argument '%s'", argv[optind]);
        return msg;
    }
    return finish_args(o, nprocs, msg, sizeof(msg));
}

/* ------------------------------------------------------------------------ */
/* MPI_T counters (adapt2's, when loaded) and CPU time                       */

enum { PV_DETACHED, PV_BYTES, PV_REFUSED, PV_PT_CPU_NS, PV_PT_POLLS, NPV };
static const char *const pvar_names[NPV] = {
    "coll_adapt2_detached_calls",         "coll_adapt2_detach_bytes",          "coll_adapt2_detach_refused",
    "coll_adapt2_progress_thread_cpu_ns", "coll_adapt2_progress_thread_polls",
};

static struct {
    int ready; /* MPI_T initialised, session created */
    int have;  /* all NPV counters found */
    MPI_T_pvar_session session;
    MPI_T_pvar_handle handle[NPV];
} pv;

/* After MPI_Init.  Open MPI 4.1's MPI_T_init_thread overwrites the library's
 * thread level with the one it is given, so it gets the level MPI has.  Any
 * failure (no MPI_T, no such counters) just leaves pv.have 0. */
static void pvars_init(void)
{
    int level, provided, count;
    MPI_Query_thread(&level);
    if (MPI_SUCCESS != MPI_T_init_thread(level, &provided)) return;
    if (MPI_SUCCESS != MPI_T_pvar_session_create(&pv.session)) {
        MPI_T_finalize();
        return;
    }
    pv.ready = 1;
    for (int i = 0; i < NPV; i++) {
        int index;
        if (MPI_SUCCESS != MPI_T_pvar_get_index(pvar_names[i], MPI_T_PVAR_CLASS_COUNTER, &index) ||
            MPI_SUCCESS != MPI_T_pvar_handle_alloc(pv.session, index, NULL, &pv.handle[i], &count) || count != 1) {
            for (int j = 0; j < i; j++) MPI_T_pvar_handle_free(pv.session, &pv.handle[j]);
            return;
        }
    }
    pv.have = 1;
}

static void pvars_fini(void)
{
    if (!pv.ready) return;
    if (pv.have)
        for (int i = 0; i < NPV; i++) MPI_T_pvar_handle_free(pv.session, &pv.handle[i]);
    MPI_T_pvar_session_free(&pv.session);
    MPI_T_finalize();
    pv.ready = pv.have = 0;
}

/* The counters now (what accumulated since the handles were allocated; only
 * differences are used), or zeros without them. */
static void pvars_read(double out[NPV])
{
    for (int i = 0; i < NPV; i++) {
        unsigned long long v = 0;
        if (pv.have && MPI_SUCCESS != MPI_T_pvar_read(pv.session, pv.handle[i], &v)) v = 0;
        out[i] = (double) v;
    }
}

/* This process's CPU time (all its threads), in seconds. */
static double process_cpu_s(void)
{
    struct timespec t;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t)) return 0;
    return (double) t.tv_sec + 1e-9 * (double) t.tv_nsec;
}

/* ------------------------------------------------------------------------ */
/* the loop                                                                  */

typedef struct {
    double t_loop;   /* s, this rank's loop */
    double t_coll;   /* s, inside the collective (post + wait) */
    double noise_us; /* total injected */
    double cpu_s;    /* this process's CPU time in the loop */
    double pv[NPV];  /* the MPI_T counters' increase in the loop */
    long events;
    long bad_iters; /* -C: iterations that failed validation */
    long first_bad; /* -C: the first one, or -1 */
    char what[160]; /* -C: its message */
} loop_result_t;

static void poll_request(void *arg)
{
    int flag;
    MPI_Test((MPI_Request *) arg, &flag, MPI_STATUS_IGNORE);
}

static void die_on(int rc, const ctx_t *c, const char *what)
{
    if (MPI_SUCCESS == rc) return;
    fprintf(stderr, "rank %d: %s failed (error %d)\n", c->rank, what, rc);
    MPI_Abort(c->comm, 1);
}

/* One loop of `iters` iterations; key: the validation key of the loop;
 * per_iter_noise (may be NULL): this rank's noise per iteration (us). */
static void run_loop(const options_t *o, ctx_t *c, const noise_spec_t *spec, int iters, long key,
                     double *per_iter_noise, loop_result_t *res)
{
    const coll_desc_t *d = o->coll;
    noise_state_t ns;
    memset(res, 0, sizeof(*res));
    res->first_bad = -1;
    if (o->validate == 1) prepare(d, c, key);
    double pv0[NPV], pv1[NPV];
    MPI_Barrier(c->comm);
    pvars_read(pv0);
    double cpu0 = process_cpu_s();
    double t_start = noise_now();
    noise_setup(&ns, spec, o->seed, c->rank, c->nprocs, t_start);
    for (int it = 0; it < iters; it++) {
        long ikey = key * 1000003L + it;
        MPI_Request req = MPI_REQUEST_NULL;
        double noise, tc0, tc1;
        if (o->validate == 2) prepare(d, c, ikey);
        if (d->blocking) {
            noise = noise_work(&ns, it, o->compute_us, o->spin_compute, NULL, NULL, 0);
            tc0 = noise_now();
            die_on(d->call(c, &req), c, d->name);
            tc1 = noise_now();
        } else {
            tc0 = noise_now();
            die_on(d->call(c, &req), c, d->name);
            tc1 = noise_now();
            noise = noise_work(&ns, it, o->compute_us, o->spin_compute, o->poll_us > 0 ? poll_request : NULL, &req,
                               o->poll_us);
            double tw = noise_now();
            die_on(MPI_Wait(&req, MPI_STATUS_IGNORE), c, "MPI_Wait");
            tc1 += noise_now() - tw;
        }
        res->t_coll += tc1 - tc0;
        if (per_iter_noise) per_iter_noise[it] = noise;
        if (o->validate == 2) {
            char what[160];
            if (check(d, c, ikey, what, sizeof(what)) >= 0) {
                if (res->first_bad < 0) {
                    res->first_bad = it;
                    snprintf(res->what, sizeof(res->what), "%s", what);
                }
                res->bad_iters++;
            }
        }
    }
    res->t_loop = noise_now() - t_start;
    res->cpu_s = process_cpu_s() - cpu0;
    pvars_read(pv1);
    for (int i = 0; i < NPV; i++) res->pv[i] = pv1[i] - pv0[i];
    res->noise_us = ns.total_us;
    res->events = ns.events;
    MPI_Barrier(c->comm);
}

/* After a loop: the validation verdict of every rank (MPI_Allgather, never
 * the collective under test).  1 if any rank failed. */
static int verdict(const options_t *o, ctx_t *c, long key, const loop_result_t *res, const char *loop)
{
    char what[160] = "";
    long bad = -1;
    if (o->validate == 1) bad = check(o->coll, c, key, what, sizeof(what));
    if (bad >= 0)
        fprintf(stderr,
                "VALIDATION FAILED: rank %d %s %s loop, size %zu, type %s: first bad "
                "element %ld: %s\n",
                c->rank, o->coll->name, loop, o->size, c->type->name, bad, what);
    if (res->bad_iters)
        fprintf(stderr,
                "VALIDATION FAILED: rank %d %s %s loop, size %zu, type %s: %ld "
                "iterations wrong, the first %ld: %s\n",
                c->rank, o->coll->name, loop, o->size, c->type->name, res->bad_iters, res->first_bad, res->what);
    int local = bad >= 0 || res->bad_iters > 0, any = 0;
    int *all = malloc(sizeof(int) * (size_t) c->nprocs);
    if (!all) MPI_Abort(c->comm, 1);
    MPI_Allgather(&local, 1, MPI_INT, all, 1, MPI_INT, c->comm);
    for (int r = 0; r < c->nprocs; r++) any |= all[r];
    free(all);
    return any;
}

/* ------------------------------------------------------------------------ */
/* report                                                                    */

enum {
    F_CLEAN,
    F_NOISY,
    F_NOISE,
    F_EVENTS,
    F_NOISY_FLAG,
    F_COLL_CLEAN,
    F_COLL_NOISY,
    F_CPU_CLEAN,
    F_CPU_NOISY,
    F_PV_HAVE,
    F_PV_CLEAN,
    F_PV_NOISY = F_PV_CLEAN + NPV,
    NF = F_PV_NOISY + NPV
};

/* What one loop cost, over all ranks (from the gathered per-rank fields). */
typedef struct {
    double cpu_ms;          /* process CPU time, mean over ranks */
    double bytes_per_call;  /* detach_bytes / iterations, mean over ranks */
    double detached_frac;   /* detached calls / (np x iterations) */
    double refused;         /* summed over ranks */
    double pt_ms, pt_polls; /* progress thread, mean over ranks */
} loop_cost_t;

static void loop_cost(const double *all, int np, int iters, int f_cpu, int f_pv, loop_cost_t *k)
{
    double cpu = 0, pvs[NPV] = {0};
    for (int r = 0; r < np; r++) {
        const double *v = all + (size_t) r * NF;
        cpu += v[f_cpu];
        for (int i = 0; i < NPV; i++) pvs[i] += v[f_pv + i];
    }
    k->cpu_ms = 1e3 * cpu / np;
    k->bytes_per_call = pvs[PV_BYTES] / iters / np;
    k->detached_frac = pvs[PV_DETACHED] / ((double) iters * np);
    k->refused = pvs[PV_REFUSED];
    k->pt_ms = 1e-6 * pvs[PV_PT_CPU_NS] / np;
    k->pt_polls = pvs[PV_PT_POLLS] / np;
}

static const char *bytes_name(double n, char *b, size_t len)
{
    if (n >= 1024.0 * 1024)
        snprintf(b, len, "%.1f MiB", n / (1024.0 * 1024));
    else if (n >= 1024)
        snprintf(b, len, "%.1f KiB", n / 1024);
    else
        snprintf(b, len, "%.0f B", n);
    return b;
}

static const char *size_name(size_t n, char *b, size_t len)
{
    if (n >= (1u << 20) && n % (1u << 20) == 0)
        snprintf(b, len, "%zu MiB", n >> 20);
    else if (n >= 1024 && n % 1024 == 0)
        snprintf(b, len, "%zu KiB", n >> 10);
    else
        snprintf(b, len, "%zu B", n);
    return b;
}

/* Whether `src`'s data is needed by `r` to complete a call of `d` (the
 * floor's dependencies: see the head of this file). */
static int needs(const coll_desc_t *d, int root, int r, int src)
{
    if (src == r) return 0;
    if (d->flow == ROOT_SENDS) return src == root;
    if (d->flow == ROOT_RECEIVES) return r == root;
    return 1;
}

/* The floor and floor_last (head of this file) from every rank's noise per
 * iteration (noise[r * n + i], us), over the mean noise per rank (us). */
static void dependency_floor(const coll_desc_t *d, int root, int np, int n, const double *noise, double mean_noise,
                             double *floor, double *floor_last)
{
    *floor = *floor_last = NAN;
    if (mean_noise <= 0) return;
    double *delay = calloc((size_t) np, sizeof(double)), *departs = calloc((size_t) np, sizeof(double));
    if (!delay || !departs) {
        free(delay);
        free(departs);
        return;
    }
    for (int i = 0; i < n; i++) {
        /* every rank's departure E_s,i first, from the delays after call i - 1 */
        for (int s = 0; s < np; s++) departs[s] = delay[s] + (d->blocking ? noise[(size_t) s * n + i] : 0);
        for (int r = 0; r < np; r++) {
            double t = delay[r] + noise[(size_t) r * n + i];
            for (int s = 0; s < np; s++)
                if (needs(d, root, r, s) && departs[s] > t) t = departs[s];
            delay[r] = t;
        }
    }
    double sum = 0, most = 0;
    for (int r = 0; r < np; r++) {
        sum += delay[r];
        most = delay[r] > most ? delay[r] : most;
    }
    *floor = sum / np / mean_noise;
    *floor_last = most / mean_noise;
    free(delay);
    free(departs);
}

static void report(const options_t *o, const ctx_t *c, const loop_result_t *clean, const loop_result_t *noisy,
                   const double *per_iter_noise, int noisy_rank, int valid, const char *canon)
{
    int np = c->nprocs, n = o->iters;
    double mine[NF] = {clean->t_loop, noisy->t_loop, noisy->noise_us, (double) noisy->events, (double) noisy_rank,
                       clean->t_coll, noisy->t_coll, clean->cpu_s,    noisy->cpu_s,           (double) pv.have};
    for (int i = 0; i < NPV; i++) {
        mine[F_PV_CLEAN + i] = clean->pv[i];
        mine[F_PV_NOISY + i] = noisy->pv[i];
    }
    double *all = NULL, *allnoise = NULL;
    if (0 == c->rank) {
        all = malloc(sizeof(double) * NF * (size_t) np);
        allnoise = malloc(sizeof(double) * (size_t) n * (size_t) np);
        if (!all || !allnoise) MPI_Abort(c->comm, 1);
    }
    MPI_Gather(mine, NF, MPI_DOUBLE, all, NF, MPI_DOUBLE, 0, c->comm);
    MPI_Gather(per_iter_noise, n, MPI_DOUBLE, allnoise, n, MPI_DOUBLE, 0, c->comm);
    if (0 != c->rank) return;

    double sc = 0, sn = 0, snoise = 0, mc = 0, mn = 0, sev = 0, scc = 0, scn = 0, sync = 0;
    int nnoisy = 0, have = 1;
    for (int r = 0; r < np; r++) {
        const double *v = all + (size_t) r * NF;
        sc += v[F_CLEAN];
        sn += v[F_NOISY];
        snoise += v[F_NOISE];
        sev += v[F_EVENTS];
        scc += v[F_COLL_CLEAN];
        scn += v[F_COLL_NOISY];
        mc = v[F_CLEAN] > mc ? v[F_CLEAN] : mc;
        mn = v[F_NOISY] > mn ? v[F_NOISY] : mn;
        nnoisy += v[F_NOISY_FLAG] != 0;
        have &= v[F_PV_HAVE] != 0;
    }
    loop_cost_t kc, kn;
    loop_cost(all, np, n, F_CPU_CLEAN, F_PV_CLEAN, &kc);
    loop_cost(all, np, n, F_CPU_NOISY, F_PV_NOISY, &kn);
    for (int i = 0; i < n; i++) {
        double m = 0;
        for (int r = 0; r < np; r++) {
            double x = allnoise[(size_t) r * (size_t) n + (size_t) i];
            m = x > m ? x : m;
        }
        sync += m;
    }
    double tc = sc / np, tn = sn / np, noise = 1e-6 * snoise / np; /* s */
    double amp = noise > 0 ? (tn - tc) / noise : NAN;
    double amp_last = noise > 0 ? (mn - mc) / noise : NAN;
    double sync_bound = noise > 0 ? 1e-6 * sync / noise : NAN;
    double level = tc > 0 ? noise / tc : NAN;
    double floor_mean, floor_last;
    dependency_floor(o->coll, c->root, np, n, allnoise, snoise / np, &floor_mean, &floor_last);

    if (!o->quiet) {
        printf(
            "# per rank: times in seconds; amp_r = (t_noisy - t_clean) / mean noise per "
            "rank\n");
        printf("# cpu_*_ms: process CPU time in the loop%s\n",
               have ? "; noisy loop: detached calls, bytes copied per call, progress "
                      "thread CPU ms (adapt2's MPI_T counters)"
                    : "");
        printf("# %4s %5s %10s %10s %10s %10s %7s %8s %12s %12s %11s %11s", "rank", "noisy", "t_clean", "t_noisy",
               "delta", "noise", "events", "amp_r", "coll_clean_us", "coll_noisy_us", "cpu_clean_ms", "cpu_noisy_ms");
        if (have) printf(" %9s %12s %9s", "detached", "copied_B", "pt_ms");
        printf("\n");
        for (int r = 0; r < np; r++) {
            const double *v = all + (size_t) r * NF;
            printf(
                "  %4d %5d %10.4f %10.4f %10.4f %10.4f %7.0f %8.2f %12.1f %12.1f %11.2f "
                "%11.2f",
                r, (int) v[F_NOISY_FLAG], v[F_CLEAN], v[F_NOISY], v[F_NOISY] - v[F_CLEAN], 1e-6 * v[F_NOISE],
                v[F_EVENTS], noise > 0 ? (v[F_NOISY] - v[F_CLEAN]) / noise : NAN, 1e6 * v[F_COLL_CLEAN] / n,
                1e6 * v[F_COLL_NOISY] / n, 1e3 * v[F_CPU_CLEAN], 1e3 * v[F_CPU_NOISY]);
            if (have)
                printf(" %9.0f %12.0f %9.2f", v[F_PV_NOISY + PV_DETACHED], v[F_PV_NOISY + PV_BYTES] / n,
                       1e-6 * v[F_PV_NOISY + PV_PT_CPU_NS]);
            printf("\n");
        }
    }
    printf(
        "RESULT collective=%s size=%zu np=%d root=%d type=%s iters=%d compute_us=%g "
        "compute=%s noise=%s seed=%llu noisy_ranks=%d t_clean_s=%.6f t_noisy_s=%.6f "
        "t_clean_max_s=%.6f t_noisy_max_s=%.6f noise_per_rank_s=%.6f noise_level=%.4f "
        "events_per_rank=%.2f coll_clean_us=%.2f coll_noisy_us=%.2f amplification=%.4f "
        "amp_last=%.4f sync_bound=%.4f floor=%.4f floor_last=%.4f validate=%s thread=%s "
        "cpu_clean_ms=%.3f cpu_noisy_ms=%.3f",
        o->coll->name, o->size, np, c->root, c->type->name, n, o->compute_us, o->spin_compute ? "spin" : "sleep", canon,
        o->seed, nnoisy, tc, tn, mc, mn, noise, level, sev / np, 1e6 * scc / np / n, 1e6 * scn / np / n, amp, amp_last,
        sync_bound, floor_mean, floor_last, o->validate ? (valid ? "ok" : "FAILED") : "off",
        thread_level_name(c->thread_level), kc.cpu_ms, kn.cpu_ms);
    if (have)
        printf(
            " copied_bytes_per_call_clean=%.1f copied_bytes_per_call_noisy=%.1f "
            "detached_frac_clean=%.4f detached_frac_noisy=%.4f detach_refused_clean=%.0f "
            "detach_refused_noisy=%.0f pt_cpu_clean_ms=%.3f pt_cpu_noisy_ms=%.3f "
            "pt_polls_clean=%.1f pt_polls_noisy=%.1f",
            kc.bytes_per_call, kn.bytes_per_call, kc.detached_frac, kn.detached_frac, kc.refused, kn.refused, kc.pt_ms,
            kn.pt_ms, kc.pt_polls, kn.pt_polls);
    printf("\n");
    char sz[32];
    printf(
        "%s %s np=%d: clean %.3f s, noisy %.3f s, noise %.3f s per rank (%.1f%% of the "
        "clean time, %.1f events, %d noisy ranks): amplification %.2f (fully "
        "synchronized: %.2f; the data's dependencies alone: %.2f; 1.0: each rank's noise costs only itself)\n",
        o->coll->name, size_name(o->size, sz, sizeof(sz)), np, tc, tn, noise, 100 * level, sev / np, nnoisy, amp,
        sync_bound, floor_mean);
    printf("%s %s np=%d cost: CPU per rank %.1f ms clean, %.1f ms noisy (thread level %s)", o->coll->name,
           size_name(o->size, sz, sizeof(sz)), np, kc.cpu_ms, kn.cpu_ms, thread_level_name(c->thread_level));
    if (have) {
        char bc[32], bn[32];
        printf(
            "; decoupled completion, clean / noisy: %.1f%% / %.1f%% of calls detached, "
            "%s / %s copied per call, %.0f / %.0f refused, progress thread %.2f / %.2f ms "
            "CPU per rank",
            100 * kc.detached_frac, 100 * kn.detached_frac, bytes_name(kc.bytes_per_call, bc, sizeof(bc)),
            bytes_name(kn.bytes_per_call, bn, sizeof(bn)), kc.refused, kn.refused, kc.pt_ms, kn.pt_ms);
    }
    printf("\n");
    fflush(stdout);
    free(all);
    free(allnoise);
}

static void print_header(const options_t *o, const ctx_t *c, const char *canon)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING], root[16] = "-";
    int len = 0;
    MPI_Get_library_version(lib, &len);
    for (int i = 0; i < len; i++)
        if (lib[i] == '\n' || lib[i] == '\r') {
            lib[i] = '\0';
            break;
        }
    if (o->coll->flow != NO_ROOT) snprintf(root, sizeof(root), "%d", c->root);
    printf(
        "# noise_bench collective=%s np=%d root=%s size=%zu type=%s iters=%d warmup=%d "
        "compute_us=%g compute=%s poll_us=%g noise=%s seed=%llu validate=%s thread=%s "
        "mpi_t_counters=%s\n",
        o->coll->name, c->nprocs, root, o->size, c->type->name, o->iters, o->warmup, o->compute_us,
        o->spin_compute ? "spin" : "sleep", o->poll_us, canon, o->seed,
        o->validate == 2 ? "every"
        : o->validate    ? "end"
                         : "off",
        thread_level_name(c->thread_level), pv.have ? "adapt2" : "none");
    printf("# library: %s\n", lib);
    if (o->thread_multiple && c->thread_level != MPI_THREAD_MULTIPLE)
        printf("# warning: -t asked for MPI_THREAD_MULTIPLE, the library provides %s\n",
               thread_level_name(c->thread_level));
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int rank, nprocs;
    options_t o;

    /* -t decides how MPI starts, so it is looked for before MPI_Init. */
    int provided = bench_mpi_init(&argc, &argv, option_given(argc, argv, OPTSTRING, 't'));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

    const char *err = parse_args(argc, argv, nprocs, &o); /* every rank parses the same argv */
    int stop = bench_stop_for_usage(rank, err, o.help, argv[0], usage);
    if (stop >= 0) return stop;

    ctx_t c;
    memset(&c, 0, sizeof(c));
    c.comm = MPI_COMM_WORLD;
    c.rank = rank;
    c.nprocs = nprocs;
    c.root = o.coll->flow == NO_ROOT ? -1 : o.root;
    c.type = o.type;
    c.dtype = o.type->mpi_type();
    c.count = o.size / o.type->size;
    c.thread_level = provided;
    double *per_iter = malloc(sizeof(double) * (size_t) o.iters);
    if (!per_iter || posix_memalign(&c.sbuf, 4096, o.size) || posix_memalign(&c.rbuf, 4096, o.size)) {
        fprintf(stderr, "rank %d: out of memory (size %zu)\n", rank, o.size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(c.sbuf, 0, o.size);
    memset(c.rbuf, 0, o.size);

    char canon[512];
    noise_spec_t off;
    noise_format(&o.noise, canon, sizeof(canon));
    noise_parse("none", &off, NULL, 0);
    pvars_init();
    if (0 == rank) print_header(&o, &c, canon);

    loop_result_t warm, clean, noisy;
    int bad = 0;
    if (o.warmup > 0) {
        run_loop(&o, &c, &off, o.warmup, 1, NULL, &warm);
        bad |= o.validate && verdict(&o, &c, 1, &warm, "warm-up");
    }
    run_loop(&o, &c, &off, o.iters, 2, NULL, &clean);
    bad |= o.validate && verdict(&o, &c, 2, &clean, "clean");
    run_loop(&o, &c, &o.noise, o.iters, 3, per_iter, &noisy);
    bad |= o.validate && verdict(&o, &c, 3, &noisy, "noisy");
    int noisy_rank = noise_rank_is_noisy(&o.noise, o.seed, rank, nprocs);
    report(&o, &c, &clean, &noisy, per_iter, noisy_rank, !bad, canon);

    free(per_iter);
    free(c.sbuf);
    free(c.rbuf);
    pvars_fini();
    MPI_Finalize();
    return bad ? 1 : 0;
}
