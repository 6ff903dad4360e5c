/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/* The fuzzer's datatype generator and buffer checks.
 *
 * Every generated datatype is built together with its typemap: the list of
 * (offset, predefined type) of one element, in typemap order. Constructors
 * are applied bottom-up; each node's lb and extent are taken from MPI (Open
 * MPI pads struct extents to alignment), and its typemap is computed from its
 * children's typemaps and extents. Each node is checked against MPI's true
 * extent and size, so a wrong model fails at once instead of producing false
 * mismatches. From the typemap the fuzzer fills every unit and knows every
 * hole of a buffer. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "mpi_check.h"

/* ---- random numbers ---- */

uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

rng_t rng_make(uint64_t a, uint64_t b, uint64_t c)
{
    rng_t r = {mix64(mix64(mix64(a) ^ b) ^ (c * 0x632be59bd9b4e019ULL))};
    return r;
}

uint64_t rng_next(rng_t *r)
{
    r->s += 0x9e3779b97f4a7c15ULL;
    uint64_t z = r->s;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint64_t rng_below(rng_t *r, uint64_t n)
{
    return n ? rng_next(r) % n : 0;
}
long rng_range(rng_t *r, long lo, long hi)
{
    return lo + (long) rng_below(r, (uint64_t) (hi - lo + 1));
}
int rng_chance(rng_t *r, int percent)
{
    return (int) rng_below(r, 100) < percent;
}

void textf(char *out, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, n, fmt, ap);
    va_end(ap);
}

/* ---- predefined types ---- */

struct short_int {
    short v;
    int i;
};
struct double_int {
    double v;
    int i;
};
struct long_int {
    long v;
    int i;
};

prim_info_t prims[P_COUNT] = {
    [P_CHAR] = {"char", 0, PC_CHAR, 1, 1, 1, 1, {0}, {1}},
    [P_SHORT] = {"short", 0, PC_SINT, 2, 2, 2, 1, {0}, {2}},
    [P_INT] = {"int", 0, PC_SINT, 4, 4, 4, 1, {0}, {4}},
    [P_UNSIGNED] = {"unsigned", 0, PC_UINT, 4, 4, 4, 1, {0}, {4}},
    [P_LLONG] = {"long long", 0, PC_SINT, 8, 8, 8, 1, {0}, {8}},
    [P_ULLONG] = {"unsigned long long", 0, PC_UINT, 8, 8, 8, 1, {0}, {8}},
    [P_FLOAT] = {"float", 0, PC_FLOAT, 4, 4, 4, 1, {0}, {4}},
    [P_DOUBLE] = {"double", 0, PC_FLOAT, 8, 8, 8, 1, {0}, {8}},
    [P_2INT] = {"MPI_2INT", 0, PC_PAIR, 8, 8, 8, 1, {0}, {8}},
    [P_FLOAT_INT] = {"MPI_FLOAT_INT", 0, PC_PAIR, 8, 8, 8, 1, {0}, {8}},
    [P_DOUBLE_INT] = {"MPI_DOUBLE_INT", 0, PC_PAIR, sizeof(struct double_int), 12, 12, 1, {0}, {12}},
    [P_LONG_INT] = {"MPI_LONG_INT", 0, PC_PAIR, sizeof(struct long_int), 12, 12, 1, {0}, {12}},
    [P_SHORT_INT] = {"MPI_SHORT_INT", 0, PC_PAIR, sizeof(struct short_int), 6, 8, 2, {0, 4}, {2, 4}},
};

void prims_init(void)
{
    MPI_Datatype types[P_COUNT] = {
        MPI_CHAR,   MPI_SHORT, MPI_INT,       MPI_UNSIGNED,   MPI_LONG_LONG, MPI_UNSIGNED_LONG_LONG, MPI_FLOAT,
        MPI_DOUBLE, MPI_2INT,  MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT,  MPI_SHORT_INT};
    for (int p = 0; p < P_COUNT; ++p) {
        MPI_Aint lb, extent, tlb, textent;
        int size;
        prims[p].type = types[p];
        MPI_Type_get_extent(types[p], &lb, &extent);
        MPI_Type_get_true_extent(types[p], &tlb, &textent);
        MPI_Type_size(types[p], &size);
        /* the value generators write C structs: MPI must agree on the layout */
        if (lb != 0 || extent != prims[p].extent || size != prims[p].size || tlb != 0 || textent != prims[p].tub)
            fail(
                "%s: MPI says lb %ld extent %ld size %d true extent %ld, the fuzzer assumes "
                "extent %d size %d true extent %d",
                prims[p].name, (long) lb, (long) extent, size, (long) textent, prims[p].extent, prims[p].size,
                prims[p].tub);
    }
}

