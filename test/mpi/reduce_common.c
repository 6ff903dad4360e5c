/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
#include "reduce_common.h"

#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t rc_mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* The per-(seed, rank) part is remembered per thread: callers loop over
 * units of one rank at a time. */
static __thread uint64_t memo_seed = ~0ull, memo_base;
static __thread int memo_rank = -1;
static uint64_t hash3(uint64_t seed, int rank, uint64_t idx)
{
    if (seed != memo_seed || rank != memo_rank) {
        memo_base = rc_mix(rc_mix(seed) ^ (uint64_t) (rank + 1));
        memo_seed = seed;
        memo_rank = rank;
    }
    return rc_mix(memo_base ^ (idx * 0xD1B54A32D192ED03ull));
}

static int printed;
int rc_may_print(void)
{
    return printed++ < 40;
}

/* ------------------------------------------------------------------ */
/* C integer types. Values keep signed arithmetic exact for any nranks
 * (no overflow); unsigned arithmetic wraps as C defines it. */

#define NONZERO(T, SIGNED, h2) \
    ((T) ((SIGNED) && ((h2) >> 40 & 1) ? (T) 0 - (T) (1 + (h2) % 100) : (T) (1 + (h2) % 100)))

#define DEF_INT(NAME, T, SIGNED)                                                                        \
    static void gen_##NAME(void *out, int op, int rank, int n, uint64_t idx, uint64_t seed, int random) \
    {                                                                                                   \
        uint64_t h = hash3(seed, rank, idx), h2 = rc_mix(h);                                            \
        const int bits = 8 * (int) sizeof(T);                                                           \
        T v = 0;                                                                                        \
        (void) random;                                                                                  \
        switch (op) {                                                                                   \
        case RC_SUM:                                                                                    \
            if (SIGNED) {                                                                               \
                long long lim = bits >= 32 ? 1000000 : ((1LL << (bits - 1)) - 1) / n;                   \
                v = (T) ((long long) (h % (uint64_t) (2 * lim + 1)) - lim);                             \
            } else {                                                                                    \
                v = (T) h;                                                                              \
            }                                                                                           \
            break;                                                                                      \
        case RC_PROD:                                                                                   \
            if (SIGNED) {                                                                               \
                static const int c[4] = {1, -1, 2, 1};                                                  \
                v = (T) (rank < bits - 2 ? c[h & 3] : c[h & 1]);                                        \
            } else {                                                                                    \
                v = (T) h;                                                                              \
            }                                                                                           \
            break;                                                                                      \
        case RC_MAX:                                                                                    \
        case RC_MIN: v = (T) h; break;                                                                  \
        case RC_LAND: v = h % 8 == 0 ? 0 : NONZERO(T, SIGNED, h2); break;                               \
        case RC_LOR: v = h % 8 != 0 ? 0 : NONZERO(T, SIGNED, h2); break;                                \
        case RC_LXOR: v = h & 1 ? 0 : NONZERO(T, SIGNED, h2); break;                                    \
        case RC_BAND: v = (T) (h | h2); break;                                                          \
        case RC_BOR: v = (T) (h & h2); break;                                                           \
        case RC_BXOR: v = (T) h; break;                                                                 \
        case RC_MODSUM: v = (T) (h % 65521); break;                                                     \
        }                                                                                               \
        *(T *) out = v;                                                                                 \
    }                                                                                                   \
    static void combine_##NAME(void *acc, const void *xp, int op)                                       \
    {                                                                                                   \
        T *a = acc;                                                                                     \
        T x = *(const T *) xp;                                                                          \
        switch (op) {                                                                                   \
        case RC_SUM: *a = (T) ((uint64_t) *a + (uint64_t) x); break;                                    \
        case RC_PROD: *a = (T) ((uint64_t) *a * (uint64_t) x); break;                                   \
        case RC_MAX: *a = x > *a ? x : *a; break;                                                       \
        case RC_MIN: *a = x < *a ? x : *a; break;                                                       \
        case RC_LAND: *a = (T) (*a && x); break;                                                        \
        case RC_LOR: *a = (T) (*a || x); break;                                                         \
        case RC_LXOR: *a = (T) (!*a != !x); break;                                                      \
        case RC_BAND: *a = (T) (*a & x); break;                                                         \
        case RC_BOR: *a = (T) (*a | x); break;                                                          \
        case RC_BXOR: *a = (T) (*a ^ x); break;                                                         \
        case RC_MODSUM: *a = (T) (((uint64_t) *a + (uint64_t) x) % 65521); break;                       \
        }                                                                                               \
    }                                                                                                   \
    static int equal_##NAME(const void *a, const void *b)                                               \
    {                                                                                                   \
        return *(const T *) a == *(const T *) b;                                                        \
    }                                                                                                   \
    static void show_##NAME(char *s, size_t n, const void *a)                                           \
    {                                                                                                   \
        if (SIGNED)                                                                                     \
            snprintf(s, n, "%lld", (long long) *(const T *) a);                                         \
        else                                                                                            \
            snprintf(s, n, "%llu", (unsigned long long) *(const T *) a);                                \
    }

