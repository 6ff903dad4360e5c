/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
#include "mpi_check.h"

#include <getopt.h>
#include <pthread.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_ready;
static MPI_T_pvar_session session;

/* MPI_T is initialised at the program's own thread level: Open MPI 4.1's
 * MPI_T_init_thread overwrites the MPI library's thread level with its own. */
static void t_init(void)
{
    int level, provided;
    if (t_ready) return;
    MPI_Query_thread(&level);
    if (MPI_T_init_thread(level, &provided) != MPI_SUCCESS) fail("MPI_T_init_thread");
    if (MPI_T_pvar_session_create(&session) != MPI_SUCCESS) fail("MPI_T_pvar_session_create");
    t_ready = 1;
}

/* A counter handle reports what accumulated since it was allocated, so each
 * handle is allocated once and kept. */
#define MAX_COUNTERS 16
static struct {
    const char *name;
    MPI_T_pvar_handle handle;
} counters[MAX_COUNTERS];

long long adapt2_counter(const char *name)
{
    int index, count, i;
    unsigned long long value = 0;
    t_init();
    for (i = 0; i < MAX_COUNTERS && counters[i].name && strcmp(counters[i].name, name); ++i) {
    }
    if (i == MAX_COUNTERS) fail("too many counters");
    if (!counters[i].name) {
        if (MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &index) != MPI_SUCCESS) return -1;
        if (MPI_T_pvar_handle_alloc(session, index, NULL, &counters[i].handle, &count) != MPI_SUCCESS)
            fail("pvar_handle_alloc %s", name);
        counters[i].name = name;
    }
    if (MPI_T_pvar_read(session, counters[i].handle, &value) != MPI_SUCCESS) fail("pvar_read %s", name);
    return (long long) value;
}

static void cvar_write(const char *name, const void *value)
{
    int index, count;
    MPI_T_cvar_handle handle;
    t_init();
    if (MPI_T_cvar_get_index(name, &index) != MPI_SUCCESS) fail("no control variable %s", name);
    if (MPI_T_cvar_handle_alloc(index, NULL, &handle, &count) != MPI_SUCCESS) fail("cvar_handle_alloc %s", name);
    if (MPI_T_cvar_write(handle, value) != MPI_SUCCESS) fail("cvar_write %s", name);
    MPI_T_cvar_handle_free(&handle);
}

/* Index, type and enumeration (MPI_T_ENUM_NULL if none) of a control
 * variable; -1 if there is no such variable. */
static int cvar_info(const char *name, MPI_Datatype *type, MPI_T_enum *enumtype)
{
    char desc[256];
    int index, verbosity, bind, scope, desclen = sizeof desc;
    t_init();
    if (MPI_T_cvar_get_index(name, &index) != MPI_SUCCESS) return -1;
    MPI_T_cvar_get_info(index, NULL, NULL, &verbosity, type, enumtype, desc, &desclen, &bind, &scope);
    return index;
}

long adapt2_get_long(const char *name)
{
    int count, bytes = 0;
    MPI_Datatype type;
    MPI_T_enum enumtype;
    MPI_T_cvar_handle handle;
    const int index = cvar_info(name, &type, &enumtype);
    if (index < 0 || MPI_T_cvar_handle_alloc(index, NULL, &handle, &count) != MPI_SUCCESS) return -1;
    union {
        long l;
        int i;
        unsigned char b;
    } v = {0};
    MPI_Type_size(type, &bytes);
    MPI_T_cvar_read(handle, &v);
    MPI_T_cvar_handle_free(&handle);
    return bytes == 1 ? (long) v.b : bytes == (int) sizeof(int) ? (long) v.i : v.l; /* bool, int or enum, long */
}

/* The value of `item` in an enum control variable's enumeration (its names
 * are params.def's), or abort: a test that asks for a name adapt2 lacks is wrong. */
static int enum_value(const char *name, MPI_T_enum enumtype, const char *item)
{
    int items, namelen = 0;
    char ename[64];
    namelen = sizeof ename;
    MPI_T_enum_get_info(enumtype, &items, ename, &namelen);
    for (int i = 0; i < items; ++i) {
        int value, len;
        char text[64];
        len = sizeof text;
        if (MPI_T_enum_get_item(enumtype, i, &value, text, &len) == MPI_SUCCESS && 0 == strcmp(text, item))
            return value;
    }
    fail("%s has no value named '%s'", name, item);
    return -1;
}

int adapt2_enum_is(const char *name, const char *item)
{
    MPI_Datatype type;
    MPI_T_enum enumtype;
    if (cvar_info(name, &type, &enumtype) < 0) fail("no control variable %s", name);
    if (enumtype == MPI_T_ENUM_NULL) fail("%s is not an enumeration", name);
    return adapt2_get_long(name) == enum_value(name, enumtype, item);
}

void adapt2_set(const char *name, const char *text)
{
    MPI_Datatype type;
    MPI_T_enum enumtype;
    if (cvar_info(name, &type, &enumtype) < 0) fail("no control variable %s", name);
    if (type == MPI_CHAR) {
        cvar_write(name, text);
    } else if (type == MPI_INT) {
        int v = enumtype != MPI_T_ENUM_NULL && (text[0] < '0' || text[0] > '9') ? enum_value(name, enumtype, text)
                                                                                : atoi(text);
        cvar_write(name, &v);
    } else {
        long v = atol(text);
        cvar_write(name, &v);
    }
}

void adapt2_set_string(const char *name, const char *value)
{
    adapt2_set(name, value);
}
void adapt2_set_long(const char *name, long value)
{
    cvar_write(name, &value);
}
void adapt2_set_int(const char *name, int value)
{
    cvar_write(name, &value);
}

