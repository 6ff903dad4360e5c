/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/* Shared by adapt2's reduce/allreduce MPI tests: datatypes of every class
 * (with the values each rank contributes), the predefined and user-defined
 * operations, the serial left-to-right reference result, and element-wise
 * checks of receive buffers (values and untouched holes).
 *
 * A "base" is one unit an operation applies to: a predefined type (int,
 * double, MPI_DOUBLE_INT, ...) or one of the test's own contiguous types for
 * user-defined operations (mat2i: 2x2 int matrix, mat2d: 2x2 double matrix).
 * A "layout" is the datatype passed to MPI: the base itself, or a derived
 * type whose elements hold several units of the base (contig, vector,
 * indexed, resized: "vector:int", "contig:mat2i", ...). */
#ifndef ADAPT2_REDUCE_COMMON_H
#define ADAPT2_REDUCE_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "mpi_check.h"

#define RC_POISON 0xA5
#define RC_MAX_UNITS 8

enum rc_op_code {
    RC_MAX,
    RC_MIN,
    RC_SUM,
    RC_PROD,
    RC_LAND,
    RC_LOR,
    RC_LXOR,
    RC_BAND,
    RC_BOR,
    RC_BXOR,
    RC_MAXLOC,
    RC_MINLOC,
    RC_MATMUL,
    RC_MODSUM,
    RC_NOPS
};

enum rc_class { RC_CL_INT, RC_CL_UINT, RC_CL_FLOAT, RC_CL_COMPLEX, RC_CL_BOOL, RC_CL_BYTE, RC_CL_PAIR, RC_CL_MAT };

typedef struct rc_base {
    const char *name;
    MPI_Datatype type;
    int cls;
    size_t size; /* C sizeof, equal to the MPI extent (checked) */
    int nsig;    /* significant byte ranges (no padding) */
    size_t sig_off[2], sig_len[2];
    int ncomp;       /* floating components (1 real, 2 complex), else 0 */
    long double eps; /* machine epsilon of the floating components */
    /* The value `rank` (of `nranks`) contributes at unit `idx` of the call
     * with `seed`; random != 0: arbitrary floating values (SUM/PROD only). */
    void (*gen)(void *out, int op, int rank, int nranks, uint64_t idx, uint64_t seed, int random);
    void (*combine)(void *acc, const void *x, int op); /* acc = acc op x */
    int (*equal)(const void *a, const void *b);        /* same value */
    void (*show)(char *s, size_t n, const void *a);
    long double (*comp)(const void *a, int c); /* floating component c */
} rc_base_t;

typedef struct rc_layout {
    char name[64];
    const rc_base_t *base;
    MPI_Datatype type;
    size_t extent; /* bytes per element of type */
    size_t size;   /* MPI_Type_size: packed bytes per element */
    int nunits;    /* base units per element */
    size_t off[RC_MAX_UNITS];
    int derived;        /* a derived type the test created (the base, for mat2i/mat2d, is not) */
    int contiguous;     /* elements are dense: no holes, no padding */
    int tail_hole_only; /* the only hole is at the end of the extent (resized) */
} rc_layout_t;

typedef struct rc_op {
    const char *name;
    int code;
    int user; /* user-defined (MPI_Op_create) */
    int commute;
    MPI_Op op;
} rc_op_t;

/* Creates the user-defined operations and the mat2i/mat2d types; after MPI_Init. */
void rc_init(void);
void rc_finalize(void);

const rc_op_t *rc_find_op(const char *name);     /* NULL if unknown */
const rc_base_t *rc_find_base(const char *name); /* NULL if unknown */
/* The predefined ops/bases in a fixed order (for "all"). */
int rc_all_ops(const char **names, int max);
int rc_all_bases(const char **names, int max);

/* "base" or "shape:base", shape one of contig, vector, indexed, resized.
 * Returns 0 on success. Layouts must be created before other threads run
 * user-defined operations (they are registered for those). */
int rc_layout_create(const char *name, rc_layout_t *l);
void rc_layout_free(rc_layout_t *l);

/* MPI allows op on the layout's base (and the test knows the values to use). */
int rc_valid(const rc_op_t *op, const rc_layout_t *l);
/* The spec says adapt2 hands this call to the previous component: a
 * user-defined op on data that is not contiguous in memory (count elements
 * of a derived type with holes; a hole only at the end of the extent is no
 * hole for one element), or a MINLOC/MAXLOC pair type with padding
 * (MPI_DOUBLE_INT, ...) or a derived type of one. */
int rc_spec_fallback(const rc_op_t *op, const rc_layout_t *l, int count);

/* Fills `count` elements of buf with this rank's contribution; holes get
 * RC_POISON. */
void rc_fill(const rc_layout_t *l, const rc_op_t *op, void *buf, int count, int rank, int nranks, uint64_t seed,
             int random);
/* The serial left-to-right result over ranks 0..nranks-1 in rank order, in
 * the layout of `buf` (holes RC_POISON). */
void rc_expected(const rc_layout_t *l, const rc_op_t *op, void *buf, int count, int nranks, uint64_t seed);
/* Compares got with want unit by unit (exact values) and checks that the
 * holes of got still hold RC_POISON. Prints at most `budget` lines for this
 * call, prefixed with `what`. Returns the number of wrong units/holes. */
long long rc_compare(const rc_layout_t *l, const void *got, const void *want, int count, const char *what);
/* Only the holes: every byte outside the units must still be RC_POISON. */
long long rc_check_holes(const rc_layout_t *l, const void *got, int count, const char *what);
/* Random values: got must be within a rounding-error bound of the exact
 * result (computed in long double). Holes checked too. */
long long rc_compare_approx(const rc_layout_t *l, const rc_op_t *op, const void *got, int count, int nranks,
                            uint64_t seed, const char *what);
/* Packs the significant bytes (no holes, no padding) of count elements. */
size_t rc_sig_bytes(const rc_layout_t *l, int count);
void rc_pack_sig(const rc_layout_t *l, const void *buf, int count, unsigned char *out);

/* One call on any communicator, for the programs that run many at once. */
typedef struct rc_call {
    const rc_layout_t *l;
    const rc_op_t *op;
    MPI_Op mpi_op;     /* op->op unless the caller substitutes its own handle */
    MPI_Datatype type; /* l->type unless substituted */
    int count, root, all, inplace;
    MPI_Comm comm;
    uint64_t seed;
    unsigned char *sbuf, *scopy, *rbuf;
    MPI_Request req;
} rc_call_t;
/* Allocates and fills the buffers (send: this rank's values; receive:
 * poison, or the own values in place). */
void rc_call_prepare(rc_call_t *c);
/* Runs the call (blocking) or posts it (non-blocking: c->req). */
void rc_call_start(rc_call_t *c, int nonblocking);
/* Checks the result where it is defined and the send buffer, frees the
 * buffers; returns the errors. */
long long rc_call_check(rc_call_t *c, const char *what);

/* The user functions behind "matmul" and "modsum", to create more handles. */
MPI_User_function *rc_user_function(int code);

/* Errors seen inside user-defined operation functions (unknown datatype). */
long long rc_user_fn_errors(void);

/* Limits error output per process. */
int rc_may_print(void);

uint64_t rc_mix(uint64_t x);

#endif