#define INT_TYPES(X)                                         \
    X(schar, signed char, MPI_SIGNED_CHAR, 1)                \
    X(uchar, unsigned char, MPI_UNSIGNED_CHAR, 0)            \
    X(int8, int8_t, MPI_INT8_T, 1)                           \
    X(uint8, uint8_t, MPI_UINT8_T, 0)                        \
    X(short, short, MPI_SHORT, 1)                            \
    X(ushort, unsigned short, MPI_UNSIGNED_SHORT, 0)         \
    X(int, int, MPI_INT, 1)                                  \
    X(unsigned, unsigned, MPI_UNSIGNED, 0)                   \
    X(long, long, MPI_LONG, 1)                               \
    X(ulong, unsigned long, MPI_UNSIGNED_LONG, 0)            \
    X(llong, long long, MPI_LONG_LONG, 1)                    \
    X(ullong, unsigned long long, MPI_UNSIGNED_LONG_LONG, 0) \
    X(int16, int16_t, MPI_INT16_T, 1)                        \
    X(uint16, uint16_t, MPI_UINT16_T, 0)                     \
    X(int32, int32_t, MPI_INT32_T, 1)                        \
    X(uint32, uint32_t, MPI_UINT32_T, 0)                     \
    X(int64, int64_t, MPI_INT64_T, 1)                        \
    X(uint64, uint64_t, MPI_UINT64_T, 0)

#define X_DEF_INT(NAME, T, MPIT, SIGNED) DEF_INT(NAME, T, SIGNED)
INT_TYPES(X_DEF_INT)

/* ------------------------------------------------------------------ */
/* Floating types. Exact values: small multiples of powers of two, so that
 * every sum and product is exact in any order. Random values: mantissas of
 * random bits with exponents over 2^-20..2^20 (sums), or factors in
 * [0.5, 1.5] (products): results depend on the order of operations. */

static long double random_unit(uint64_t h, uint64_t h2) /* [-1, 1) with 64+ random bits */
{
    long double m = (long double) (h >> 11) * 0x1p-53L + (long double) (h2 >> 11) * 0x1p-106L;
    return 2 * m - 1;
}

#define DEF_FLT(NAME, T)                                                                                \
    static T val_##NAME(int op, uint64_t h, uint64_t h2, int random)                                    \
    {                                                                                                   \
        static const T prods[8] = {1, -1, 2, 0.5, 3, -0.25, 1, -1};                                     \
        if (random) {                                                                                   \
            if (op == RC_PROD) return (T) (1 + random_unit(h, h2) * ldexpl(1, -(int) (h2 % 8) - 1));    \
            return (T) ldexpl(random_unit(h, h2), (int) (h2 % 41) - 20);                                \
        }                                                                                               \
        switch (op) {                                                                                   \
        case RC_SUM: return (T) ((long long) (h % 2001) - 1000) * (T) 0.25;                             \
        case RC_PROD: return prods[h & 7];                                                              \
        default: return (T) ((long long) (h % 200001) - 100000) / (T) 64;                               \
        }                                                                                               \
    }                                                                                                   \
    static void gen_##NAME(void *out, int op, int rank, int n, uint64_t idx, uint64_t seed, int random) \
    {                                                                                                   \
        uint64_t h = hash3(seed, rank, idx);                                                            \
        (void) n;                                                                                       \
        *(T *) out = val_##NAME(op, h, rc_mix(h), random);                                              \
    }                                                                                                   \
    static void combine_##NAME(void *acc, const void *xp, int op)                                       \
    {                                                                                                   \
        T *a = acc;                                                                                     \
        T x = *(const T *) xp;                                                                          \
        switch (op) {                                                                                   \
        case RC_SUM: *a = *a + x; break;                                                                \
        case RC_PROD: *a = *a * x; break;                                                               \
        case RC_MAX: *a = x > *a ? x : *a; break;                                                       \
        case RC_MIN: *a = x < *a ? x : *a; break;                                                       \
        }                                                                                               \
    }                                                                                                   \
    static int equal_##NAME(const void *a, const void *b)                                               \
    {                                                                                                   \
        return *(const T *) a == *(const T *) b;                                                        \
    }                                                                                                   \
    static void show_##NAME(char *s, size_t n, const void *a)                                           \
    {                                                                                                   \
        snprintf(s, n, "%.21Lg", (long double) *(const T *) a);                                         \
    }                                                                                                   \
    static long double comp_##NAME(const void *a, int c)                                                \
    {                                                                                                   \
        (void) c;                                                                                       \
        return (long double) *(const T *) a;                                                            \
    }

DEF_FLT(float, float)
DEF_FLT(double, double)
DEF_FLT(ldouble, long double)

/* Complex: stored as two reals. Exact products: Gaussian integers of small
 * norm. */
