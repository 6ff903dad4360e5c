/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/* The fuzzer's values, reference reductions and user-defined operations.
 *
 * Every rank can compute every rank's contribution (a hash of the call's key,
 * the contributor's rank and the unit's index in signature order), so each
 * rank computes the expected result itself, folding the ranks in order 0..p-1
 * as MPI defines it. Values are chosen so that the result does not depend on
 * the order in which an implementation combines commutative operands: small
 * integers for sums (exact in float and double), powers of two and small
 * factors for products, no zeros where MAX/MIN could meet +0 and -0. */
#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "mpi_check.h"

op_info_t ops[OP_COUNT] = {
    [OP_NONE] = {"none", 0, 0, 1, 1},
    [OP_SUM] = {"MPI_SUM", 0, 0, 1, 1},
    [OP_PROD] = {"MPI_PROD", 0, 0, 1, 1},
    [OP_MAX] = {"MPI_MAX", 0, 0, 1, 1},
    [OP_MIN] = {"MPI_MIN", 0, 0, 1, 1},
    [OP_LAND] = {"MPI_LAND", 0, 0, 1, 1},
    [OP_LOR] = {"MPI_LOR", 0, 0, 1, 1},
    [OP_LXOR] = {"MPI_LXOR", 0, 0, 1, 1},
    [OP_BAND] = {"MPI_BAND", 0, 0, 1, 1},
    [OP_BOR] = {"MPI_BOR", 0, 0, 1, 1},
    [OP_BXOR] = {"MPI_BXOR", 0, 0, 1, 1},
    [OP_MAXLOC] = {"MPI_MAXLOC", 0, 0, 1, 1},
    [OP_MINLOC] = {"MPI_MINLOC", 0, 0, 1, 1},
    [OP_MATMUL] = {"user matmul (2x2 unsigned, non-commutative)", 0, 1, 0, 4},
    [OP_AFFINE] = {"user affine (x->a*x+b composed, non-commutative)", 0, 1, 0, 2},
    [OP_MODSUM] = {"user modsum (unsigned sum mod 65521, commutative)", 0, 1, 1, 1},
    [OP_DSUM] = {"user dsum (double sum, commutative)", 0, 1, 1, 1},
};

long long user_fn_errors;

/* ---- scalar access in the prim's C type ---- */

static long long get_s(int p, const unsigned char *b)
{
    switch (p) {
    case P_CHAR: {
        signed char v;
        memcpy(&v, b, 1);
        return v;
    }
    case P_SHORT: {
        short v;
        memcpy(&v, b, sizeof v);
        return v;
    }
    case P_INT: {
        int v;
        memcpy(&v, b, sizeof v);
        return v;
    }
    default: {
        long long v;
        memcpy(&v, b, sizeof v);
        return v;
    }
    }
}

static unsigned long long get_u(int p, const unsigned char *b)
{
    if (p == P_UNSIGNED) {
        unsigned v;
        memcpy(&v, b, sizeof v);
        return v;
    }
    unsigned long long v;
    memcpy(&v, b, sizeof v);
    return v;
}

static double get_f(int p, const unsigned char *b)
{
    if (p == P_FLOAT) {
        float v;
        memcpy(&v, b, sizeof v);
        return v;
    }
    double v;
    memcpy(&v, b, sizeof v);
    return v;
}

/* Stores an integer value in any non-pair prim (truncated as C converts). */
static void put_i(int p, long long x, unsigned char *b)
{
    switch (p) {
    case P_CHAR: {
        signed char v = (signed char) x;
        memcpy(b, &v, 1);
        break;
    }
    case P_SHORT: {
        short v = (short) x;
        memcpy(b, &v, sizeof v);
        break;
    }
    case P_INT: {
        int v = (int) x;
        memcpy(b, &v, sizeof v);
        break;
    }
    case P_UNSIGNED: {
        unsigned v = (unsigned) x;
        memcpy(b, &v, sizeof v);
        break;
    }
    case P_LLONG:
    case P_ULLONG: memcpy(b, &x, sizeof x); break;
    case P_FLOAT: {
        float v = (float) x;
        memcpy(b, &v, sizeof v);
        break;
    }
    case P_DOUBLE: {
        double v = (double) x;
        memcpy(b, &v, sizeof v);
        break;
    }
    default: fail("put_i on %s", prims[p].name);
    }
}

static void put_f(int p, double x, unsigned char *b)
{
    if (p == P_FLOAT) {
        float v = (float) x;
        memcpy(b, &v, sizeof v);
    } else {
        memcpy(b, &x, sizeof x);
    }
}

/* Pairs: the value (as double: the fuzzer's values are small integers) and
 * the index, with their offsets in the C struct. */
static int pair_index_off(int p)
{
    return p == P_DOUBLE_INT || p == P_LONG_INT ? 8 : 4;
}

