/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/* Shared by the fuzzer's main program (fuzz.c: options, running a case,
 * summary), its case generator (fuzz_case.c: parameters, communicators,
 * calls, descriptions) and its checks (fuzz_check.c: buffers, results). */
#ifndef ADAPT2_FUZZ_CASE_H
#define ADAPT2_FUZZ_CASE_H

#include "fuzz.h"

#define RECV_SENTINEL 0xA5 /* receive buffers: holes must keep it */
#define SEND_SENTINEL 0x3C /* send buffers' holes: a different byte, so copying them shows */
#define MAX_CALLS 6
#define MAX_FRESH 3
#define MAX_PINS 16
#define POOL 6
#define PICK(r, arr) (arr[rng_below(r, sizeof(arr) / sizeof(arr[0]))])

enum coll { C_BCAST, C_REDUCE, C_ALLREDUCE, C_ALLGATHER, C_RSB, NCOLL }; /* C_RSB: MPI_Reduce_scatter_block */

struct options {
    uint64_t seed;
    long cases, only_case, max_count, max_bytes;
    double time_budget;
    int case_timeout, verbose, keep_going, depth;
};
extern struct options opt;
extern int wrank, wsize;
extern char repro_prefix[4096]; /* the mpirun command line up to --case */
extern char *pins[MAX_PINS];    /* --set NAME=VALUE */
extern int npins;
extern unsigned skip_calls; /* --skip-calls: generated, not run (bisecting a case) */

/* ---- communicators ---- */
typedef struct comm {
    MPI_Comm comm;
    int rank, size, color;
    int min_size; /* smallest group of the split, the same on all ranks */
    char name[80];
} comm_t;

extern comm_t pool[POOL]; /* long-lived communicators, pool[0] is MPI_COMM_WORLD */
void pool_create(void);
void pool_free(void);

/* ---- adapt2's parameters ---- */
typedef struct params {
    const char *bcast_alg, *reduce_alg, *allreduce_alg, *node_alg;
    long bcast_seg, reduce_seg, allreduce_seg, topo_seg, node_seg, numa_seg;
    int recv_window, send_window, fanout, radix, chains;
    long detach_max_message, await_min, ring_min, ring_max, recdoubling_max;
    long detach_min_message; /* derived from chains, not drawn: the case numbers stay */
    long node_message_cost;  /* derived from fanout, likewise: 0, 1 (8 KiB segments) or 16 KiB */
    const char *single_copy; /* derived from radix, likewise: "no" (two trees inside nodes from 64 KiB) or "auto" */
    int grace_us, reproducible, topology;
    long pool_max_bytes, detach_max_bytes; /* read at a communicator's first collective */
} params_t;

extern params_t pool_par; /* in force when the pool communicators got their engines */
void params_generate(rng_t *r, params_t *p);
/* Sets every parameter (then the --set pins): a case does not depend on the
 * cases before it. */
void params_apply(const params_t *p);
void set_algorithms(const char *bcast, const char *reduce, const char *allreduce);
void set_pinned(const char *spec);
void params_describe(const params_t *p, char *out, size_t n);

/* ---- a case ---- */

enum free_mode { FREE_AT_END, FREE_WHEN_DONE, FREE_WHILE_PENDING };

typedef struct fresh {
    comm_t c;
    int mode, freed;
} fresh_t;

typedef struct call {
    int id; /* index in the case as generated */
    int coll, nonblocking, op, prim, inplace, prev, release_type, null_recv;
    comm_t *c;
    int fresh;    /* index into the case's fresh communicators, or -1 */
    int root;     /* rank in c */
    uint64_t key; /* the values' key */
    unitsig_t unit;
    dtype_t *t; /* this rank's datatype */
    int count;
    char root_desc[760];
    region_t sbuf, scopy, rbuf, rprev;
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

struct stats {
    long cases, calls[NCOLL], nonblocking, mismatches, prev_compared, prev_warnings;
    long adapt2_expected[NCOLL];
};
extern struct stats stats;

/* Generates case k->index (parameters applied, fresh communicators created). */
void gen_case(case_t *k);
void describe_call(const case_t *k, int i, char *out, size_t n);
/* Whether adapt2 itself should run the call (for the counter check). */
int adapt2_runs(const call_t *c);

/* ---- buffers and checks (fuzz_check.c) ---- */
extern long long case_errors;
extern int case_reported;
/* Prints "FUZZ MISMATCH ..." and, the first time in a case, the case and
 * how to reproduce it. */
void report_header(const case_t *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A call returned an error: its peers may wait forever, so stop the job. */
void call_error(const case_t *k, int i, int rc, const char *what);
int has_result(const call_t *c);
void prepare(call_t *c);
void release_buffers(call_t *c);
long long check_call(const case_t *k, int i);

#endif