#define DEF_CPX(NAME, T)                                                                                        \
    static void gen_##NAME(void *out, int op, int rank, int n, uint64_t idx, uint64_t seed, int random)         \
    {                                                                                                           \
        static const T units[8][2] = {{1, 0}, {0, 1}, {-1, 0}, {0, -1}, {1, 1}, {1, -1}, {2, 0}, {0, 2}};       \
        uint64_t h = hash3(seed, rank, idx), h2 = rc_mix(h), h3 = rc_mix(h2);                                   \
        T *v = out;                                                                                             \
        (void) n;                                                                                               \
        if (random) {                                                                                           \
            if (op == RC_PROD) {                                                                                \
                v[0] = (T) (1 + random_unit(h, h2) * 0.25L);                                                    \
                v[1] = (T) (random_unit(h3, h) * 0.25L);                                                        \
            } else {                                                                                            \
                v[0] = (T) ldexpl(random_unit(h, h2), (int) (h3 % 41) - 20);                                    \
                v[1] = (T) ldexpl(random_unit(h2, h3), (int) (h % 41) - 20);                                    \
            }                                                                                                   \
        } else if (op == RC_PROD) {                                                                             \
            v[0] = units[h & 7][0];                                                                             \
            v[1] = units[h & 7][1];                                                                             \
        } else {                                                                                                \
            v[0] = (T) ((long long) (h % 201) - 100) * (T) 0.5;                                                 \
            v[1] = (T) ((long long) (h2 % 201) - 100) * (T) 0.5;                                                \
        }                                                                                                       \
    }                                                                                                           \
    static void combine_##NAME(void *acc, const void *xp, int op)                                               \
    {                                                                                                           \
        T *a = acc;                                                                                             \
        const T *x = xp;                                                                                        \
        if (op == RC_SUM) {                                                                                     \
            a[0] += x[0];                                                                                       \
            a[1] += x[1];                                                                                       \
        } else {                                                                                                \
            T re = a[0] * x[0] - a[1] * x[1], im = a[0] * x[1] + a[1] * x[0];                                   \
            a[0] = re;                                                                                          \
            a[1] = im;                                                                                          \
        }                                                                                                       \
    }                                                                                                           \
    static int equal_##NAME(const void *a, const void *b)                                                       \
    {                                                                                                           \
        return ((const T *) a)[0] == ((const T *) b)[0] && ((const T *) a)[1] == ((const T *) b)[1];            \
    }                                                                                                           \
    static void show_##NAME(char *s, size_t n, const void *a)                                                   \
    {                                                                                                           \
        snprintf(s, n, "(%.21Lg, %.21Lg)", (long double) ((const T *) a)[0], (long double) ((const T *) a)[1]); \
    }                                                                                                           \
    static long double comp_##NAME(const void *a, int c)                                                        \
    {                                                                                                           \
        return (long double) ((const T *) a)[c];                                                                \
    }

DEF_CPX(fcomplex, float)
DEF_CPX(dcomplex, double)
DEF_CPX(ldcomplex, long double)

/* ------------------------------------------------------------------ */
/* C _Bool (logical ops) and MPI_BYTE (bitwise ops). */

static void gen_bool(void *out, int op, int rank, int n, uint64_t idx, uint64_t seed, int random)
{
    uint64_t h = hash3(seed, rank, idx);
    (void) n;
    (void) random;
    *(bool *) out = op == RC_LAND ? h % 8 != 0 : op == RC_LOR ? h % 8 == 0 : (h & 1);
}
static void combine_bool(void *acc, const void *xp, int op)
{
    bool *a = acc, x = *(const bool *) xp;
    *a = op == RC_LAND ? (*a && x) : op == RC_LOR ? (*a || x) : (*a != x);
}
static int equal_bool(const void *a, const void *b)
{
    return *(const bool *) a == *(const bool *) b;
}
static void show_bool(char *s, size_t n, const void *a)
{
    snprintf(s, n, "%d (byte 0x%02x)", (int) *(const bool *) a, *(const unsigned char *) a);
}

static void gen_byte(void *out, int op, int rank, int n, uint64_t idx, uint64_t seed, int random)
{
    uint64_t h = hash3(seed, rank, idx), h2 = rc_mix(h);
    (void) n;
    (void) random;
    *(unsigned char *) out = (unsigned char) (op == RC_BAND ? h | h2 : op == RC_BOR ? h & h2 : h);
}
#define combine_byte combine_uchar
#define equal_byte equal_uchar
#define show_byte show_uchar

/* ------------------------------------------------------------------ */
/* MINLOC/MAXLOC pairs: few distinct values, so ties (lowest index wins)
 * are frequent; indices are arbitrary ints. */

#define DEF_PAIR(NAME, VT)                                                                              \
    typedef struct {                                                                                    \
        VT v;                                                                                           \
        int k;                                                                                          \
    } pair_##NAME;                                                                                      \
    static void gen_##NAME(void *out, int op, int rank, int n, uint64_t idx, uint64_t seed, int random) \
    {                                                                                                   \
        uint64_t h = hash3(seed, rank, idx), h2 = rc_mix(h);                                            \
        pair_##NAME *p = out;                                                                           \
        (void) op;                                                                                      \
        (void) n;                                                                                       \
        (void) random;                                                                                  \
        memset(p, 0, sizeof *p);                                                                        \
        p->v = (VT) ((long long) (h % 7) - 3);                                                          \
        p->k = (int) (h2 % 2001) - 1000;                                                                \
    }                                                                                                   \
    static void combine_##NAME(void *acc, const void *xp, int op)                                       \
    {                                                                                                   \
        pair_##NAME *a = acc;                                                                           \
        const pair_##NAME *x = xp;                                                                      \
        if (op == RC_MAXLOC ? x->v > a->v : x->v < a->v) {                                              \
            a->v = x->v;                                                                                \
            a->k = x->k;                                                                                \
        } else if (x->v == a->v && x->k < a->k) {                                                       \
            a->k = x->k;                                                                                \
        }                                                                                               \
    }                                                                                                   \
    static int equal_##NAME(const void *a, const void *b)                                               \
    {                                                                                                   \
        const pair_##NAME *p = a, *q = b;                                                               \
        return p->v == q->v && p->k == q->k;                                                            \
    }                                                                                                   \
    static void show_##NAME(char *s, size_t n, const void *a)                                           \
    {                                                                                                   \
        const pair_##NAME *p = a;                                                                       \
        snprintf(s, n, "(%Lg, %d)", (long double) p->v, p->k);                                          \
    }

DEF_PAIR(float_int, float)
DEF_PAIR(double_int, double)
DEF_PAIR(long_int, long)
DEF_PAIR(2int, int)
DEF_PAIR(short_int, short)
DEF_PAIR(ldouble_int, long double)

/* ------------------------------------------------------------------ */
/* 2x2 matrices (row-major) for the non-commutative user-defined product.
 * Entries in {-1, 0, 1, 2}: products of up to a few dozen stay exact. */