void sig_describe(const unitsig_t *s, char *out, size_t n)
{
    size_t at = 0;
    out[0] = 0;
    for (int i = 0; i < s->n && at < n; ++i) {
        int run = 1;
        while (i + run < s->n && s->p[i + run] == s->p[i]) ++run;
        at += (size_t) snprintf(out + at, n - at, "%s%s%d x %s", i ? ", " : "{", "", run, prims[s->p[i]].name);
        i += run - 1;
    }
    if (at < n) snprintf(out + at, n - at, "}");
}

size_t sig_bytes(const unitsig_t *s)
{
    size_t b = 0;
    for (int i = 0; i < s->n; ++i) b += (size_t) prims[s->p[i]].size;
    return b;
}

/* ---- registry: user op functions receive the datatype handle and must know
 * its typemap ---- */

#define REGISTRY_MAX 1024
static const dtype_t *registry[REGISTRY_MAX];

static void registry_add(const dtype_t *t)
{
    for (int i = 0; i < REGISTRY_MAX; ++i) {
        if (!registry[i]) {
            registry[i] = t;
            return;
        }
    }
    fail("fuzz: datatype registry full");
}

static void registry_remove(const dtype_t *t)
{
    for (int i = 0; i < REGISTRY_MAX; ++i) {
        if (registry[i] == t) registry[i] = NULL;
    }
}

const dtype_t *dtype_lookup(MPI_Datatype h)
{
    for (int i = 0; i < REGISTRY_MAX; ++i) {
        if (registry[i] && registry[i]->handle == h) return registry[i];
    }
    return NULL;
}

/* ---- building one node ---- */

/* One copy of a child type in the parent's typemap, at a byte displacement. */
typedef struct copy {
    long disp;
    const dtype_t *child;
} copy_t;

static int cmp_entry(const void *a, const void *b)
{
    long x = ((const map_entry_t *) a)->off, y = ((const map_entry_t *) b)->off;
    return x < y ? -1 : x > y;
}

/* Hole runs of one element's cell [tlb, tlb + extent): the bytes of the cell
 * that no unit's significant bytes cover (the padding inside a pair type
 * included: MPI's typemap of MPI_DOUBLE_INT does not contain it). */
static void compute_holes(dtype_t *t)
{
    /* covered: 1 for significant bytes, 2 for padding inside a pair type */
    unsigned char *covered = calloc((size_t) t->extent + 1, 1);
    for (int i = 0; i < t->nmap; ++i) {
        const prim_info_t *p = &prims[t->map[i].prim];
        unsigned char *at = covered + (t->map[i].off - t->tlb);
        for (int s = 0; s < p->nsig; ++s) memset(at + p->sig_off[s], 1, (size_t) p->sig_len[s]);
    }
    for (int i = 0; i < t->nmap; ++i) {
        const prim_info_t *p = &prims[t->map[i].prim];
        long from = t->map[i].off - t->tlb;
        for (long b = from; p->cls == PC_PAIR && b < from + p->extent && b < t->extent; ++b)
            if (!covered[b]) covered[b] = 2;
    }
    size_t cap = (size_t) t->extent / 2 + 2;
    t->hole_off = malloc(sizeof(long) * cap);
    t->hole_len = malloc(sizeof(long) * cap);
    t->hole_pad = malloc(sizeof(int) * cap);
    t->nholes = 0;
    for (long b = 0; b < t->extent;) {
        if (covered[b] == 1) {
            ++b;
            continue;
        }
        long e = b;
        while (e < t->extent && covered[e] == covered[b]) ++e;
        t->hole_off[t->nholes] = b;
        t->hole_len[t->nholes] = e - b;
        t->hole_pad[t->nholes++] = covered[b] == 2;
        b = e;
    }
    t->contiguous = t->nholes == 0;
    free(covered);
}

/* Completes t after MPI created nt from the copies: typemap, bounds, checks
 * against MPI. */