static double pair_value(int p, const unsigned char *b)
{
    switch (p) {
    case P_2INT: return (double) get_s(P_INT, b);
    case P_FLOAT_INT: return get_f(P_FLOAT, b);
    case P_DOUBLE_INT: return get_f(P_DOUBLE, b);
    case P_LONG_INT: {
        long v;
        memcpy(&v, b, sizeof v);
        return (double) v;
    }
    default: return (double) get_s(P_SHORT, b);
    }
}

static void pair_put(int p, long value, int index, unsigned char *b)
{
    switch (p) {
    case P_2INT: put_i(P_INT, value, b); break;
    case P_FLOAT_INT: put_f(P_FLOAT, (double) value, b); break;
    case P_DOUBLE_INT: put_f(P_DOUBLE, (double) value, b); break;
    case P_LONG_INT: memcpy(b, &value, sizeof value); break;
    default: put_i(P_SHORT, value, b);
    }
    memcpy(b + pair_index_off(p), &index, sizeof index);
}

static int pair_index(int p, const unsigned char *b)
{
    int i;
    memcpy(&i, b + pair_index_off(p), sizeof i);
    return i;
}

/* ---- values ---- */

void gen_value(uint64_t key, int rank, uint64_t u, int p, int op, unsigned char *out)
{
    uint64_t h = mix64(key ^ mix64(u * 0x9E3779B97F4A7C15ULL + (uint64_t) rank * 0xD1B54A32D192ED03ULL));
    uint64_t h2 = mix64(h), h3 = mix64(h2);
    int cls = prims[p].cls;
    if (cls == PC_PAIR) {
        /* few distinct values, so ties (decided by the lower index) are common */
        long value = op == OP_NONE ? (long) (int) h : (long) (h % 5);
        pair_put(p, value, (int) (h2 % 1000), out);
        return;
    }
    switch (op) {
    case OP_NONE: /* broadcast: any bytes, finite floats */
        if (cls == PC_FLOAT)
            put_f(p, (double) (int32_t) h / 256.0, out);
        else
            memcpy(out, &h, (size_t) prims[p].size);
        break;
    case OP_SUM:
    case OP_DSUM:
        if (cls == PC_FLOAT)
            put_f(p, (double) ((long) (h % 2001) - 1000) * (op == OP_SUM ? 0.25 : 1), out);
        else
            put_i(p, cls == PC_UINT ? (long long) (h % 2001) : (long long) (h % 2001) - 1000, out);
        break;
    case OP_PROD: {
        /* |product| stays below 3^9 for ints (fits a short); floats: powers of two */
        static const int ints[8] = {1, -1, 2, -2, 1, 3, -1, 1};
        static const double reals[8] = {1, -1, 2, -2, 0.5, -0.5, 4, 1};
        int zero = h2 % 64 == 0;
        if (cls == PC_FLOAT)
            put_f(p, zero ? 0 : reals[h % 8], out);
        else
            put_i(p, zero ? 0 : cls == PC_UINT ? (long long) (1 + h % 3) : ints[h % 8], out);
        break;
    }
    case OP_MAX:
    case OP_MIN:
        if (cls == PC_FLOAT)
            put_f(p, (double) ((int32_t) h | 1) / 8.0, out); /* never zero */
        else
            memcpy(out, &h, (size_t) prims[p].size);
        break;
    case OP_LAND: put_i(p, h2 % 100 < 8 ? 0 : (long long) (h | 1), out); break;
    case OP_LOR: put_i(p, h2 % 100 < 10 ? (long long) (h | 1) : 0, out); break;
    case OP_LXOR: put_i(p, h2 % 2 ? (long long) (h | 1) : 0, out); break;
    case OP_BAND: {
        uint64_t v = h | h2 | h3;
        memcpy(out, &v, (size_t) prims[p].size);
        break;
    }
    case OP_BOR: {
        uint64_t v = h & h2 & h3;
        memcpy(out, &v, (size_t) prims[p].size);
        break;
    }
    case OP_BXOR:
    case OP_MATMUL:
    case OP_AFFINE: memcpy(out, &h, (size_t) prims[p].size); break;
    case OP_MODSUM: put_i(p, (long long) (h % 65521), out); break;
    default: fail("gen_value: op %d", op);
    }
}

/* ---- combining ---- */