#define DEF_MAT(NAME, T, FMT)                                                                           \
    static void gen_##NAME(void *out, int op, int rank, int n, uint64_t idx, uint64_t seed, int random) \
    {                                                                                                   \
        static const T e[5] = {-1, 0, 1, 2, 1};                                                         \
        uint64_t h = hash3(seed, rank, idx);                                                            \
        T *m = out;                                                                                     \
        (void) op;                                                                                      \
        (void) n;                                                                                       \
        (void) random;                                                                                  \
        for (int j = 0; j < 4; ++j) m[j] = e[(h >> (8 * j)) % 5];                                       \
    }                                                                                                   \
    static void mul_##NAME(T *a, const T *x) /* a = a * x */                                            \
    {                                                                                                   \
        T c[4] = {a[0] * x[0] + a[1] * x[2], a[0] * x[1] + a[1] * x[3], a[2] * x[0] + a[3] * x[2],      \
                  a[2] * x[1] + a[3] * x[3]};                                                           \
        memcpy(a, c, sizeof c);                                                                         \
    }                                                                                                   \
    static void combine_##NAME(void *acc, const void *xp, int op)                                       \
    {                                                                                                   \
        (void) op;                                                                                      \
        mul_##NAME(acc, xp);                                                                            \
    }                                                                                                   \
    static int equal_##NAME(const void *a, const void *b)                                               \
    {                                                                                                   \
        const T *p = a, *q = b;                                                                         \
        return p[0] == q[0] && p[1] == q[1] && p[2] == q[2] && p[3] == q[3];                            \
    }                                                                                                   \
    static void show_##NAME(char *s, size_t n, const void *a)                                           \
    {                                                                                                   \
        const T *p = a;                                                                                 \
        snprintf(s, n, "[" FMT " " FMT "; " FMT " " FMT "]", p[0], p[1], p[2], p[3]);                   \
    }

DEF_MAT(mat2i, int, "%d")
DEF_MAT(mat2d, double, "%g")

/* ------------------------------------------------------------------ */

#define INT_BASE(NAME, T, MPIT, SIGNED) \
    {#NAME,                             \
     MPIT,                              \
     SIGNED ? RC_CL_INT : RC_CL_UINT,   \
     sizeof(T),                         \
     1,                                 \
     {0, 0},                            \
     {sizeof(T), 0},                    \
     0,                                 \
     0,                                 \
     gen_##NAME,                        \
     combine_##NAME,                    \
     equal_##NAME,                      \
     show_##NAME,                       \
     NULL},
