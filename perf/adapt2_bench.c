/*
 * adapt2_bench: an OSU-style latency benchmark for MPI collectives.
 *
 * Plain MPI only (no adapt2 headers): the component under test is chosen at
 * run time with mpirun's --mca flags (see perf/compare.py).
 *
 * Methodology (OSU micro-benchmarks): per iteration, time only the
 * collective (MPI_Wtime around it; for non-blocking collectives post + wait),
 * then an untimed MPI_Barrier.  Per size we report
 *   avg_us / min_us / max_us   the per-rank average over iterations, then
 *                              averaged / min / max over ranks (OSU columns);
 *   last_us                    the mean over iterations of the per-iteration
 *                              maximum over ranks (elementwise MPI_MAX of the
 *                              per-iteration times): how long until the LAST
 *                              rank holds the data;
 *   last_median_us             the median over iterations of those maxima
 *                              (robust to scheduler noise on oversubscribed
 *                              nodes);
 *   span_us / span_median_us   mean / median over iterations of (the latest
 *                              return from the collective on any rank) minus
 *                              (the root's call): the end-to-end time until
 *                              the last rank holds the data, including ranks
 *                              that enter late.  Needs one clock for all
 *                              ranks: CLOCK_MONOTONIC, so only when all ranks
 *                              share a node ("nan" otherwise).
 * "last" is a max of per-rank durations: a rank that enters the broadcast
 * after its data has arrived (eager messages) shows a short time, so at small
 * sizes "last" can be far below the end-to-end span.
 *
 * Collectives are described by a table (coll_table): adding reduce or
 * allreduce means writing one run function (and a prepare/check pair for
 * validation) and one table entry.
 */
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

#define SMALL_MSG_LIMIT   8192      /* OSU: LARGE_MESSAGE_SIZE */
#define DEFAULT_ITERS     1000
#define DEFAULT_WARMUP    100
#define DEFAULT_ITERS_L   100
#define DEFAULT_WARMUP_L  10
#define DEFAULT_MIN_SIZE  1
#define DEFAULT_MAX_SIZE  (1UL << 20)

/* ------------------------------------------------------------------------ */
/* datatypes and the validation pattern                                      */

/* Value of element j for (size, iteration), reduced modulo `mod` so that it
 * is exactly representable in every datatype we support. */
static inline uint64_t pattern_value(size_t j, size_t size, int iter, uint64_t mod)
{
    uint64_t v = (uint64_t)j * 2654435761u + (uint64_t)size * 40503u +
                 (uint64_t)iter * 977u + 17u;
    v ^= v >> 29;
    return v % mod;
}

/* fill: buf[j] = pattern (+ poison) mod m;  check: first j with buf[j] !=
 * pattern, or -1.  `poison` = 1 gives a value that differs from the
 * expected one at every element (used for receive buffers before the
 * collective, so stale data cannot pass the check). */
#define DEFINE_TYPE_FUNCS(NAME, CTYPE, MOD, FMT, CAST)                          \
    static void fill_##NAME(void *b, size_t n, size_t size, int iter, int poison) \
    {                                                                          \
        CTYPE *p = (CTYPE *)b;                                                 \
        for (size_t j = 0; j < n; j++)                                         \
            p[j] = (CTYPE)((pattern_value(j, size, iter, (MOD)) + (uint64_t)poison) % (MOD)); \
    }                                                                          \
    static long check_##NAME(const void *b, size_t n, size_t size, int iter,   \
                             char *what, size_t what_len)                      \
    {                                                                          \
        const CTYPE *p = (const CTYPE *)b;                                     \
        for (size_t j = 0; j < n; j++) {                                       \
            CTYPE e = (CTYPE)pattern_value(j, size, iter, (MOD));              \
            if (p[j] != e) {                                                   \
                snprintf(what, what_len, "expected " FMT ", got " FMT,         \
                         (CAST)e, (CAST)p[j]);                                 \
                return (long)j;                                                \
            }                                                                  \
        }                                                                      \
        return -1;                                                             \
    }