static void finish(dtype_t *t, MPI_Datatype nt, const copy_t *copies, int ncopies)
{
    MPI_Aint lb, extent, tlb, textent;
    int size;
    t->type = t->handle = nt;
    MPI_Type_get_extent(nt, &lb, &extent);
    MPI_Type_get_true_extent(nt, &tlb, &textent);
    MPI_Type_size(nt, &size);
    t->lb = lb;
    t->extent = extent;
    t->nmap = 0;
    t->m = 0;
    t->size = 0;
    for (int c = 0; c < ncopies; ++c) {
        const dtype_t *ch = copies[c].child;
        if (t->nmap + ch->nmap > MAP_MAX) fail("fuzz: generator exceeded %d map entries", MAP_MAX);
        for (int i = 0; i < ch->nmap; ++i) {
            t->map[t->nmap].off = copies[c].disp + ch->map[i].off;
            t->map[t->nmap++].prim = ch->map[i].prim;
        }
        t->m += ch->m;
        t->size += ch->size;
    }
    t->monotonic = 1;
    for (int i = 1; i < t->nmap; ++i) t->monotonic &= t->map[i].off > t->map[i - 1].off;
    t->tlb = t->map[0].off;
    t->tub = t->map[0].off + prims[t->map[0].prim].tub;
    for (int i = 1; i < t->nmap; ++i) {
        long end = t->map[i].off + prims[t->map[i].prim].tub;
        if (t->map[i].off < t->tlb) t->tlb = t->map[i].off;
        if (end > t->tub) t->tub = end;
    }
    /* Open MPI 4.1's CONTIGUOUS flag, which adapt2 goes by (opal_datatype_add):
     * each copy flag-contiguous, its data starting where the data so far ends,
     * the first one at its own displacement: a child whose data starts past
     * its origin clears the flag even where the result is dense. */
    t->ompi_contig = 1;
    for (long c = 0, end = 0; c < ncopies; ++c) {
        const dtype_t *ch = copies[c].child;
        if (!ch->ompi_contig || copies[c].disp + ch->tlb != (c == 0 ? copies[c].disp : end)) t->ompi_contig = 0;
        if (c == 0 || copies[c].disp + ch->tub > end) end = copies[c].disp + ch->tub;
    }
    if (t->tlb != tlb || t->tub != tlb + textent || t->size != size)
        fail(
            "fuzz: datatype model disagrees with MPI for %s: model true [%ld, %ld) size %ld, "
            "MPI true [%ld, %ld) size %d",
            t->desc, t->tlb, t->tub, t->size, (long) tlb, (long) (tlb + textent), size);
    /* A receive buffer must not overlap itself: units disjoint, and one
     * element's data fits in its extent (so consecutive elements are apart). */
    map_entry_t sorted[MAP_MAX];
    memcpy(sorted, t->map, sizeof(map_entry_t) * (size_t) t->nmap);
    qsort(sorted, (size_t) t->nmap, sizeof sorted[0], cmp_entry);
    for (int i = 1; i < t->nmap; ++i) {
        if (sorted[i].off < sorted[i - 1].off + prims[sorted[i - 1].prim].tub)
            fail("fuzz: generator made overlapping units in %s", t->desc);
    }
    if (t->extent <= 0) fail("fuzz: generator made extent %ld: %s", t->extent, t->desc);
    /* elements overlap (see cover_data) until the caller resizes */
    if (t->tub - t->tlb <= t->extent) compute_holes(t);
}

static dtype_t *node_new(void)
{
    dtype_t *t = calloc(1, sizeof *t);
    if (!t) fail("fuzz: out of memory");
    return t;
}

static dtype_t *make_prim(int p)
{
    dtype_t *t = node_new();
    copy_t self;
    dtype_t unit = {.nmap = 1, .m = 0, .size = prims[p].size, .tub = prims[p].tub, .ompi_contig = 1};
    unit.map[0].prim = p;
    self.disp = 0;
    self.child = &unit;
    textf(t->desc, sizeof t->desc, "%s", prims[p].name);
    finish(t, prims[p].type, &self, 1);
    t->m = 0; /* set by the caller: how many signature units this is */
    return t;
}

static int is_predefined(const dtype_t *t)
{
    for (int p = 0; p < P_COUNT; ++p) {
        if (t->handle == prims[p].type) return 1;
    }
    return 0;
}

void dtype_release(dtype_t *t)
{
    if (t->type != MPI_DATATYPE_NULL && !is_predefined(t)) MPI_Type_free(&t->type);
    t->type = MPI_DATATYPE_NULL;
}

void dtype_free(dtype_t *t)
{
    if (!t) return;
    dtype_release(t);
    registry_remove(t);
    free(t->hole_off);
    free(t->hole_len);
    free(t->hole_pad);
    free(t);
}