#define PAIR_BASE(NAME, VT, MPIT, VLEN) \
    {#NAME,                             \
     MPIT,                              \
     RC_CL_PAIR,                        \
     sizeof(pair_##NAME),               \
     2,                                 \
     {0, offsetof(pair_##NAME, k)},     \
     {VLEN, sizeof(int)},               \
     0,                                 \
     0,                                 \
     gen_##NAME,                        \
     combine_##NAME,                    \
     equal_##NAME,                      \
     show_##NAME,                       \
     NULL},

static rc_base_t bases[] = {
    INT_TYPES(INT_BASE){"float",
                        MPI_FLOAT,
                        RC_CL_FLOAT,
                        sizeof(float),
                        1,
                        {0, 0},
                        {sizeof(float), 0},
                        1,
                        FLT_EPSILON,
                        gen_float,
                        combine_float,
                        equal_float,
                        show_float,
                        comp_float},
    {"double",
     MPI_DOUBLE,
     RC_CL_FLOAT,
     sizeof(double),
     1,
     {0, 0},
     {sizeof(double), 0},
     1,
     DBL_EPSILON,
     gen_double,
     combine_double,
     equal_double,
     show_double,
     comp_double},
    /* x87 extended: 10 significant bytes in 16 */
    {"ldouble",
     MPI_LONG_DOUBLE,
     RC_CL_FLOAT,
     sizeof(long double),
     1,
     {0, 0},
     {10, 0},
     1,
     LDBL_EPSILON,
     gen_ldouble,
     combine_ldouble,
     equal_ldouble,
     show_ldouble,
     comp_ldouble},
    {"fcomplex",
     MPI_C_FLOAT_COMPLEX,
     RC_CL_COMPLEX,
     2 * sizeof(float),
     1,
     {0, 0},
     {2 * sizeof(float), 0},
     2,
     FLT_EPSILON,
     gen_fcomplex,
     combine_fcomplex,
     equal_fcomplex,
     show_fcomplex,
     comp_fcomplex},
    {"dcomplex",
     MPI_C_DOUBLE_COMPLEX,
     RC_CL_COMPLEX,
     2 * sizeof(double),
     1,
     {0, 0},
     {2 * sizeof(double), 0},
     2,
     DBL_EPSILON,
     gen_dcomplex,
     combine_dcomplex,
     equal_dcomplex,
     show_dcomplex,
     comp_dcomplex},
    {"ldcomplex",
     MPI_C_LONG_DOUBLE_COMPLEX,
     RC_CL_COMPLEX,
     2 * sizeof(long double),
     2,
     {0, sizeof(long double)},
     {10, 10},
     2,
     LDBL_EPSILON,
     gen_ldcomplex,
     combine_ldcomplex,
     equal_ldcomplex,
     show_ldcomplex,
     comp_ldcomplex},
    {"bool",
     MPI_C_BOOL,
     RC_CL_BOOL,
     sizeof(bool),
     1,
     {0, 0},
     {sizeof(bool), 0},
     0,
     0,
     gen_bool,
     combine_bool,
     equal_bool,
     show_bool,
     NULL},
    {"byte", MPI_BYTE, RC_CL_BYTE, 1, 1, {0, 0}, {1, 0}, 0, 0, gen_byte, combine_byte, equal_byte, show_byte, NULL},
    PAIR_BASE(float_int, float, MPI_FLOAT_INT, sizeof(float)) PAIR_BASE(
        double_int, double, MPI_DOUBLE_INT, sizeof(double)) PAIR_BASE(long_int, long, MPI_LONG_INT, sizeof(long))
        PAIR_BASE(2int, int, MPI_2INT, sizeof(int)) PAIR_BASE(short_int, short, MPI_SHORT_INT, sizeof(short))
            PAIR_BASE(ldouble_int, long double, MPI_LONG_DOUBLE_INT, 10)
    /* user types: type created in rc_init */
    {"mat2i",
     MPI_DATATYPE_NULL,
     RC_CL_MAT,
     4 * sizeof(int),
     1,
     {0, 0},
     {4 * sizeof(int), 0},
     0,
     0,
     gen_mat2i,
     combine_mat2i,
     equal_mat2i,
     show_mat2i,
     NULL},
    {"mat2d",
     MPI_DATATYPE_NULL,
     RC_CL_MAT,
     4 * sizeof(double),
     1,
     {0, 0},
     {4 * sizeof(double), 0},
     0,
     0,
     gen_mat2d,
     combine_mat2d,
     equal_mat2d,
     show_mat2d,
     NULL},
};
#define NBASES ((int) (sizeof bases / sizeof bases[0]))

/* ------------------------------------------------------------------ */
/* Registry of layouts, for the user-defined functions (they get only the
 * datatype). Written before threads start; read-only afterwards. */

#define MAX_REGISTERED 256
static struct {
    MPI_Datatype type;
    size_t extent;
    int nunits;
    size_t off[RC_MAX_UNITS];
    const rc_base_t *base;
} registry[MAX_REGISTERED];
static int nregistered;
static long long user_fn_errors;

static void register_layout(const rc_layout_t *l)
{
    for (int i = 0; i < nregistered; ++i) {
        if (registry[i].type == l->type) return;
    }
    if (nregistered == MAX_REGISTERED) fail("too many layouts");
    registry[nregistered].type = l->type;
    registry[nregistered].extent = l->extent;
    registry[nregistered].nunits = l->nunits;
    memcpy(registry[nregistered].off, l->off, sizeof l->off);
    registry[nregistered].base = l->base;
    ++nregistered;
}

static void unregister_layout(MPI_Datatype type)
{
    for (int i = 0; i < nregistered; ++i) {
        if (registry[i].type == type) {
            registry[i] = registry[--nregistered];
            return;
        }
    }
}

long long rc_user_fn_errors(void)
{
    return user_fn_errors;
}

/* MPI's user function contract: inout[i] = in[i] op inout[i], where in holds
 * the lower ranks' partial result. */
static void user_fn(void *in, void *inout, int *len, MPI_Datatype *dt, int code)
{
    int i;
    for (i = 0; i < nregistered && registry[i].type != *dt; ++i) {
    }
    if (i == nregistered) {
        if (user_fn_errors++ < 3)
            fprintf(stderr, "user-defined op (%s) called with a datatype the program never passed\n",
                    code == RC_MATMUL ? "matmul" : "modsum");
        return;
    }
    for (int e = 0; e < *len; ++e) {
        for (int u = 0; u < registry[i].nunits; ++u) {
            size_t at = (size_t) e * registry[i].extent + registry[i].off[u];
            char *a = (char *) in + at, *b = (char *) inout + at;
            if (code == RC_MODSUM) {
                unsigned *x = (unsigned *) a, *y = (unsigned *) b;
                *y = (unsigned) (((uint64_t) *x + *y) % 65521);
            } else if (registry[i].base == &bases[NBASES - 2]) {
                int t[4];
                memcpy(t, a, sizeof t);
                mul_mat2i(t, (const int *) b);
                memcpy(b, t, sizeof t);
            } else {
                double t[4];
                memcpy(t, a, sizeof t);
                mul_mat2d(t, (const double *) b);
                memcpy(b, t, sizeof t);
            }
        }
    }
}
static void matmul_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    user_fn(in, inout, len, dt, RC_MATMUL);
}
static void modsum_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    user_fn(in, inout, len, dt, RC_MODSUM);
}

static rc_op_t ops[] = {
    {"max", RC_MAX, 0, 1, MPI_MAX},           {"min", RC_MIN, 0, 1, MPI_MIN},
    {"sum", RC_SUM, 0, 1, MPI_SUM},           {"prod", RC_PROD, 0, 1, MPI_PROD},
    {"land", RC_LAND, 0, 1, MPI_LAND},        {"lor", RC_LOR, 0, 1, MPI_LOR},
    {"lxor", RC_LXOR, 0, 1, MPI_LXOR},        {"band", RC_BAND, 0, 1, MPI_BAND},
    {"bor", RC_BOR, 0, 1, MPI_BOR},           {"bxor", RC_BXOR, 0, 1, MPI_BXOR},
    {"maxloc", RC_MAXLOC, 0, 1, MPI_MAXLOC},  {"minloc", RC_MINLOC, 0, 1, MPI_MINLOC},
    {"matmul", RC_MATMUL, 1, 0, MPI_OP_NULL}, /* non-commutative */
    {"modsum", RC_MODSUM, 1, 1, MPI_OP_NULL}, /* commutative */
};
#define NOPS_ ((int) (sizeof ops / sizeof ops[0]))

static int initialized;
static rc_layout_t mat_layouts[2];

void rc_init(void)
{
    if (initialized) return;
    initialized = 1;
    MPI_Op_create(matmul_fn, 0, &ops[NOPS_ - 2].op);
    MPI_Op_create(modsum_fn, 1, &ops[NOPS_ - 1].op);
    MPI_Type_contiguous(4, MPI_INT, &bases[NBASES - 2].type);
    MPI_Type_commit(&bases[NBASES - 2].type);
    MPI_Type_contiguous(4, MPI_DOUBLE, &bases[NBASES - 1].type);
    MPI_Type_commit(&bases[NBASES - 1].type);
    for (int i = 0; i < NBASES; ++i) {
        MPI_Aint lb, extent;
        MPI_Type_get_extent(bases[i].type, &lb, &extent);
        if (lb != 0 || (size_t) extent != bases[i].size)
            fail("type %s: MPI extent %ld (lb %ld), C size %zu", bases[i].name, (long) extent, (long) lb,
                 bases[i].size);
    }
    /* the user functions also get the plain bases */
    for (int i = 0; i < 2; ++i) rc_layout_create(i ? "mat2d" : "mat2i", &mat_layouts[i]);
    rc_layout_t u;
    rc_layout_create("unsigned", &u);
}

void rc_finalize(void)
{
    if (!initialized) return;
    MPI_Op_free(&ops[NOPS_ - 2].op);
    MPI_Op_free(&ops[NOPS_ - 1].op);
    MPI_Type_free(&bases[NBASES - 2].type);
    MPI_Type_free(&bases[NBASES - 1].type);
    initialized = 0;
}

const rc_op_t *rc_find_op(const char *name)
{
    for (int i = 0; i < NOPS_; ++i) {
        if (!strcmp(ops[i].name, name)) return &ops[i];
    }
    return NULL;
}

const rc_base_t *rc_find_base(const char *name)
{
    for (int i = 0; i < NBASES; ++i) {
        if (!strcmp(bases[i].name, name)) return &bases[i];
    }
    return NULL;
}

int rc_all_ops(const char **names, int max)
{
    int n = 0;
    for (int i = 0; i < NOPS_ && n < max; ++i) names[n++] = ops[i].name;
    return n;
}

int rc_all_bases(const char **names, int max)
{
    int n = 0;
    for (int i = 0; i < NBASES && n < max; ++i) names[n++] = bases[i].name;
    return n;
}

static int base_dense(const rc_base_t *b)
{
    size_t s = 0;
    for (int i = 0; i < b->nsig; ++i) s += b->sig_len[i];
    return b->cls != RC_CL_PAIR && s == b->size; /* long double has padding but is predefined */
}

int rc_layout_create(const char *name, rc_layout_t *l)
{
    const char *colon = strchr(name, ':');
    char shape[32] = "";
    memset(l, 0, sizeof *l);
    snprintf(l->name, sizeof l->name, "%s", name);
    if (colon) {
        snprintf(shape, sizeof shape, "%.*s", (int) (colon - name), name);
        l->base = rc_find_base(colon + 1);
    } else {
        l->base = rc_find_base(name);
    }
    if (!l->base) return -1;
    size_t u = l->base->size;
    MPI_Datatype b = l->base->type, t;
    if (!colon) {
        l->type = b;
        l->nunits = 1;
        l->extent = u;
        l->contiguous = base_dense(l->base) || l->base->cls == RC_CL_FLOAT || l->base->cls == RC_CL_COMPLEX;
    } else if (!strcmp(shape, "contig")) {
        MPI_Type_contiguous(3, b, &l->type);
        l->nunits = 3;
        l->extent = 3 * u;
        l->contiguous = base_dense(l->base);
    } else if (!strcmp(shape, "dup")) {
        MPI_Type_dup(b, &l->type);
        l->nunits = 1;
        l->extent = u;
        l->contiguous = base_dense(l->base);
    } else if (!strcmp(shape, "vector")) { /* 2 blocks of 3, stride 5 */
        MPI_Type_vector(2, 3, 5, b, &l->type);
        l->nunits = 6;
        l->extent = 8 * u;
    } else if (!strcmp(shape, "indexed")) { /* blocks 2@0, 1@3, 2@6 */
        int lens[3] = {2, 1, 2}, disps[3] = {0, 3, 6};
        MPI_Type_indexed(3, lens, disps, b, &l->type);
        l->nunits = 5;
        l->extent = 8 * u;
    } else if (!strcmp(shape, "resized")) { /* 3 units, extent 4 (a hole at the end) */
        MPI_Type_contiguous(3, b, &t);
        MPI_Type_create_resized(t, 0, (MPI_Aint) (4 * u), &l->type);
        MPI_Type_free(&t);
        l->nunits = 3;
        l->extent = 4 * u;
        l->tail_hole_only = base_dense(l->base);
    } else {
        return -1;
    }
    static const size_t units[][RC_MAX_UNITS] = {{0, 1, 2}, {0, 1, 2, 5, 6, 7}, {0, 1, 3, 6, 7}};
    const size_t *which = !strcmp(shape, "vector") ? units[1] : !strcmp(shape, "indexed") ? units[2] : units[0];
    for (int i = 0; i < l->nunits; ++i) l->off[i] = which[i] * u;
    if (colon) {
        l->derived = 1;
        MPI_Type_commit(&l->type);
    }
    MPI_Aint lb, extent;
    int size;
    MPI_Type_get_extent(l->type, &lb, &extent);
    MPI_Type_size(l->type, &size);
    if (lb != 0 || (size_t) extent != l->extent)
        fail("layout %s: extent %ld, expected %zu", name, (long) extent, l->extent);
    l->size = (size_t) size;
    register_layout(l);
    return 0;
}

void rc_layout_free(rc_layout_t *l)
{
    if (l->derived) {
        unregister_layout(l->type);
        MPI_Type_free(&l->type);
    }
}

int rc_valid(const rc_op_t *op, const rc_layout_t *l)
{
    int c = l->base->cls;
    switch (op->code) {
    case RC_MAX:
    case RC_MIN: return c == RC_CL_INT || c == RC_CL_UINT || c == RC_CL_FLOAT;
    case RC_SUM:
    case RC_PROD: return c == RC_CL_INT || c == RC_CL_UINT || c == RC_CL_FLOAT || c == RC_CL_COMPLEX;
    case RC_LAND:
    case RC_LOR:
    case RC_LXOR: return c == RC_CL_INT || c == RC_CL_UINT || c == RC_CL_BOOL;
    case RC_BAND:
    case RC_BOR:
    case RC_BXOR: return c == RC_CL_INT || c == RC_CL_UINT || c == RC_CL_BYTE;
    case RC_MAXLOC:
    case RC_MINLOC: return c == RC_CL_PAIR;
    case RC_MATMUL: return c == RC_CL_MAT;
    case RC_MODSUM: return !strcmp(l->base->name, "unsigned");
    }
    return 0;
}

int rc_spec_fallback(const rc_op_t *op, const rc_layout_t *l, int count)
{
    if (op->user && l->derived && !l->contiguous && !(l->tail_hole_only && count == 1)) return 1;
    if (l->base->cls == RC_CL_PAIR) {
        /* adapt2 combines pairs (and derived types of them) itself when the
         * pair has no padding (its packed bytes are its memory); pairs with
         * padding fall back, as adapt2 would write the receive buffer's padding */
        size_t packed = l->base->sig_len[0] + (l->base->nsig > 1 ? l->base->sig_len[1] : 0);
        return packed != l->base->size;
    }
    return 0;
}

void rc_fill(const rc_layout_t *l, const rc_op_t *op, void *buf, int count, int rank, int nranks, uint64_t seed,
             int random)
{
    memset(buf, RC_POISON, (size_t) count * l->extent);
    uint64_t idx = 0;
    for (int e = 0; e < count; ++e) {
        for (int u = 0; u < l->nunits; ++u, ++idx) {
            l->base->gen((char *) buf + (size_t) e * l->extent + l->off[u], op->code, rank, nranks, idx, seed, random);
        }
    }
}

void rc_expected(const rc_layout_t *l, const rc_op_t *op, void *buf, int count, int nranks, uint64_t seed)
{
    unsigned char x[64];
    /* acc = v0, then acc = acc op v_r for r = 1, 2, ...: left to right in
     * rank order, one rank at a time over all units */
    rc_fill(l, op, buf, count, 0, nranks, seed, 0);
    for (int r = 1; r < nranks; ++r) {
        uint64_t idx = 0;
        for (int e = 0; e < count; ++e) {
            for (int u = 0; u < l->nunits; ++u, ++idx) {
                l->base->gen(x, op->code, r, nranks, idx, seed, 0);
                l->base->combine((char *) buf + (size_t) e * l->extent + l->off[u], x, op->code);
            }
        }
    }
}

/* Holes: bytes of an element outside every unit. */
long long rc_check_holes(const rc_layout_t *l, const void *gotp, int count, const char *what)
{
    const unsigned char *got = gotp;
    long long errors = 0;
    unsigned char in_unit[8 * RC_MAX_UNITS * 64];
    if (l->extent > sizeof in_unit) fail("element too large");
    memset(in_unit, 0, l->extent);
    int holes = 0;
    for (int u = 0; u < l->nunits; ++u) memset(in_unit + l->off[u], 1, l->base->size);
    for (size_t b = 0; b < l->extent; ++b) holes += !in_unit[b];
    if (!holes) return 0;
    for (int e = 0; e < count; ++e) {
        for (size_t b = 0; b < l->extent; ++b) {
            if (!in_unit[b] && got[(size_t) e * l->extent + b] != RC_POISON) {
                if (errors++ < 2 && rc_may_print())
                    fprintf(stderr, "%s: element %d: hole byte %zu overwritten (0x%02x)\n", what, e, b,
                            got[(size_t) e * l->extent + b]);
            }
        }
    }
    return errors;
}

long long rc_compare(const rc_layout_t *l, const void *got, const void *want, int count, const char *what)
{
    long long errors = 0;
    char s1[160], s2[160];
    for (int e = 0; e < count; ++e) {
        for (int u = 0; u < l->nunits; ++u) {
            size_t at = (size_t) e * l->extent + l->off[u];
            const char *g = (const char *) got + at, *w = (const char *) want + at;
            if (!l->base->equal(g, w)) {
                if (errors++ < 3 && rc_may_print()) {
                    l->base->show(s1, sizeof s1, g);
                    l->base->show(s2, sizeof s2, w);
                    fprintf(stderr, "%s: element %d unit %d is %s, expected %s\n", what, e, u, s1, s2);
                }
            }
        }
    }
    if (errors > 3 && rc_may_print()) fprintf(stderr, "%s: %lld wrong units in all\n", what, errors);
    return errors + rc_check_holes(l, got, count, what);
}

long long rc_compare_approx(const rc_layout_t *l, const rc_op_t *op, const void *got, int count, int nranks,
                            uint64_t seed, const char *what)
{
    const rc_base_t *b = l->base;
    long long errors = 0;
    unsigned char x[64];
    if (!b->ncomp) fail("random values need a floating type, not %s", b->name);
    uint64_t idx = 0;
    for (int e = 0; e < count; ++e) {
        for (int u = 0; u < l->nunits; ++u, ++idx) {
            long double ref[2] = {0, 0}, mag[2] = {0, 0}, bound[2];
            if (op->code == RC_PROD) ref[0] = 1, mag[0] = 1;
            for (int r = 0; r < nranks; ++r) {
                b->gen(x, op->code, r, nranks, idx, seed, 1);
                long double re = b->comp(x, 0), im = b->ncomp == 2 ? b->comp(x, 1) : 0;
                if (op->code == RC_SUM) {
                    ref[0] += re;
                    ref[1] += im;
                    mag[0] += fabsl(re);
                    mag[1] += fabsl(im);
                } else {
                    long double r0 = ref[0] * re - ref[1] * im, r1 = ref[0] * im + ref[1] * re;
                    ref[0] = r0;
                    ref[1] = r1;
                    mag[0] *= sqrtl(re * re + im * im);
                }
            }
            if (op->code == RC_PROD) mag[1] = mag[0];
            const char *g = (const char *) got + (size_t) e * l->extent + l->off[u];
            for (int c = 0; c < b->ncomp; ++c) {
                bound[c] = 4 * (nranks + 1) * b->eps * mag[c] + LDBL_MIN;
                long double v = b->comp(g, c);
                if (!(fabsl(v - ref[c]) <= bound[c])) {
                    if (errors++ < 3 && rc_may_print())
                        fprintf(stderr, "%s: element %d unit %d component %d is %.21Lg, expected %.21Lg +- %.3Lg\n",
                                what, e, u, c, v, ref[c], bound[c]);
                }
            }
        }
    }
    return errors + rc_check_holes(l, got, count, what);
}

size_t rc_sig_bytes(const rc_layout_t *l, int count)
{
    size_t s = 0;
    for (int i = 0; i < l->base->nsig; ++i) s += l->base->sig_len[i];
    return s * (size_t) l->nunits * (size_t) count;
}

void rc_pack_sig(const rc_layout_t *l, const void *buf, int count, unsigned char *out)
{
    for (int e = 0; e < count; ++e) {
        for (int u = 0; u < l->nunits; ++u) {
            const char *p = (const char *) buf + (size_t) e * l->extent + l->off[u];
            for (int i = 0; i < l->base->nsig; ++i) {
                memcpy(out, p + l->base->sig_off[i], l->base->sig_len[i]);
                out += l->base->sig_len[i];
            }
        }
    }
}

MPI_User_function *rc_user_function(int code)
{
    return code == RC_MATMUL ? matmul_fn : modsum_fn;
}

void rc_call_prepare(rc_call_t *c)
{
    int rank, size;
    MPI_Comm_rank(c->comm, &rank);
    MPI_Comm_size(c->comm, &size);
    size_t bytes = (size_t) c->count * c->l->extent;
    int holds = c->all || rank == c->root;
    if (!c->mpi_op) c->mpi_op = c->op->op;
    if (!c->type) c->type = c->l->type;
    c->sbuf = malloc(bytes + 1);
    c->scopy = malloc(bytes + 1);
    c->rbuf = holds ? malloc(bytes + 1) : NULL; /* non-roots pass NULL */
    if (!c->sbuf || !c->scopy || (holds && !c->rbuf)) fail("out of memory (%zu bytes)", bytes);
    rc_fill(c->l, c->op, c->sbuf, c->count, rank, size, c->seed, 0);
    memcpy(c->scopy, c->sbuf, bytes);
    if (holds) {
        if (c->inplace)
            memcpy(c->rbuf, c->sbuf, bytes);
        else
            memset(c->rbuf, RC_POISON, bytes);
    }
}

void rc_call_start(rc_call_t *c, int nonblocking)
{
    int rank, rc;
    MPI_Comm_rank(c->comm, &rank);
    int holds = c->all || rank == c->root;
    const void *send = c->inplace && holds ? MPI_IN_PLACE : c->sbuf;
    if (c->all) {
        rc = nonblocking ? MPI_Iallreduce(send, c->rbuf, c->count, c->type, c->mpi_op, c->comm, &c->req)
                         : MPI_Allreduce(send, c->rbuf, c->count, c->type, c->mpi_op, c->comm);
    } else {
        rc = nonblocking ? MPI_Ireduce(send, c->rbuf, c->count, c->type, c->mpi_op, c->root, c->comm, &c->req)
                         : MPI_Reduce(send, c->rbuf, c->count, c->type, c->mpi_op, c->root, c->comm);
    }
    if (rc != MPI_SUCCESS) fail("%s returned %d", c->all ? "allreduce" : "reduce", rc);
}

long long rc_call_check(rc_call_t *c, const char *what)
{
    int rank, size;
    long long e = 0;
    MPI_Comm_rank(c->comm, &rank);
    MPI_Comm_size(c->comm, &size);
    size_t bytes = (size_t) c->count * c->l->extent;
    if (c->rbuf) {
        unsigned char *want = malloc(bytes + 1);
        rc_expected(c->l, c->op, want, c->count, size, c->seed);
        e += rc_compare(c->l, c->rbuf, want, c->count, what);
        free(want);
    }
    if (!(c->inplace && c->rbuf) && memcmp(c->sbuf, c->scopy, bytes)) {
        if (rc_may_print()) fprintf(stderr, "%s: the send buffer was modified\n", what);
        ++e;
    }
    free(c->sbuf);
    free(c->scopy);
    free(c->rbuf);
    c->sbuf = c->scopy = c->rbuf = NULL;
    return e;
}