DEFINE_TYPE_FUNCS(char, char, 127u, "%d", int)                      /* 0..126 */
DEFINE_TYPE_FUNCS(int, int, 2147483647u, "%d", int)                 /* 0..2^31-2 */
DEFINE_TYPE_FUNCS(float, float, (1u << 24), "%.1f", double)         /* exact ints */
DEFINE_TYPE_FUNCS(double, double, (UINT64_C(1) << 53), "%.1f", double)

typedef struct {
    const char *name;
    MPI_Datatype (*mpi_type)(void); /* MPI_* handles are not constants in every MPI */
    size_t size;
    void (*fill)(void *, size_t, size_t, int, int);
    long (*check)(const void *, size_t, size_t, int, char *, size_t);
} type_desc_t;

static MPI_Datatype t_char(void) { return MPI_CHAR; }
static MPI_Datatype t_int(void) { return MPI_INT; }
static MPI_Datatype t_float(void) { return MPI_FLOAT; }
static MPI_Datatype t_double(void) { return MPI_DOUBLE; }

static const type_desc_t type_table[] = {
    {"char", t_char, sizeof(char), fill_char, check_char},
    {"int", t_int, sizeof(int), fill_int, check_int},
    {"float", t_float, sizeof(float), fill_float, check_float},
    {"double", t_double, sizeof(double), fill_double, check_double},
};
#define NTYPES (sizeof(type_table) / sizeof(type_table[0]))

/* ------------------------------------------------------------------------ */
/* collectives                                                               */

typedef struct {
    MPI_Comm comm;
    int rank, nprocs, root;
    const type_desc_t *type;
    MPI_Datatype dtype;
    void *sbuf;  /* send / in-place buffer (bcast: the buffer) */
    void *rbuf;  /* receive buffer (unused by bcast) */
} bench_ctx_t;

typedef struct coll_desc {
    const char *name;
    const char *help;
    int blocking;    /* informational: 0 = post + MPI_Wait timed together */
    /* One collective on `count` elements (timed). */
    int (*run)(bench_ctx_t *c, size_t count);
    /* Validation, untimed: set the buffers up for (size, iter) ... */
    void (*prepare)(bench_ctx_t *c, size_t count, size_t size, int iter);
    /* ... and afterwards return the first wrong index on this rank, or -1. */
    long (*check)(bench_ctx_t *c, size_t count, size_t size, int iter,
                  char *what, size_t what_len);
} coll_desc_t;

static int run_bcast(bench_ctx_t *c, size_t count)
{
    return MPI_Bcast(c->sbuf, (int)count, c->dtype, c->root, c->comm);
}

static int run_ibcast(bench_ctx_t *c, size_t count)
{
    MPI_Request req;
    int rc = MPI_Ibcast(c->sbuf, (int)count, c->dtype, c->root, c->comm, &req);
    if (MPI_SUCCESS != rc) return rc;
    return MPI_Wait(&req, MPI_STATUS_IGNORE);
}

static void prepare_bcast(bench_ctx_t *c, size_t count, size_t size, int iter)
{
    c->type->fill(c->sbuf, count, size, iter, c->rank == c->root ? 0 : 1);
}

static long check_bcast(bench_ctx_t *c, size_t count, size_t size, int iter,
                        char *what, size_t what_len)
{
    return c->type->check(c->sbuf, count, size, iter, what, what_len);
}

/* To add reduce/allreduce: run_reduce (MPI_Reduce sbuf -> rbuf), a prepare
 * filling sbuf with a per-rank pattern, a check comparing rbuf on the root
 * with the reduction of the patterns, and an entry here. */
static const coll_desc_t coll_table[] = {
    {"bcast", "MPI_Bcast", 1, run_bcast, prepare_bcast, check_bcast},
    {"ibcast", "MPI_Ibcast + MPI_Wait", 0, run_ibcast, prepare_bcast, check_bcast},
};
#define NCOLLS (sizeof(coll_table) / sizeof(coll_table[0]))

/* ------------------------------------------------------------------------ */
/* options                                                                   */