/* acc = acc op x for a predefined op and one unit of prim p. */
static void combine_prim(int op, int p, unsigned char *acc, const unsigned char *x)
{
    int cls = prims[p].cls;
    if (cls == PC_PAIR) {
        double a = pair_value(p, acc), b = pair_value(p, x);
        int better = op == OP_MAXLOC ? b > a : b < a;
        int ia = pair_index(p, acc), ib = pair_index(p, x);
        if (better)
            memcpy(acc, x, (size_t) prims[p].extent);
        else if (a == b && ib < ia)
            memcpy(acc + pair_index_off(p), &ib, sizeof ib);
        return;
    }
    if (cls == PC_FLOAT) {
        double a = get_f(p, acc), b = get_f(p, x), r = 0;
        switch (op) {
        case OP_SUM: r = a + b; break;
        case OP_PROD: r = a * b; break;
        case OP_MAX: r = a > b ? a : b; break;
        case OP_MIN: r = a < b ? a : b; break;
        default: fail("combine: %s on %s", ops[op].name, prims[p].name);
        }
        put_f(p, r, acc);
        return;
    }
    /* integers: computed in 64 bits, stored truncated (two's complement) */
    int is_signed = cls == PC_SINT;
    long long sa = get_s(p, acc), sb = get_s(p, x);
    unsigned long long ua = is_signed ? (unsigned long long) sa : get_u(p, acc);
    unsigned long long ub = is_signed ? (unsigned long long) sb : get_u(p, x), r = 0;
    switch (op) {
    case OP_SUM: r = ua + ub; break;
    case OP_PROD: r = ua * ub; break;
    case OP_MAX: r = is_signed ? (sa > sb ? ua : ub) : (ua > ub ? ua : ub); break;
    case OP_MIN: r = is_signed ? (sa < sb ? ua : ub) : (ua < ub ? ua : ub); break;
    case OP_LAND: r = ua && ub; break;
    case OP_LOR: r = ua || ub; break;
    case OP_LXOR: r = !ua != !ub; break;
    case OP_BAND: r = ua & ub; break;
    case OP_BOR: r = ua | ub; break;
    case OP_BXOR: r = ua ^ ub; break;
    default: fail("combine: %s on %s", ops[op].name, prims[p].name);
    }
    put_i(p, (long long) r, acc);
}

/* The user operations on one operand (group units at pointers):
 * inout = in op inout, in being the left operand (MPI: lower ranks). */
static void user_combine(int op, unsigned char *const in[], unsigned char *const io[])
{
    switch (op) {
    case OP_MATMUL: {
        unsigned a[4], x[4], r[4];
        for (int k = 0; k < 4; ++k) memcpy(&a[k], in[k], 4), memcpy(&x[k], io[k], 4);
        r[0] = a[0] * x[0] + a[1] * x[2];
        r[1] = a[0] * x[1] + a[1] * x[3];
        r[2] = a[2] * x[0] + a[3] * x[2];
        r[3] = a[2] * x[1] + a[3] * x[3];
        for (int k = 0; k < 4; ++k) memcpy(io[k], &r[k], 4);
        break;
    }
    case OP_AFFINE: { /* (f o g)(x) = f(g(x)): (a_f a_g, a_f b_g + b_f) */
        unsigned long long f[2], g[2], r[2];
        for (int k = 0; k < 2; ++k) memcpy(&f[k], in[k], 8), memcpy(&g[k], io[k], 8);
        r[0] = f[0] * g[0];
        r[1] = f[0] * g[1] + f[1];
        for (int k = 0; k < 2; ++k) memcpy(io[k], &r[k], 8);
        break;
    }
    case OP_MODSUM: {
        unsigned a, b;
        memcpy(&a, in[0], 4);
        memcpy(&b, io[0], 4);
        b = (unsigned) (((unsigned long long) a + b) % 65521);
        memcpy(io[0], &b, 4);
        break;
    }
    case OP_DSUM: {
        double a, b;
        memcpy(&a, in[0], 8);
        memcpy(&b, io[0], 8);
        b += a;
        memcpy(io[0], &b, 8);
        break;
    }
    default: fail("user_combine %d", op);
    }
}

void expected_group(uint64_t key, int nranks, uint64_t u, const int *pg, int group, int op, unsigned char out[][16])
{
    unsigned char x[4][16];
    for (int k = 0; k < group; ++k) gen_value(key, 0, u + (uint64_t) k, pg[k], op, out[k]);
    for (int r = 1; r < nranks; ++r) {
        for (int k = 0; k < group; ++k) gen_value(key, r, u + (uint64_t) k, pg[k], op, x[k]);
        if (ops[op].user) {
            /* acc = acc op x: the accumulated lower ranks are the left operand */
            unsigned char *in[4], *io[4];
            for (int k = 0; k < group; ++k) {
                in[k] = out[k];
                io[k] = x[k];
            }
            user_combine(op, in, io);
            for (int k = 0; k < group; ++k) memcpy(out[k], x[k], 16);
        } else {
            combine_prim(op, pg[0], out[0], x[0]);
        }
    }
}

/* ---- the MPI user functions: they walk the datatype's typemap ---- */