/* ---- the generator ---- */

#define MAXB 4 /* blocks of indexed and struct types */

/* A random divisor d of n with lo <= d <= hi (1 if none). */
static int pick_divisor(rng_t *r, int n, int lo, int hi)
{
    int cand[64], k = 0;
    for (int d = lo; d <= hi && d <= n && k < 64; ++d) {
        if (d > 0 && n % d == 0) cand[k++] = d;
    }
    return k ? cand[rng_below(r, (uint64_t) k)] : 1;
}

/* Splits a into nb >= 1 positive parts (random composition). */
static int split_parts(rng_t *r, int a, int maxb, int *parts)
{
    int nb = (int) rng_range(r, 1, a < maxb ? a : maxb);
    for (int b = 0; b < nb; ++b) parts[b] = 1;
    for (int rest = a - nb; rest > 0; --rest) parts[rng_below(r, (uint64_t) nb)]++;
    return nb;
}

/* A random order of nb blocks in memory: mostly the typemap order, sometimes
 * reversed or shuffled, so memory order and signature order differ. */
static void memory_order(rng_t *r, int nb, int *order)
{
    for (int b = 0; b < nb; ++b) order[b] = b;
    int how = (int) rng_below(r, 10);
    if (how == 0) {
        for (int b = 0; b < nb; ++b) order[b] = nb - 1 - b;
    } else if (how == 1) {
        for (int b = nb - 1; b > 0; --b) {
            int j = (int) rng_below(r, (uint64_t) b + 1), x = order[b];
            order[b] = order[j];
            order[j] = x;
        }
    }
}