typedef struct {
    const coll_desc_t *coll;
    const type_desc_t *type;
    size_t min_size, max_size;
    int iters_small, iters_large;   /* -i N or -i SMALL:LARGE */
    int warmup_small, warmup_large; /* -x N or -x SMALL:LARGE */
    int full;
    int validate;
    int root;
    int help;
} options_t;

static void usage(FILE *f, const char *prog)
{
    fprintf(f,
        "Usage: %s [options]\n"
        "OSU-style latency benchmark for MPI collectives (times in microseconds).\n"
        "  -k NAME        collective:", prog);
    for (size_t i = 0; i < NCOLLS; i++)
        fprintf(f, " %s%s", coll_table[i].name, i ? "" : " (default)");
    fprintf(f, "\n"
        "  -m [MIN:]MAX   message sizes in bytes, powers of two from MIN to MAX\n"
        "                 (K, M, G suffixes allowed; default %d:%lu)\n"
        "  -i N|S:L       timed iterations (default %d up to %d bytes, %d above;\n"
        "                 N sets both, S:L sets small and large separately)\n"
        "  -x N|S:L       warm-up iterations (default %d up to %d bytes, %d above)\n"
        "  -T TYPE        datatype: char (default), int, float, double; a size is\n"
        "                 skipped if smaller than one element, count = size/extent\n"
        "  -r ROOT        root rank (default 0)\n"
        "  -c             validate: the root fills a pattern that depends on size and\n"
        "                 iteration, every rank checks every element after every\n"
        "                 iteration (untimed); exit status 1 on the first mismatch\n"
        "  -f             full statistics: extra columns last_min_us last_p90_us\n"
        "  -h             this help\n"
        "Note: as in OSU, -c is validation; the collective is chosen with -k.\n"
        "Output: '#' comment lines (the one starting '# size ' names the columns),\n"
        "then one line per size: size avg_us min_us max_us last_us last_median_us\n"
        "iters span_us span_median_us [last_min_us last_p90_us] (microseconds;\n"
        "see the comment at the top of the source for their meaning).\n",
        DEFAULT_MIN_SIZE, DEFAULT_MAX_SIZE,
        DEFAULT_ITERS, SMALL_MSG_LIMIT, DEFAULT_ITERS_L,
        DEFAULT_WARMUP, SMALL_MSG_LIMIT, DEFAULT_WARMUP_L);
}

/* Parses a size with an optional K/M/G (binary) suffix.  0 on error. */
static int parse_size(const char *s, size_t *out)
{
    char *end;
    if (!*s || !isdigit((unsigned char)*s)) return 0;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno) return 0;
    unsigned long long mult = 1;
    if (*end) {
        switch (toupper((unsigned char)*end)) {
        case 'K': mult = 1ULL << 10; break;
        case 'M': mult = 1ULL << 20; break;
        case 'G': mult = 1ULL << 30; break;
        default: return 0;
        }
        end++;
        if (*end == 'B' || *end == 'b') end++; /* 64KB, 1MiB-ish leniency */
        if (*end) return 0;
    }
    if (v > ULLONG_MAX / mult) return 0;
    *out = (size_t)(v * mult);
    return 1;
}

static int parse_int(const char *s, int min, int *out)
{
    char *end;
    if (!*s) return 0;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < min || v > INT_MAX) return 0;
    *out = (int)v;
    return 1;
}

/* "N" -> (N, N);  "S:L" -> (S, L). */
static int parse_pair(const char *s, int min, int *small, int *large)
{
    const char *colon = strchr(s, ':');
    if (!colon) {
        if (!parse_int(s, min, small)) return 0;
        *large = *small;
        return 1;
    }
    char buf[64];
    size_t n = (size_t)(colon - s);
    if (n >= sizeof(buf)) return 0;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return parse_int(buf, min, small) && parse_int(colon + 1, min, large);
}