static void user_apply(int op, void *in, void *inout, int *len, MPI_Datatype *dt)
{
    map_entry_t single = {0, 0};
    const map_entry_t *map = &single;
    int nmap = 1;
    long extent;
    const dtype_t *t = dtype_lookup(*dt);
    if (t) {
        map = t->map;
        nmap = t->nmap;
        extent = t->extent;
    } else if (*dt == MPI_UNSIGNED || *dt == MPI_DOUBLE) {
        extent = *dt == MPI_UNSIGNED ? 4 : 8;
    } else {
        if (user_fn_errors++ < 3)
            fprintf(stderr, "fuzz: %s called with a datatype the fuzzer did not make\n", ops[op].name);
        return;
    }
    int g = ops[op].group;
    if (nmap % g) {
        if (user_fn_errors++ < 3) fprintf(stderr, "fuzz: %s: %d units per element\n", ops[op].name, nmap);
        return;
    }
    for (long i = 0; i < *len; ++i) {
        for (int j = 0; j < nmap; j += g) {
            unsigned char *pi[4], *po[4];
            for (int k = 0; k < g; ++k) {
                pi[k] = (unsigned char *) in + i * extent + map[j + k].off;
                po[k] = (unsigned char *) inout + i * extent + map[j + k].off;
            }
            user_combine(op, pi, po);
        }
    }
}

static void fn_matmul(void *in, void *io, int *len, MPI_Datatype *dt)
{
    user_apply(OP_MATMUL, in, io, len, dt);
}
static void fn_affine(void *in, void *io, int *len, MPI_Datatype *dt)
{
    user_apply(OP_AFFINE, in, io, len, dt);
}
static void fn_modsum(void *in, void *io, int *len, MPI_Datatype *dt)
{
    user_apply(OP_MODSUM, in, io, len, dt);
}
static void fn_dsum(void *in, void *io, int *len, MPI_Datatype *dt)
{
    user_apply(OP_DSUM, in, io, len, dt);
}

void ops_init(void)
{
    MPI_Op predefined[] = {MPI_OP_NULL, MPI_SUM,  MPI_PROD, MPI_MAX,  MPI_MIN,    MPI_LAND,  MPI_LOR,
                           MPI_LXOR,    MPI_BAND, MPI_BOR,  MPI_BXOR, MPI_MAXLOC, MPI_MINLOC};
    for (int o = 0; o <= OP_MINLOC; ++o) ops[o].op = predefined[o];
    MPI_Op_create(fn_matmul, 0, &ops[OP_MATMUL].op);
    MPI_Op_create(fn_affine, 0, &ops[OP_AFFINE].op);
    MPI_Op_create(fn_modsum, 1, &ops[OP_MODSUM].op);
    MPI_Op_create(fn_dsum, 1, &ops[OP_DSUM].op);
}

void ops_finalize(void)
{
    for (int o = OP_MATMUL; o < OP_COUNT; ++o) MPI_Op_free(&ops[o].op);
}

int op_allows(int op, int p)
{
    int cls = prims[p].cls;
    switch (op) {
    case OP_SUM:
    case OP_PROD:
    case OP_MAX:
    case OP_MIN: return cls == PC_SINT || cls == PC_UINT || cls == PC_FLOAT;
    case OP_LAND:
    case OP_LOR:
    case OP_LXOR:
    case OP_BAND:
    case OP_BOR:
    case OP_BXOR: return cls == PC_SINT || cls == PC_UINT;
    case OP_MAXLOC:
    case OP_MINLOC: return cls == PC_PAIR;
    default: return 0;
    }
}

void op_unit(int op, int p, unitsig_t *unit)
{
    unit->n = ops[op].group;
    int q = op == OP_MATMUL || op == OP_MODSUM ? P_UNSIGNED : op == OP_AFFINE ? P_ULLONG : op == OP_DSUM ? P_DOUBLE : p;
    for (int k = 0; k < unit->n; ++k) unit->p[k] = q;
}

int prim_equal(int p, const unsigned char *a, const unsigned char *b)
{
    for (int s = 0; s < prims[p].nsig; ++s) {
        if (memcmp(a + prims[p].sig_off[s], b + prims[p].sig_off[s], (size_t) prims[p].sig_len[s])) return 0;
    }
    return 1;
}

void prim_show(int p, const unsigned char *a, char *out, size_t n)
{
    switch (prims[p].cls) {
    case PC_CHAR: snprintf(out, n, "%d", (int) get_s(p, a)); break;
    case PC_SINT: snprintf(out, n, "%lld", get_s(p, a)); break;
    case PC_UINT: snprintf(out, n, "%llu", get_u(p, a)); break;
    case PC_FLOAT: snprintf(out, n, "%.17g", get_f(p, a)); break;
    default: snprintf(out, n, "(%g, %d)", pair_value(p, a), pair_index(p, a));
    }
}