static int append(char *s, size_t n, size_t *at, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int append(char *s, size_t n, size_t *at, const char *fmt, ...)
{
    va_list ap;
    if (*at >= n) return 0;
    va_start(ap, fmt);
    int w = vsnprintf(s + *at, n - *at, fmt, ap);
    va_end(ap);
    *at += w > 0 ? (size_t) w : 0;
    if (*at >= n) *at = n - 1;
    return w;
}

/* Exactly one signature unit: the predefined type itself, or a struct of the
 * unit's runs of equal types, placed at offsets with gaps, maybe in another
 * memory order and resized (e.g. struct {double; char; int} padded to 16). */
static dtype_t *gen_leaf(rng_t *r, const unitsig_t *u)
{
    if (u->n == 1) {
        dtype_t *t = make_prim(u->p[0]);
        t->m = 1;
        return t;
    }
    int prim[SIG_MAX], len[SIG_MAX], nb = 0;
    for (int i = 0; i < u->n; ++nb) {
        int run = 1;
        while (i + run < u->n && u->p[i + run] == u->p[i]) ++run;
        prim[nb] = u->p[i];
        len[nb] = run;
        i += run;
    }
    int order[SIG_MAX];
    memory_order(r, nb, order);
    int aligned = rng_chance(r, 70);
    MPI_Aint disp[SIG_MAX];
    long cursor = rng_chance(r, 80) ? 0 : rng_range(r, 1, 8);
    for (int k = 0; k < nb; ++k) {
        int b = order[k];
        long align = prims[prim[b]].extent > 8 ? 8 : prims[prim[b]].extent;
        if (aligned) cursor = (cursor + align - 1) / align * align;
        disp[b] = cursor;
        cursor += (long) len[b] * prims[prim[b]].extent + (rng_chance(r, 20) ? rng_range(r, 1, 7) : 0);
    }
    MPI_Datatype types[SIG_MAX], st;
    int blens[SIG_MAX];
    dtype_t *elem[SIG_MAX];
    copy_t copies[SIG_MAX * SIG_MAX] = {{0, NULL}};
    int nc = 0;
    dtype_t *t = node_new();
    size_t at = 0;
    append(t->desc, sizeof t->desc, &at, "struct{");
    for (int b = 0; b < nb; ++b) {
        elem[b] = make_prim(prim[b]);
        elem[b]->m = 0;
        types[b] = prims[prim[b]].type;
        blens[b] = len[b];
        for (int j = 0; j < len[b]; ++j) {
            copies[nc].disp = disp[b] + (long) j * prims[prim[b]].extent;
            copies[nc++].child = elem[b];
        }
        append(t->desc, sizeof t->desc, &at, "%s%d x %s@%ld", b ? ", " : "", len[b], prims[prim[b]].name,
               (long) disp[b]);
    }
    append(t->desc, sizeof t->desc, &at, "}");
    MPI_Type_create_struct(nb, blens, disp, types, &st);
    finish(t, st, copies, nc);
    t->m = 1;
    for (int b = 0; b < nb; ++b) dtype_free(elem[b]);
    if (rng_chance(r, 40)) {
        /* resized: a lower bound before the data and padding after it */
        long lead = rng_chance(r, 50) ? 0 : rng_range(r, 1, 8);
        long ext = t->extent + lead + rng_range(r, 0, 8);
        MPI_Datatype rt;
        MPI_Type_create_resized(st, t->lb - lead, ext, &rt);
        dtype_t *w = node_new();
        textf(w->desc, sizeof w->desc, "resized(lb %ld, extent %ld, %s)", t->lb - lead, ext, t->desc);
        copy_t c = {0, t};
        finish(w, rt, &c, 1);
        w->m = 1;
        dtype_free(t);
        t = w;
    }
    return t;
}

static dtype_t *gen(rng_t *r, const unitsig_t *u, int m, int depth, int maxd);

/* Bounds set by MPI_Type_create_resized are sticky: a struct with such a
 * child takes its lb and ub from the child's markers alone (MPI's rule for
 * explicit bounds), and a subarray's lb is 0 whatever its element's lb. So a
 * type's data may stick out of [lb, ub): consecutive elements may overlap,
 * and Open MPI 4.1's own components (tuned's allreduce with a user op)
 * corrupt the heap on such types. The fuzzer resizes them to cover their
 * data. */
static dtype_t *cover_data(dtype_t *t)
{
    if (t->tlb >= t->lb && t->tub <= t->lb + t->extent) return t;
    long lb = t->lb < t->tlb ? t->lb : t->tlb, ub = t->lb + t->extent > t->tub ? t->lb + t->extent : t->tub;
    MPI_Datatype nt;
    MPI_Type_create_resized(t->type, lb, ub - lb, &nt);
    dtype_t *w = node_new();
    textf(w->desc, sizeof w->desc, "resized(lb %ld, extent %ld, %s)", lb, ub - lb, t->desc);
    copy_t c = {0, t};
    finish(w, nt, &c, 1);
    w->m = t->m;
    dtype_free(t);
    return w;
}

/* One unit wrapped in a constructor that moves it or pads it. */
static dtype_t *gen_wrapped_unit(rng_t *r, const unitsig_t *u, int depth, int maxd)
{
    dtype_t *c = gen(r, u, 1, depth + 1, maxd), *t = node_new();
    MPI_Datatype nt;
    copy_t cp = {0, c};
    switch (rng_below(r, 4)) {
    case 0: { /* resized: leading and trailing holes */
        long lead = rng_range(r, 0, 16), ext = c->extent + lead + rng_range(r, 0, 24);
        MPI_Type_create_resized(c->type, c->lb - lead, ext, &nt);
        textf(t->desc, sizeof t->desc, "resized(lb %ld, extent %ld, %s)", c->lb - lead, ext, c->desc);
        break;
    }
    case 1: { /* struct of one block at a displacement: lb moves */
        int one = 1;
        MPI_Aint d = rng_range(r, 0, 24);
        MPI_Type_create_struct(1, &one, &d, &c->type, &nt);
        cp.disp = d;
        textf(t->desc, sizeof t->desc, "struct{1 x %s@%ld}", c->desc, (long) d);
        break;
    }
    case 2: { /* indexed, one block of one at a displacement */
        int one = 1, d = (int) rng_range(r, 1, 3);
        MPI_Type_indexed(1, &one, &d, c->type, &nt);
        cp.disp = d * c->extent;
        textf(t->desc, sizeof t->desc, "indexed([1@%d], %s)", d, c->desc);
        break;
    }
    default: { /* subarray picking one element of a short array */
        int size = (int) rng_range(r, 1, 4), sub = 1, start = (int) rng_range(r, 0, size - 1);
        MPI_Type_create_subarray(1, &size, &sub, &start, MPI_ORDER_C, c->type, &nt);
        cp.disp = start * c->extent;
        textf(t->desc, sizeof t->desc, "subarray(C, [%d], [1], [%d], %s)", size, start, c->desc);
        break;
    }
    }
    finish(t, nt, &cp, 1);
    dtype_free(c);
    return cover_data(t);
}

/* a copies of children of b units each: contiguous, vector, hvector,
 * indexed, indexed_block, struct (children of different layouts) or subarray. */
static dtype_t *gen_copies(rng_t *r, const unitsig_t *u, int a, int b, int depth, int maxd)
{
    dtype_t *t = node_new(), *kids[MAXB] = {0};
    copy_t copies[MAP_MAX] = {{0, NULL}};
    int nc = 0, nkids = 1;
    size_t at = 0;
    MPI_Datatype nt;
    kids[0] = depth >= maxd ? gen_leaf(r, u) : gen(r, u, b, depth + 1, maxd);
    const dtype_t *c = kids[0];
    const long E = c->extent;
    int shape = (int) rng_below(r, 7);
    switch (shape) {
    case 0:
        MPI_Type_contiguous(a, c->type, &nt);
        for (int i = 0; i < a; ++i) copies[nc++] = (copy_t){i * E, c};
        append(t->desc, sizeof t->desc, &at, "contig(%d, %s)", a, c->desc);
        break;
    case 1:
    case 2: { /* vector (stride in extents) or hvector (stride in bytes) */
        int bl = pick_divisor(r, a, 1, a), count = a / bl;
        long stride = shape == 1 ? bl + rng_range(r, 0, 3) : bl * E + rng_range(r, 0, 24);
        long step = shape == 1 ? stride * E : stride;
        if (shape == 1)
            MPI_Type_vector(count, bl, (int) stride, c->type, &nt);
        else
            MPI_Type_create_hvector(count, bl, stride, c->type, &nt);
        for (int i = 0; i < count; ++i)
            for (int j = 0; j < bl; ++j) copies[nc++] = (copy_t){i * step + j * E, c};
        append(t->desc, sizeof t->desc, &at, "%s(%d, %d, %ld, %s)", shape == 1 ? "vector" : "hvector", count, bl,
               stride, c->desc);
        break;
    }
    case 3:
    case 4: { /* indexed (own block lengths) or indexed_block (one length) */
        int parts[MAXB], nb, order[MAXB], disps[MAXB];
        if (shape == 3) {
            nb = split_parts(r, a, MAXB, parts);
        } else {
            nb = pick_divisor(r, a, 1, MAXB);
            for (int i = 0; i < nb; ++i) parts[i] = a / nb;
        }
        memory_order(r, nb, order);
        int cursor = (int) rng_range(r, 0, 2);
        for (int k = 0; k < nb; ++k) {
            disps[order[k]] = cursor;
            cursor += parts[order[k]] + (int) rng_range(r, 0, 2);
        }
        if (shape == 3)
            MPI_Type_indexed(nb, parts, disps, c->type, &nt);
        else
            MPI_Type_create_indexed_block(nb, parts[0], disps, c->type, &nt);
        append(t->desc, sizeof t->desc, &at, shape == 3 ? "indexed([" : "indexed_block(%d, [", parts[0]);
        for (int i = 0; i < nb; ++i) {
            for (int j = 0; j < parts[i]; ++j) copies[nc++] = (copy_t){(disps[i] + j) * E, c};
            if (shape == 3)
                append(t->desc, sizeof t->desc, &at, "%s%d@%d", i ? ", " : "", parts[i], disps[i]);
            else
                append(t->desc, sizeof t->desc, &at, "%s%d", i ? ", " : "", disps[i]);
        }
        append(t->desc, sizeof t->desc, &at, "], %s)", c->desc);
        break;
    }
    case 5: { /* struct: each block its own layout of the same signature */
        int parts[MAXB], order[MAXB], nb = split_parts(r, a, MAXB, parts);
        MPI_Aint disps[MAXB];
        MPI_Datatype types[MAXB];
        for (int i = 1; i < nb; ++i) kids[i] = depth >= maxd ? gen_leaf(r, u) : gen(r, u, b, depth + 1, maxd);
        nkids = nb;
        memory_order(r, nb, order);
        long cursor = rng_range(r, 0, 8);
        for (int k = 0; k < nb; ++k) {
            const dtype_t *ch = kids[order[k]];
            disps[order[k]] = cursor - ch->lb;
            cursor += parts[order[k]] * ch->extent + (rng_chance(r, 50) ? rng_range(r, 1, 12) : 0);
        }
        append(t->desc, sizeof t->desc, &at, "struct{");
        for (int i = 0; i < nb; ++i) {
            types[i] = kids[i]->type;
            for (int j = 0; j < parts[i]; ++j) copies[nc++] = (copy_t){disps[i] + j * kids[i]->extent, kids[i]};
            append(t->desc, sizeof t->desc, &at, "%s%d x %s@%ld", i ? ", " : "", parts[i], kids[i]->desc,
                   (long) disps[i]);
        }
        append(t->desc, sizeof t->desc, &at, "}");
        MPI_Type_create_struct(nb, parts, disps, types, &nt);
        break;
    }
    default: { /* subarray of up to 3 dimensions, C or Fortran order */
        int nd = (int) rng_range(r, 1, 3), sizes[3], subs[3], starts[3], left = a;
        int order = rng_chance(r, 50) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
        for (int d = 0; d < nd; ++d) {
            subs[d] = d == nd - 1 ? left : pick_divisor(r, left, 1, left);
            left /= subs[d];
            sizes[d] = subs[d] + (int) rng_range(r, 0, 2);
            starts[d] = (int) rng_range(r, 0, sizes[d] - subs[d]);
        }
        MPI_Type_create_subarray(nd, sizes, subs, starts, order, c->type, &nt);
        /* typemap order: the last index fastest in C order, the first in Fortran */
        int idx[3] = {0, 0, 0};
        for (int n = 0; n < a; ++n) {
            long lin = 0;
            for (int k = 0; k < nd; ++k) {
                int d = order == MPI_ORDER_C ? k : nd - 1 - k;
                lin = lin * sizes[d] + starts[d] + idx[d];
            }
            copies[nc++] = (copy_t){lin * E, c};
            for (int k = nd - 1; k >= 0; --k) { /* advance the fastest index first */
                int d = order == MPI_ORDER_C ? k : nd - 1 - k;
                if (++idx[d] < subs[d]) break;
                idx[d] = 0;
            }
        }
        append(t->desc, sizeof t->desc, &at, "subarray(%s, [", order == MPI_ORDER_C ? "C" : "F");
        for (int d = 0; d < nd; ++d) append(t->desc, sizeof t->desc, &at, "%s%d", d ? "," : "", sizes[d]);
        append(t->desc, sizeof t->desc, &at, "], [");
        for (int d = 0; d < nd; ++d) append(t->desc, sizeof t->desc, &at, "%s%d", d ? "," : "", subs[d]);
        append(t->desc, sizeof t->desc, &at, "], [");
        for (int d = 0; d < nd; ++d) append(t->desc, sizeof t->desc, &at, "%s%d", d ? "," : "", starts[d]);
        append(t->desc, sizeof t->desc, &at, "], %s)", c->desc);
        break;
    }
    }
    finish(t, nt, copies, nc);
    for (int i = 0; i < nkids; ++i) dtype_free(kids[i]);
    return cover_data(t);
}

static dtype_t *gen(rng_t *r, const unitsig_t *u, int m, int depth, int maxd)
{
    if (m == 1) {
        if (depth >= maxd || rng_chance(r, 55)) return gen_leaf(r, u);
        return gen_wrapped_unit(r, u, depth, maxd);
    }
    /* m = a copies of b units: deeper levels hold the rest */
    int a = depth >= maxd ? m : pick_divisor(r, m, 2, m);
    return gen_copies(r, u, a, m / a, depth, maxd);
}

/* A finished type for the caller: committed (unless predefined), its size
 * and extent in its description, kept in the registry. */
static dtype_t *publish(dtype_t *t)
{
    if (!is_predefined(t)) MPI_Type_commit(&t->type);
    t->handle = t->type;
    size_t at = strlen(t->desc);
    append(t->desc, sizeof t->desc, &at, " [extent %ld, size %ld%s]", t->extent, t->size,
           t->contiguous ? ", dense" : "");
    registry_add(t);
    return t;
}

dtype_t *dtype_generate(rng_t *r, const unitsig_t *unit, int m, int max_depth)
{
    if (m * unit->n > MAP_MAX) fail("fuzz: %d units of %d types exceed the map", m, unit->n);
    dtype_t *t = gen(r, unit, m, 0, max_depth);
    if (t->m != m) fail("fuzz: generator made %d units instead of %d: %s", t->m, m, t->desc);
    if (t->type != MPI_DATATYPE_NULL && t->handle != t->type) fail("fuzz: handle changed");
    return publish(t);
}

dtype_t *dtype_plain_vector(const unitsig_t *unit, int m, int stride)
{
    int n = m * unit->n, p = unit->p[0];
    MPI_Datatype nt;
    copy_t copies[MAP_MAX];
    dtype_t *elem = make_prim(p), *t = node_new();
    elem->m = 0;
    for (int i = 0; i < n; ++i) copies[i] = (copy_t){(long) stride * i * prims[p].extent, elem};
    MPI_Type_vector(n, 1, stride, prims[p].type, &nt);
    textf(t->desc, sizeof t->desc, "vector(%d, 1, %d, %s)", n, stride, prims[p].name);
    finish(t, nt, copies, n);
    t->m = m;
    dtype_free(elem);
    return publish(t);
}

/* ---- buffers ---- */

void region_alloc(region_t *g, const dtype_t *t, int count, unsigned char sentinel)
{
    size_t span = count > 0 ? (size_t) ((count - 1) * t->extent + t->tub - t->tlb) : 0;
    g->bytes = span + 2 * GUARD;
    g->mem = malloc(g->bytes);
    if (!g->mem) fail("fuzz: cannot allocate %zu bytes", g->bytes);
    memset(g->mem, sentinel, g->bytes);
    g->buf = g->mem + GUARD - (count > 0 ? t->tlb : 0);
}

void region_copy(region_t *dst, const region_t *src)
{
    dst->bytes = src->bytes;
    dst->mem = malloc(src->bytes);
    if (!dst->mem) fail("fuzz: cannot allocate %zu bytes", src->bytes);
    memcpy(dst->mem, src->mem, src->bytes);
    dst->buf = dst->mem + (src->buf - src->mem);
}

void region_free(region_t *g)
{
    free(g->mem);
    g->mem = g->buf = NULL;
}

/* Index of the first byte of p[0..n) that is not v, or n. */
static size_t first_not(const unsigned char *p, size_t n, unsigned char v)
{
    static unsigned char block[4096];
    static int filled = -1;
    if (filled != v) {
        memset(block, v, sizeof block);
        filled = v;
    }
    for (size_t at = 0; at < n;) {
        size_t k = n - at < sizeof block ? n - at : sizeof block;
        if (memcmp(p + at, block, k)) {
            for (size_t i = 0; i < k; ++i)
                if (p[at + i] != v) return at + i;
        }
        at += k;
    }
    return n;
}

static long long check_range(const region_t *g, long from, long to, unsigned char v, const char *what,
                             const char *where, int *budget)
{
    long lo = from < 0 ? 0 : from, hi = to > (long) g->bytes ? (long) g->bytes : to;
    long long bad = 0;
    while (lo < hi) {
        size_t i = first_not(g->mem + lo, (size_t) (hi - lo), v);
        if (i == (size_t) (hi - lo)) break;
        if ((*budget)-- > 0)
            fprintf(stderr, "  %s: byte %ld (buffer offset %ld, %s) was overwritten: 0x%02x, sentinel 0x%02x\n", what,
                    lo + (long) i, (long) (g->mem + lo + (long) i - g->buf), where, g->mem[lo + i], v);
        ++bad;
        lo += (long) i + 1;
    }
    return bad;
}

void reset_pair_padding(const dtype_t *t, int count, region_t *g, unsigned char v)
{
    for (long k = 0; k < count; ++k) {
        unsigned char *cell = g->buf + k * t->extent + t->tlb;
        for (int h = 0; h < t->nholes; ++h)
            if (t->hole_pad[h]) memset(cell + t->hole_off[h], v, (size_t) t->hole_len[h]);
    }
}

long long check_holes(const dtype_t *t, int count, const region_t *g, unsigned char v, const char *what, int *budget)
{
    long long bad = 0;
    long base = g->buf - g->mem; /* the buffer pointer as a region offset */
    if (count <= 0) return check_range(g, 0, (long) g->bytes, v, what, "empty message", budget);
    bad += check_range(g, 0, base + t->tlb, v, what, "before the first element", budget);
    for (long k = 0; k < count; ++k) {
        long cell = base + k * t->extent + t->tlb;
        for (int h = 0; h < t->nholes; ++h) {
            char where[96];
            if (t->hole_pad[h] && allow_pair_padding) continue;
            snprintf(where, sizeof where, "%s of element %ld",
                     t->hole_pad[h] ? "padding inside a MINLOC/MAXLOC pair" : "hole", k);
            bad +=
                check_range(g, cell + t->hole_off[h], cell + t->hole_off[h] + t->hole_len[h], v, what, where, budget);
        }
    }
    long end = base + (count - 1) * t->extent + t->tlb + t->extent;
    bad += check_range(g, end, (long) g->bytes, v, what, "after the last element", budget);
    return bad;
}
