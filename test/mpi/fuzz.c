/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
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
 * MPI_LONG_INT and MPI_SHORT_INT (outside their typemaps, checked by
 * default). --keep-going goes on after mismatches (the exit status still
 * fails). The code: fuzz_case.c generates cases, fuzz_check.c checks them,
 * fuzz_types.c makes datatypes, fuzz_ops.c values and reductions.
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

#include "fuzz_case.h"
#include "mpi_check.h"

static const char *coll_names[] = {"bcast", "reduce", "allreduce", "allgather", "reduce_scatter_block"};

struct options opt = {1, 200, -1, 1L << 20, 4L << 20, 0, 60, 0, 0, 2};
int wrank, wsize;
char repro_prefix[4096];
char *pins[MAX_PINS];
int npins;
unsigned skip_calls;
int allow_pair_padding; /* --allow-pair-padding: pairs' padding may change */
struct stats stats;

/* What the signal handlers write (formatted before each case), and where
 * this rank was: per call, '.' not started, 'r' running (blocking call) or
 * posted, 'd' done; for the reference run with algorithm=previous and for
 * adapt2's run. */
static char crash_text[40000];
static volatile size_t crash_len;
static char state_line[256];
static int state_prev, state_adapt2; /* offsets of the two call lists in state_line */

static void on_signal(int sig)
{
    ssize_t w = write(2, crash_text, crash_len);
    w = write(2, state_line, strlen(state_line));
    (void) w;
    _exit(sig == SIGALRM ? 3 : 128 + sig);
}

static void set_state(int list, int call, char s)
{
    state_line[list + call] = s;
}
#define STATE_PREV state_prev
#define STATE_ADAPT2 state_adapt2

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
    case C_ALLGATHER:
        return nonblocking ? MPI_Iallgather(send, c->count, t, recv, c->count, t, comm, &c->req)
                           : MPI_Allgather(send, c->count, t, recv, c->count, t, comm);
    case C_RSB:
        return nonblocking ? MPI_Ireduce_scatter_block(send, recv, c->count, t, op, comm, &c->req)
                           : MPI_Reduce_scatter_block(send, recv, c->count, t, op, comm);
    default:
        return nonblocking ? MPI_Iallreduce(send, recv, c->count, t, op, comm, &c->req)
                           : MPI_Allreduce(send, recv, c->count, t, op, comm);
    }
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
                            "a peer aborted)\n",
                            wrank, k->index, (unsigned long long) opt.seed, opt.case_timeout);
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
        fprintf(stderr,
                "usage: fuzz [--seed S] [--cases N] [--case K] [--time-budget SECONDS] [--max-count N]\n"
                "            [--max-bytes B] [--case-timeout SECONDS] [--depth D] [--set PARAM=VALUE]...\n"
                "            [--skip-calls LIST] [--allow-pair-padding] [--keep-going] [-v]\n");
    MPI_Finalize();
    exit(2);
}

static void parse(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-v"))
            opt.verbose = 1;
        else if (!strcmp(a, "--keep-going"))
            opt.keep_going = 1;
        else if (!strcmp(a, "--allow-pair-padding"))
            allow_pair_padding = 1;
        else if (!v)
            usage();
        else if (!strcmp(a, "--seed"))
            opt.seed = strtoull(v, NULL, 0), ++i;
        else if (!strcmp(a, "--cases"))
            opt.cases = atol(v), ++i;
        else if (!strcmp(a, "--case"))
            opt.only_case = atol(v), ++i;
        else if (!strcmp(a, "--time-budget"))
            opt.time_budget = atof(v), ++i;
        else if (!strcmp(a, "--max-count"))
            opt.max_count = atol(v), ++i;
        else if (!strcmp(a, "--max-bytes"))
            opt.max_bytes = atol(v), ++i;
        else if (!strcmp(a, "--case-timeout"))
            opt.case_timeout = atoi(v), ++i;
        else if (!strcmp(a, "--depth"))
            opt.depth = atoi(v), ++i;
        else if (!strcmp(a, "--set") && strchr(v, '=') && npins < MAX_PINS)
            pins[npins++] = argv[++i];
        else if (!strcmp(a, "--skip-calls")) {
            for (char *s = argv[++i]; *s; ++s)
                if (*s >= '0' && *s < '0' + MAX_CALLS) skip_calls |= 1u << (*s - '0');
        } else
            usage();
    }
    if (opt.max_count < 0 || opt.max_count > INT_MAX || opt.max_bytes < 1 || opt.depth < 0 || opt.depth > 3) usage();
}

/* The mpirun command that reruns one case: the MCA settings this process
 * got (mpirun passes --mca as OMPI_MCA_* variables) and the options that
 * shape the cases. */
static void build_repro(const char *argv0)
{
    extern char **environ;
    static const char *prefixes[] = {
        "coll", "pml", "btl", "op", "mtl", "osc", "mpi_param_check", "mpi_yield_when_idle", "mca_base_component_path"};
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
              realpath(argv0, path) ? path : argv0, (unsigned long long) opt.seed, opt.max_count, opt.max_bytes,
              opt.depth);
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
    static const char *names[] = {"coll_adapt2_bcast_calls", "coll_adapt2_reduce_calls", "coll_adapt2_allreduce_calls",
                                  "coll_adapt2_allgather_calls", "coll_adapt2_reduce_scatter_block_calls"};
    for (int c = 0; c < NCOLL; ++c) {
        long long got = adapt2_counter(names[c]);
        if (opt.verbose)
            printf("fuzz: [rank %d] %s %lld, expected at least %ld\n", wrank, names[c], got,
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
    adapt2_counter("coll_adapt2_allgather_calls");
    adapt2_counter("coll_adapt2_reduce_scatter_block_calls");
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
        printf(
            "fuzz: %ld cases (bcast %ld, reduce %ld, allreduce %ld, allgather %ld, reduce_scatter_block %ld; "
            "nonblocking %ld), %ld mismatches, seed %llu\n",
            stats.cases, stats.calls[0], stats.calls[1], stats.calls[2], stats.calls[3], stats.calls[4],
            stats.nonblocking, bad_cases, (unsigned long long) opt.seed);
        if (opt.verbose) printf("fuzz: %ld results compared with algorithm=previous\n", stats.prev_compared);
    }
    pool_free();
    ops_finalize();
    MPI_Finalize();
    return bad_cases ? 1 : 0;
}