void fail(const char *fmt, ...)
{
    int rank = -1;
    va_list ap;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "FAIL [rank %d]: ", rank);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

long long total_errors(long long local, MPI_Comm comm)
{
    long long total = 0;
    MPI_Allreduce(&local, &total, 1, MPI_LONG_LONG, MPI_SUM, comm);
    return total;
}

void print_per_rank_ranges(const char *program, int n, const char *const *what, const long long *local, MPI_Comm comm)
{
    enum { kMost = 4 };
    long long both[2 * kMost] = {0}, extremes[2 * kMost] = {0}; /* per value: the most, minus the fewest */
    int rank;
    if (n < 1 || n > kMost) {
        fprintf(stderr, "%s: print_per_rank_ranges takes 1-%d counts, not %d\n", program, kMost, n);
        MPI_Abort(comm, 2);
    }
    for (int i = 0; i < n; ++i) {
        both[2 * i] = local[i];
        both[2 * i + 1] = -local[i];
    }
    MPI_Allreduce(both, extremes, 2 * n, MPI_LONG_LONG, MPI_MAX, comm); /* one collective for all */
    MPI_Comm_rank(comm, &rank);
    for (int i = 0; i < n && rank == 0; ++i) {
        printf("%s: %s per rank: %lld-%lld\n", program, what[i], -extremes[2 * i + 1], extremes[2 * i]);
    }
}

void print_per_rank_range(const char *program, const char *what, long long local, MPI_Comm comm)
{
    print_per_rank_ranges(program, 1, &what, &local, comm);
}

static thread_worker_t *worker_at(void *workers, int t, size_t size)
{
    return (thread_worker_t *) ((char *) workers + (size_t) t * size);
}

void threads_init(void *workers, int count, size_t size)
{
    for (int t = 0; t < count; ++t) {
        MPI_Comm_dup(MPI_COMM_WORLD, &worker_at(workers, t, size)->comm);
        worker_at(workers, t, size)->id = t;
    }
}

void threads_run(void *workers, int count, size_t size, void *(*fn)(void *) )
{
    pthread_t *threads = calloc((size_t) count, sizeof *threads);
    if (!threads) fail("no memory for %d threads", count);
    for (int t = 0; t < count; ++t)
        if (pthread_create(&threads[t], NULL, fn, worker_at(workers, t, size))) fail("pthread_create");
    for (int t = 0; t < count; ++t) pthread_join(threads[t], NULL);
    free(threads);
}

void threads_free(void *workers, int count, size_t size)
{
    for (int t = 0; t < count; ++t) MPI_Comm_free(&worker_at(workers, t, size)->comm);
}

void init_thread_multiple(int *argc, char ***argv)
{
    int provided;
    MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) fail("MPI_THREAD_MULTIPLE not provided");
}

void mpi_start(int *argc, char ***argv, int thread_multiple, int *rank, int *size)
{
    if (thread_multiple)
        init_thread_multiple(argc, argv);
    else
        MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
}

int int_arg(int argc, char **argv, int i, int deflt)
{
    return argc > i ? atoi(argv[i]) : deflt;
}

void reduce_call(const void *in, void *out, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm, int all,
                 int blocking)
{
    MPI_Request req;
    if (all) {
        if (blocking)
            MPI_Allreduce(in, out, count, type, op, comm);
        else
            MPI_Iallreduce(in, out, count, type, op, comm, &req);
    } else {
        if (blocking)
            MPI_Reduce(in, out, count, type, op, root, comm);
        else
            MPI_Ireduce(in, out, count, type, op, root, comm, &req);
    }
    if (!blocking) MPI_Wait(&req, MPI_STATUS_IGNORE);
}

int split_list(char *arg, char **out, int max)
{
    int n = 0;
    char *save;
    for (char *tok = strtok_r(arg, ",", &save); tok && n < max; tok = strtok_r(NULL, ",", &save)) out[n++] = tok;
    return n;
}

int parse_longs(char *arg, long *out, int max)
{
    int n = 0;
    char *save;
    for (char *tok = strtok_r(arg, ",", &save); tok && n < max; tok = strtok_r(NULL, ",", &save)) out[n++] = atol(tok);
    return n;
}

int parse_ints(char *arg, int *out, int max)
{
    int n = 0;
    char *save;
    for (char *tok = strtok_r(arg, ",", &save); tok && n < max; tok = strtok_r(NULL, ",", &save)) out[n++] = atoi(tok);
    return n;
}

int parse_windows(char *arg, int *recv, int *send, int max)
{
    int n = 0;
    char *save;
    for (char *tok = strtok_r(arg, ",", &save); tok && n < max; tok = strtok_r(NULL, ",", &save), ++n) {
        if (sscanf(tok, "%d:%d", &recv[n], &send[n]) != 2) fail("bad window %s (want RECV:SEND)", tok);
    }
    return n;
}

void bcast_test_options(int argc, char **argv, int *counts, int max, int *ncounts, int *root, int *nonblocking)
{
    static struct option opts[] = {{"counts", required_argument, 0, 'c'},
                                   {"root", required_argument, 0, 'r'},
                                   {"nonblocking", no_argument, 0, 'n'},
                                   {0, 0, 0, 0}};
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int c; (c = getopt_long(argc, argv, "c:r:n", opts, NULL)) != -1;) {
        if (c == 'c') {
            *ncounts = parse_ints(optarg, counts, max);
        } else if (c == 'r') {
            *root = atoi(optarg) % size;
        } else if (c == 'n') {
            *nonblocking = 1;
        }
    }
}