/* Returns NULL on success, or an error message. */
static const char *parse_args(int argc, char **argv, int nprocs, options_t *o)
{
    static char msg[256];
    int opt;
    memset(o, 0, sizeof(*o));
    o->coll = &coll_table[0];
    o->type = &type_table[0];
    o->min_size = DEFAULT_MIN_SIZE;
    o->max_size = DEFAULT_MAX_SIZE;
    o->iters_small = DEFAULT_ITERS;
    o->iters_large = DEFAULT_ITERS_L;
    o->warmup_small = DEFAULT_WARMUP;
    o->warmup_large = DEFAULT_WARMUP_L;

    opterr = 0; /* we print our own messages, on rank 0 only */
    while ((opt = getopt(argc, argv, ":k:m:i:x:T:r:cfh")) != -1) {
        switch (opt) {
        case 'k': {
            o->coll = NULL;
            for (size_t i = 0; i < NCOLLS; i++)
                if (!strcmp(optarg, coll_table[i].name)) o->coll = &coll_table[i];
            if (!o->coll) {
                snprintf(msg, sizeof(msg), "unknown collective '%s'", optarg);
                return msg;
            }
            break;
        }
        case 'm': {
            const char *colon = strchr(optarg, ':');
            if (colon) {
                char buf[64];
                size_t n = (size_t)(colon - optarg);
                if (n >= sizeof(buf)) return "bad message size";
                memcpy(buf, optarg, n);
                buf[n] = '\0';
                if (!parse_size(buf, &o->min_size) || !parse_size(colon + 1, &o->max_size)) {
                    snprintf(msg, sizeof(msg), "bad message size range '%s'", optarg);
                    return msg;
                }
            } else if (!parse_size(optarg, &o->max_size)) {
                snprintf(msg, sizeof(msg), "bad message size '%s'", optarg);
                return msg;
            }
            break;
        }
        case 'i':
            if (!parse_pair(optarg, 1, &o->iters_small, &o->iters_large)) {
                snprintf(msg, sizeof(msg), "bad iteration count '%s'", optarg);
                return msg;
            }
            break;
        case 'x':
            if (!parse_pair(optarg, 0, &o->warmup_small, &o->warmup_large)) {
                snprintf(msg, sizeof(msg), "bad warm-up count '%s'", optarg);
                return msg;
            }
            break;
        case 'T': {
            o->type = NULL;
            for (size_t i = 0; i < NTYPES; i++)
                if (!strcmp(optarg, type_table[i].name)) o->type = &type_table[i];
            if (!o->type) {
                snprintf(msg, sizeof(msg), "unknown datatype '%s'", optarg);
                return msg;
            }
            break;
        }
        case 'r':
            if (!parse_int(optarg, 0, &o->root)) {
                snprintf(msg, sizeof(msg), "bad root '%s'", optarg);
                return msg;
            }
            break;
        case 'c': o->validate = 1; break;
        case 'f': o->full = 1; break;
        case 'h': o->help = 1; return NULL;
        case ':':
            snprintf(msg, sizeof(msg), "option -%c needs an argument", optopt);
            return msg;
        default:
            snprintf(msg, sizeof(msg), "unknown option -%c", optopt);
            return msg;
        }
    }
    if (optind < argc) {
        snprintf(msg, sizeof(msg), "unexpected argument '%s'", argv[optind]);
        return msg;
    }
    if (o->min_size < 1 || o->max_size < 1) return "message sizes must be at least 1 byte";
    if (o->min_size > o->max_size) return "minimum message size is larger than the maximum";
    if (o->max_size > (size_t)INT_MAX) return "maximum message size exceeds INT_MAX bytes";
    if (o->root >= nprocs) {
        snprintf(msg, sizeof(msg), "root %d is not a rank (np=%d)", o->root, nprocs);
        return msg;
    }
    return NULL;
}

/* ------------------------------------------------------------------------ */

/* A clock shared by all processes of a node (MPI_Wtime in Open MPI 4.1 is
 * relative to a per-process origin, so it cannot be compared across ranks). */
static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* q-quantile of a sorted array (nearest rank, q in [0,1]); median = mean of
 * the two middle elements for even n. */
