/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/* Shared by the parts of adapt2's differential fuzzer (fuzz.c: cases, calls
 * and checks; fuzz_types.c: the datatype generator and buffer checks;
 * fuzz_ops.c: values, reference reductions and user-defined operations). */
#ifndef ADAPT2_FUZZ_H
#define ADAPT2_FUZZ_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* ---- deterministic random numbers (splitmix64): every rank derives the same
 * stream from the same key, so no rank ever has to tell another what it drew */
typedef struct rng {
    uint64_t s;
} rng_t;

uint64_t mix64(uint64_t x);
rng_t rng_make(uint64_t a, uint64_t b, uint64_t c);
uint64_t rng_next(rng_t *r);
uint64_t rng_below(rng_t *r, uint64_t n);   /* [0, n) */
long rng_range(rng_t *r, long lo, long hi); /* [lo, hi] */
int rng_chance(rng_t *r, int percent);

/* snprintf that may truncate (descriptions nest other descriptions). */
void textf(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- predefined types the fuzzer uses ---- */
enum prim {
    P_CHAR,
    P_SHORT,
    P_INT,
    P_UNSIGNED,
    P_LLONG,
    P_ULLONG,
    P_FLOAT,
    P_DOUBLE,
    P_2INT,
    P_FLOAT_INT,
    P_DOUBLE_INT,
    P_LONG_INT,
    P_SHORT_INT,
    P_COUNT
};
enum prim_class { PC_CHAR, PC_SINT, PC_UINT, PC_FLOAT, PC_PAIR };

typedef struct prim_info {
    const char *name;
    MPI_Datatype type;
    int cls;
    int extent; /* C sizeof, equal to MPI's extent (checked) */
    int size;   /* MPI_Type_size */
    int tub;    /* end of the last significant byte (MPI's true extent) */
    int nsig;   /* significant byte ranges; the rest of the extent is padding */
    int sig_off[2], sig_len[2];
} prim_info_t;

extern prim_info_t prims[P_COUNT];
void prims_init(void);

/* A signature unit: the sequence of predefined types one "unit" of a message
 * holds (e.g. {double, char, int} or {3 x short, 5 x char}). A generated
 * datatype holds m units per element; all ranks of a broadcast describe the
 * same sequence of units, each with its own (count, datatype). */
#define SIG_MAX 8
typedef struct sig {
    int n;
    int p[SIG_MAX];
} unitsig_t;
void sig_describe(const unitsig_t *s, char *out, size_t n);
size_t sig_bytes(const unitsig_t *s); /* packed bytes of one unit */

/* ---- generated datatypes ---- */
typedef struct map_entry {
    long off; /* byte offset from the buffer pointer, element 0 */
    int prim;
} map_entry_t;

#define MAP_MAX 64 /* predefined entries per element */

typedef struct dtype {
    MPI_Datatype type;   /* the handle to pass to MPI; MPI_DATATYPE_NULL once freed */
    MPI_Datatype handle; /* the handle as created: user op functions receive it */
    long lb, extent;     /* MPI_Type_get_extent */
    long tlb, tub;       /* true bounds of the data of element 0 */
    long size;           /* packed bytes per element */
    int nmap;            /* typemap of one element, in typemap order */
    map_entry_t map[MAP_MAX];
    int m;           /* signature units per element */
    int contiguous;  /* data dense from tlb, no holes between elements */
    int ompi_contig; /* Open MPI 4.1 flags it contiguous (opal_datatype_add's rule) */
    int monotonic;   /* typemap offsets increase in typemap order */
    char desc[640];
    /* hole runs of one element's cell [tlb, tlb + extent): bytes no unit covers */
    int nholes;
    long *hole_off, *hole_len;
    int *hole_pad; /* the run is padding inside a MINLOC/MAXLOC pair type */
} dtype_t;

/* Generates (and builds, committed) a datatype whose signature is m copies
 * of `unit`, nested up to max_depth constructors deep. */
dtype_t *dtype_generate(rng_t *r, const unitsig_t *unit, int m, int max_depth);
/* vector(m * n, 1, stride, p) for a unit of n x p: lb 0, offsets
 * increasing; dense for stride 1, a hole after each unit for stride 2. */
dtype_t *dtype_plain_vector(const unitsig_t *unit, int m, int stride);
/* MPI_Type_free now (a pending call keeps using it); lookups still work. */
void dtype_release(dtype_t *t);
void dtype_free(dtype_t *t);
/* The generated type whose handle is h (for user-defined op functions), or NULL. */
const dtype_t *dtype_lookup(MPI_Datatype h);

/* ---- buffers: a datatype's span over count elements, with guard bytes on
 * both sides; every byte outside the typemap holds a sentinel ---- */
#define GUARD 64
typedef struct region {
    unsigned char *mem;
    size_t bytes;
    unsigned char *buf; /* what MPI gets: mem + GUARD - tlb */
} region_t;

void region_alloc(region_t *g, const dtype_t *t, int count, unsigned char sentinel);
void region_copy(region_t *dst, const region_t *src);
void region_free(region_t *g);
/* Bytes of the region that are outside every element's typemap and differ
 * from the sentinel; prints the first few (prefix what). */
extern int allow_pair_padding; /* skip padding inside pair types */
/* Sets the padding inside pair types of count elements to v. */
void reset_pair_padding(const dtype_t *t, int count, region_t *g, unsigned char v);
long long check_holes(const dtype_t *t, int count, const region_t *g, unsigned char sentinel, const char *what,
                      int *budget);

/* ---- values and operations ---- */
enum op_code {
    OP_NONE, /* broadcast: any bytes */
    OP_SUM,
    OP_PROD,
    OP_MAX,
    OP_MIN,
    OP_LAND,
    OP_LOR,
    OP_LXOR,
    OP_BAND,
    OP_BOR,
    OP_BXOR,
    OP_MAXLOC,
    OP_MINLOC,
    OP_MATMUL, /* user, non-commutative: 2x2 unsigned matrices, product mod 2^32 */
    OP_AFFINE, /* user, non-commutative: composition of x -> a*x + b mod 2^64 */
    OP_MODSUM, /* user, commutative: unsigned sum mod 65521 */
    OP_DSUM,   /* user, commutative: double sum of small integers */
    OP_COUNT
};

typedef struct op_info {
    const char *name;
    MPI_Op op;
    int user, commute;
    int group; /* signature units one operand spans (4 for matmul) */
} op_info_t;

extern op_info_t ops[OP_COUNT];
void ops_init(void);
void ops_finalize(void);
/* MPI defines op for this predefined type (and the fuzzer knows its values). */
int op_allows(int op, int prim);
/* The unit signature a user op works on. */
void op_unit(int op, int prim, unitsig_t *unit);

/* The value contributor `rank` puts at signature unit u of the call `key`
 * (significant bytes only, in the prim's C layout at out). */
void gen_value(uint64_t key, int rank, uint64_t u, int prim, int op, unsigned char *out);
/* Expected reduction of a group of `group` units starting at unit u over
 * ranks 0..nranks-1, in rank order: out holds group slots of 16 bytes. */
void expected_group(uint64_t key, int nranks, uint64_t u, const int *prims_of_group, int group, int op,
                    unsigned char out[][16]);
/* Bytes of prim p that are significant and equal in a and b. */
int prim_equal(int p, const unsigned char *a, const unsigned char *b);
void prim_show(int p, const unsigned char *a, char *out, size_t n);

/* Errors seen inside user op functions (unknown datatype). */
extern long long user_fn_errors;

#endif