static double quantile_sorted(const double *v, int n, double q)
{
    if (n <= 0) return 0.0;
    if (q == 0.5) return (n % 2) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    int k = (int)(q * n + 0.999999) - 1;
    if (k < 0) k = 0;
    if (k >= n) k = n - 1;
    return v[k];
}

int main(int argc, char **argv)
{
    int rank, nprocs;
    options_t o;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

    /* Every rank parses the same argv, so all reach the same verdict. */
    const char *err = parse_args(argc, argv, nprocs, &o);
    if (err || o.help) {
        if (0 == rank) {
            if (err) fprintf(stderr, "%s: %s\n", argv[0], err);
            usage(err ? stderr : stdout, argv[0]);
        }
        MPI_Finalize();
        return err ? 2 : 0;
    }

    bench_ctx_t c;
    memset(&c, 0, sizeof(c));
    c.comm = MPI_COMM_WORLD;
    c.rank = rank;
    c.nprocs = nprocs;
    c.root = o.root;
    c.type = o.type;
    c.dtype = o.type->mpi_type();

    int max_iters = o.iters_small > o.iters_large ? o.iters_small : o.iters_large;
    double *times = malloc(sizeof(double) * (size_t)max_iters);
    double *tmax = malloc(sizeof(double) * (size_t)max_iters);
    double *t_end = malloc(sizeof(double) * (size_t)max_iters);   /* CLOCK_MONOTONIC */
    double *t_start = malloc(sizeof(double) * (size_t)max_iters); /* root's, or -huge */
    double *span = malloc(sizeof(double) * (size_t)max_iters);
    double *span_start = malloc(sizeof(double) * (size_t)max_iters);
    void *sbuf = NULL, *rbuf = NULL;
    if (!times || !tmax || !t_end || !t_start || !span || !span_start || posix_memalign(&sbuf, 4096, o.max_size) ||
        posix_memalign(&rbuf, 4096, o.max_size)) {
        fprintf(stderr, "rank %d: out of memory (max size %zu)\n", rank, o.max_size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(sbuf, 0, o.max_size); /* touch the pages before timing */
    memset(rbuf, 0, o.max_size);
    c.sbuf = sbuf;
    c.rbuf = rbuf;

    /* span_us needs all ranks on one node (one CLOCK_MONOTONIC). */
    int node_size = 0, one_node;
    MPI_Comm node_comm;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_comm);
    MPI_Comm_size(node_comm, &node_size);
    MPI_Comm_free(&node_comm);
    one_node = node_size == nprocs;

    if (0 == rank) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        MPI_Get_library_version(lib, &len);
        for (int i = 0; i < len; i++)
            if (lib[i] == '\n' || lib[i] == '\r') { lib[i] = '\0'; break; }
        printf("# adapt2_bench collective=%s np=%d root=%d type=%s validate=%d "
               "sizes=%zu:%zu iters=%d:%d warmup=%d:%d small_limit=%d\n",
               o.coll->name, nprocs, o.root, o.type->name, o.validate,
               o.min_size, o.max_size, o.iters_small, o.iters_large,
               o.warmup_small, o.warmup_large, SMALL_MSG_LIMIT);
        printf("# library: %s\n", lib);
        printf("# times in microseconds; avg/min/max: per-rank mean over iterations, "
               "then mean/min/max over ranks; last: per-iteration max over ranks, "
               "mean (last_us) and median (last_median_us) over iterations; span: latest "
               "return on any rank minus the root's call, mean and median over iterations%s\n",
               one_node ? "" : " (nan: ranks on several nodes, no common clock)");
        printf("# %-10s %12s %12s %12s %12s %14s %8s %12s %14s", "size", "avg_us", "min_us",
               "max_us", "last_us", "last_median_us", "iters", "span_us", "span_median_us");
        if (o.full) printf(" %12s %12s", "last_min_us", "last_p90_us");
        printf("\n");
        fflush(stdout);
    }

    int status = 0;
    for (size_t size = o.min_size; size <= o.max_size; size *= 2) {
        size_t count = size / o.type->size;
        if (0 == count) {
            if (0 == rank)
                printf("# skipped size %zu: smaller than one %s\n", size, o.type->name);
            if (size > o.max_size / 2) break;
            continue;
        }
        int iters = size <= SMALL_MSG_LIMIT ? o.iters_small : o.iters_large;
        int warmup = size <= SMALL_MSG_LIMIT ? o.warmup_small : o.warmup_large;
        double sum = 0.0;

        MPI_Barrier(c.comm);
        for (int it = -warmup; it < iters; it++) {
            if (o.validate) o.coll->prepare(&c, count, size, it);
            double m0 = mono_now();
            double t0 = MPI_Wtime();
            int rc = o.coll->run(&c, count);
            double t = MPI_Wtime() - t0;
            double m1 = mono_now();
            if (MPI_SUCCESS != rc) {
                fprintf(stderr, "rank %d: %s of %zu bytes failed (error %d)\n", rank,
                        o.coll->name, size, rc);
                MPI_Abort(c.comm, 1);
            }
            if (o.validate) {
                char what[128] = "";
                long bad = o.coll->check(&c, count, size, it, what, sizeof(what));
                if (bad >= 0)
                    fprintf(stderr,
                            "VALIDATION FAILED: rank %d %s size %zu type %s root %d %s %d: "
                            "first bad element %ld: %s\n",
                            rank, o.coll->name, size, o.type->name, o.root,
                            it < 0 ? "warm-up iteration" : "iteration",
                            it < 0 ? it + warmup : it, bad, what);
                int local = bad >= 0, any = 0;
                MPI_Allreduce(&local, &any, 1, MPI_INT, MPI_MAX, c.comm);
                if (any) { status = 1; break; }
            }
            if (it >= 0) {
                times[it] = t;
                t_end[it] = m1;
                t_start[it] = rank == c.root ? m0 : -1e300;
                sum += t;
            }
            MPI_Barrier(c.comm);
        }
        if (status) break;

        double avg = sum / iters, amin, amax, asum;
        MPI_Reduce(&avg, &amin, 1, MPI_DOUBLE, MPI_MIN, 0, c.comm);
        MPI_Reduce(&avg, &amax, 1, MPI_DOUBLE, MPI_MAX, 0, c.comm);
        MPI_Reduce(&avg, &asum, 1, MPI_DOUBLE, MPI_SUM, 0, c.comm);
        MPI_Reduce(times, tmax, iters, MPI_DOUBLE, MPI_MAX, 0, c.comm);
        MPI_Reduce(t_end, span, iters, MPI_DOUBLE, MPI_MAX, 0, c.comm);
        MPI_Reduce(t_start, span_start, iters, MPI_DOUBLE, MPI_MAX, 0, c.comm);
        if (0 == rank) {
            double ssum = 0.0;
            for (int i = 0; i < iters; i++) {
                span[i] -= span_start[i];
                ssum += span[i];
            }
            qsort(span, (size_t)iters, sizeof(double), cmp_double);
            double span_mean = one_node ? 1e6 * ssum / iters : NAN;
            double span_med = one_node ? 1e6 * quantile_sorted(span, iters, 0.5) : NAN;
            double lsum = 0.0;
            for (int i = 0; i < iters; i++) lsum += tmax[i];
            qsort(tmax, (size_t)iters, sizeof(double), cmp_double);
            printf("  %-10zu %12.2f %12.2f %12.2f %12.2f %14.2f %8d", size,
                   1e6 * asum / nprocs, 1e6 * amin, 1e6 * amax, 1e6 * lsum / iters,
                   1e6 * quantile_sorted(tmax, iters, 0.5), iters);
            printf(" %12.2f %14.2f", span_mean, span_med);
            if (o.full)
                printf(" %12.2f %12.2f", 1e6 * tmax[0], 1e6 * quantile_sorted(tmax, iters, 0.9));
            printf("\n");
            fflush(stdout);
        }
        if (size > o.max_size / 2) break; /* no overflow on the doubling */
    }

    free(times);
    free(tmax);
    free(t_end);
    free(t_start);
    free(span);
    free(span_start);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return status;
}
