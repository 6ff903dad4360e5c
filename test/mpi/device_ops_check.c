/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * Every collective on GPU memory, every (op, type) that has a GPU kernel,
 * checked bit for bit against the same call on host memory. Runs on a real
 * CUDA device (the driver is loaded at run time: nothing CUDA is needed to
 * build) or on adapt2's mock device, so the suite runs it without a GPU.
 *
 * Each case fills host inputs, copies them into this rank's memory kind,
 * runs the collective there, copies the result back and compares every byte
 * with the result of the same call on plain host buffers (adapt2 again, but
 * its host path: Open MPI's own ops combine). Float inputs are small
 * multiples of 1/4, exact in any order; with `random` they use every mantissa
 * bit, which is only bitwise reproducible under coll_adapt2_reproducible=1.
 *
 * usage: device_ops_check MEMORY [exact|random] [COUNT,COUNT...]
 *   MEMORY  device   cuMemAlloc on every rank
 *           managed  cuMemAllocManaged on every rank
 *           mixed    rank % 3: device, managed, host memory
 *           mock     adapt2's mock device (host memory), every rank
 *           mock-mixed  the mock device on even ranks, host memory on odd
 *   probe   exit 0 if a CUDA device is usable, 77 if not (no MPI)
 * Exit 77 when a real memory kind is asked for and no device is usable.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_driver.h"
#include "mpi_check.h"

/* ---- memory kinds ---- */
enum memory { HOST, DEVICE, MANAGED };
static const char *memory_name[] = {"host", "device", "managed"};

static cuda_driver_t cu;

static int rank, size;
static enum memory mine; /* this rank's memory kind */

static void check_cu(CUresult rc, const char *what)
{
    if (rc != 0) fail("%s failed with CUDA error %d", what, rc);
}

/* Loads the driver and makes device rank % devices current; 0 if no device
 * is usable (says why on stderr when `loud`). */
static int load_driver(int loud)
{
    char why[256];
    if (cuda_driver_load(&cu, rank, why, sizeof why) == 0) return 1;
    if (loud) fprintf(stderr, "device_ops_check: %s\n", why);
    return 0;
}

static void *mem_alloc(size_t bytes)
{
    CUdeviceptr p = 0;
    if (bytes == 0) bytes = 1;
    if (mine == DEVICE) {
        check_cu(cu.mem_alloc(&p, bytes), "cuMemAlloc");
    } else if (mine == MANAGED) {
        check_cu(cu.mem_alloc_managed(&p, bytes, CUDA_MEM_ATTACH_GLOBAL), "cuMemAllocManaged");
    } else {
        void *h = malloc(bytes);
        if (!h) fail("out of host memory (%zu bytes)", bytes);
        return h;
    }
    return (void *) (uintptr_t) p;
}

static void mem_free(void *p)
{
    if (mine == HOST)
        free(p);
    else
        check_cu(cu.mem_free((CUdeviceptr) (uintptr_t) p), "cuMemFree");
}

static void mem_put(void *dst, const void *src, size_t bytes)
{
    if (mine == HOST)
        memcpy(dst, src, bytes);
    else
        check_cu(cu.htod((CUdeviceptr) (uintptr_t) dst, src, bytes), "cuMemcpyHtoD");
}

static void mem_get(void *dst, const void *src, size_t bytes)
{
    if (mine == HOST) {
        memcpy(dst, src, bytes);
    } else {
        check_cu(cu.ctx_synchronize(), "cuCtxSynchronize");
        check_cu(cu.dtoh(dst, (CUdeviceptr) (uintptr_t) src, bytes), "cuMemcpyDtoH");
    }
}

/* ---- types, ops and values ---- */
enum cls { INTEGER, FLOATING, PAIR };
typedef struct {
    MPI_Datatype type;
    const char *name;
    size_t bytes; /* extent */
    enum cls cls;
    size_t value_bytes; /* pairs: the value's size; its index is at index_at */
    size_t index_at;
} type_t;

/* A pair whose index does not directly follow its value, or which ends in
 * padding, goes to the previous component (adapt2 combines pairs in place). */
static int padded(const type_t *t)
{
    return t->cls == PAIR && t->value_bytes + sizeof(int) != t->bytes;
}

typedef struct {
    MPI_Op op;
    const char *name;
} op_t;

static const op_t int_ops[] = {{MPI_SUM, "sum"},   {MPI_PROD, "prod"}, {MPI_MAX, "max"},   {MPI_MIN, "min"},
                               {MPI_LAND, "land"}, {MPI_LOR, "lor"},   {MPI_LXOR, "lxor"}, {MPI_BAND, "band"},
                               {MPI_BOR, "bor"},   {MPI_BXOR, "bxor"}};
static const op_t float_ops[] = {{MPI_SUM, "sum"}, {MPI_PROD, "prod"}, {MPI_MAX, "max"}, {MPI_MIN, "min"}};
static const op_t pair_ops[] = {{MPI_MINLOC, "minloc"}, {MPI_MAXLOC, "maxloc"}};

static int random_floats;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

/* Element i of rank r's input for call `call`, written at `p`. Integers use
 * every bit (sums and products wrap); a quarter of them are 0 so the logical
 * ops see both truth values. Pairs take a few values, so ranks tie. */
static void fill_element(const type_t *t, unsigned char *p, int r, size_t i, int call, int is_prod)
{
    uint64_t h = mix(((uint64_t) call << 40) ^ ((uint64_t) r << 32) ^ i);
    if (t->cls == INTEGER) {
        if (h % 4 == 0) h = 0;
        if (is_prod) h = h % 5 + 1; /* products stay nonzero, and wrap anyway for 8-bit types */
        memcpy(p, &h, t->bytes);
    } else if (t->cls == FLOATING) {
        double v = random_floats ? ((double) (h >> 11) / (double) (1ULL << 53) - 0.5) * 1e3
                                 : (double) ((int) (h % 17) - 8) / 4.0;
        if (is_prod && !random_floats) v = (h % 3 == 0) ? 0.5 : (h % 3 == 1 ? 2.0 : -1.0);
        if (t->bytes == sizeof(float)) {
            float f = (float) v;
            memcpy(p, &f, sizeof f);
        } else {
            memcpy(p, &v, sizeof v);
        }
    } else {
        int v = (int) (h % 5), index = (int) (h >> 8 & 0xffff);
        /* value first, index last; the value's type by the pair */
        if (t->type == MPI_FLOAT_INT) {
            float f = (float) v;
            memcpy(p, &f, sizeof f);
        } else if (t->type == MPI_DOUBLE_INT) {
            double d = v;
            memcpy(p, &d, sizeof d);
        } else if (t->type == MPI_LONG_INT) {
            long l = v;
            memcpy(p, &l, sizeof l);
        } else if (t->type == MPI_SHORT_INT) {
            short s = (short) v;
            memcpy(p, &s, sizeof s);
        } else {
            memcpy(p, &v, sizeof v);
        }
        memcpy(p + t->index_at, &index, sizeof index);
    }
}

static const type_t types[] = {
    {MPI_INT8_T, "int8", 1, INTEGER, 0, 0},      {MPI_UINT8_T, "uint8", 1, INTEGER, 0, 0},
    {MPI_INT16_T, "int16", 2, INTEGER, 0, 0},    {MPI_UINT16_T, "uint16", 2, INTEGER, 0, 0},
    {MPI_INT, "int32", 4, INTEGER, 0, 0},        {MPI_UINT32_T, "uint32", 4, INTEGER, 0, 0},
    {MPI_LONG, "int64", 8, INTEGER, 0, 0},       {MPI_UINT64_T, "uint64", 8, INTEGER, 0, 0},
    {MPI_FLOAT, "float", 4, FLOATING, 0, 0},     {MPI_DOUBLE, "double", 8, FLOATING, 0, 0},
    {MPI_FLOAT_INT, "float_int", 8, PAIR, 4, 4}, {MPI_DOUBLE_INT, "double_int", 16, PAIR, 8, 8},
    {MPI_LONG_INT, "long_int", 16, PAIR, 8, 8},  {MPI_2INT, "2int", 8, PAIR, 4, 4},
    {MPI_SHORT_INT, "short_int", 8, PAIR, 2, 4},
};

/* Whether byte k of an element carries data (pairs have padding, which MPI
 * leaves undefined). */
static int meaningful(const type_t *t, size_t k)
{
    return t->cls != PAIR || k < t->value_bytes || (k >= t->index_at && k < t->index_at + sizeof(int));
}

/* ---- one case: the call on host memory, then on this rank's memory ---- */
enum coll { BCAST, REDUCE, ALLREDUCE, ALLGATHER, REDUCE_SCATTER };
static const char *coll_name[] = {"bcast", "reduce", "allreduce", "allgather", "reduce_scatter_block"};

typedef struct {
    enum coll coll;
    const type_t *t;
    const op_t *op;
    int count, root, blocking, in_place, call;
} case_t;

static void run_call(const case_t *c, void *in, void *out)
{
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Request *r = c->blocking ? NULL : &req;
    const int here = c->in_place && (c->coll != REDUCE || rank == c->root);
    const void *sbuf = here ? MPI_IN_PLACE : in;
    switch (c->coll) {
    case BCAST:
        if (r)
            MPI_Ibcast(in, c->count, c->t->type, c->root, MPI_COMM_WORLD, r);
        else
            MPI_Bcast(in, c->count, c->t->type, c->root, MPI_COMM_WORLD);
        break;
    case REDUCE:
    case ALLREDUCE:
        reduce_call(sbuf, out, c->count, c->t->type, c->op->op, c->root, MPI_COMM_WORLD, c->coll == ALLREDUCE,
                    c->blocking);
        break;
    case ALLGATHER:
        MPI_Allgather(here ? MPI_IN_PLACE : in, c->count, c->t->type, out, c->count, c->t->type, MPI_COMM_WORLD);
        break;
    case REDUCE_SCATTER:
        MPI_Reduce_scatter_block(here ? MPI_IN_PLACE : in, here ? in : out, c->count, c->t->type, c->op->op,
                                 MPI_COMM_WORLD);
        break;
    }
    if (r) MPI_Wait(r, MPI_STATUS_IGNORE);
}

/* Elements of the input and output buffers a case needs. */
static void case_sizes(const case_t *c, size_t *in_elems, size_t *out_elems)
{
    size_t n = (size_t) c->count;
    *in_elems = c->coll == REDUCE_SCATTER ? n * (size_t) size : n;
    *out_elems = c->coll == ALLGATHER ? n * (size_t) size : n;
    if (c->coll == BCAST) *out_elems = 0;
}

/* Inputs of this rank; for in-place calls the output holds them too. */
static void fill_case(const case_t *c, unsigned char *in, unsigned char *out, size_t in_elems, size_t out_elems)
{
    const size_t e = c->t->bytes;
    const int is_prod = c->op && c->op->op == MPI_PROD;
    memset(in, 0xa5, in_elems * e);
    memset(out, 0x5a, out_elems * e);
    for (size_t i = 0; i < in_elems; ++i) {
        if (c->coll == BCAST && rank != c->root) break;
        fill_element(c->t, in + i * e, rank, i, c->call, is_prod);
    }
    if (c->in_place && c->coll == ALLGATHER) { /* my block, in place */
        memcpy(out + (size_t) rank * (size_t) c->count * e, in, (size_t) c->count * e);
    } else if (c->in_place && (c->coll == ALLREDUCE || (c->coll == REDUCE && rank == c->root))) {
        memcpy(out, in, in_elems * e);
    }
}

static long compare(const case_t *c, const unsigned char *got, const unsigned char *want, size_t elems)
{
    long bad = 0;
    const size_t e = c->t->bytes;
    for (size_t i = 0; i < elems; ++i) {
        for (size_t k = 0; k < e; ++k) {
            if (!meaningful(c->t, k) || got[i * e + k] == want[i * e + k]) continue;
            if (bad++ < 3)
                fprintf(stderr,
                        "rank %d (%s memory): %s%s %s of %d %s root %d%s: element %zu byte %zu is 0x%02x, "
                        "host memory gave 0x%02x\n",
                        rank, memory_name[mine], c->blocking ? "" : "non-blocking ", coll_name[c->coll],
                        c->op ? c->op->name : "", c->count, c->t->name, c->root, c->in_place ? " in place" : "", i, k,
                        got[i * e + k], want[i * e + k]);
            break;
        }
    }
    return bad;
}

static long run_case(const case_t *c)
{
    size_t in_elems, out_elems;
    case_sizes(c, &in_elems, &out_elems);
    const size_t e = c->t->bytes, in_bytes = in_elems * e, out_bytes = out_elems * e;
    unsigned char *h_in = malloc(in_bytes + 1), *h_out = malloc(out_bytes + 1);
    unsigned char *got = malloc((in_bytes > out_bytes ? in_bytes : out_bytes) + 1);
    if (!h_in || !h_out || !got) fail("out of host memory");
    /* the reference: host buffers */
    fill_case(c, h_in, h_out, in_elems, out_elems);
    run_call(c, h_in, h_out);
    /* the same call on this rank's memory */
    void *d_in = mem_alloc(in_bytes), *d_out = mem_alloc(out_bytes);
    unsigned char *init_in = malloc(in_bytes + 1), *init_out = malloc(out_bytes + 1);
    if (!init_in || !init_out) fail("out of host memory");
    fill_case(c, init_in, init_out, in_elems, out_elems);
    mem_put(d_in, init_in, in_bytes);
    mem_put(d_out, init_out, out_bytes);
    run_call(c, d_in, d_out);
    long bad = 0;
    const int receives = c->coll != REDUCE || rank == c->root;
    if (c->coll == BCAST || (c->coll == REDUCE_SCATTER && c->in_place)) {
        mem_get(got, d_in, c->coll == BCAST ? in_bytes : (size_t) c->count * e);
        bad = compare(c, got, h_in, c->coll == BCAST ? in_elems : (size_t) c->count);
    } else if (receives) {
        mem_get(got, d_out, out_bytes);
        bad = compare(c, got, h_out, out_elems);
    }
    mem_free(d_in);
    mem_free(d_out);
    free(h_in);
    free(h_out);
    free(got);
    free(init_in);
    free(init_out);
    return bad;
}

/* ---- the sweep ---- */
static int any_device; /* some rank's buffers are cuMemAlloc memory */
static long cases, skipped, bad_total;

static void one(case_t c)
{
    static int call;
    c.call = ++call;
    c.root = c.call % size;
    ++cases;
    bad_total += run_case(&c);
}

static void sweep_reductions(const int *counts, int ncounts)
{
    for (size_t t = 0; t < sizeof types / sizeof types[0]; ++t) {
        const type_t *ty = &types[t];
        /* Open MPI (not CUDA-aware) gets these from adapt2 and would read
         * cuMemAlloc memory on the host. */
        if (padded(ty) && any_device) {
            ++skipped;
            continue;
        }
        const op_t *ops = ty->cls == INTEGER ? int_ops : ty->cls == FLOATING ? float_ops : pair_ops;
        const size_t nops = ty->cls == INTEGER    ? sizeof int_ops / sizeof int_ops[0]
                            : ty->cls == FLOATING ? sizeof float_ops / sizeof float_ops[0]
                                                  : sizeof pair_ops / sizeof pair_ops[0];
        for (size_t o = 0; o < nops; ++o) {
            for (int k = 0; k < ncounts; ++k) {
                /* each (op, type, count): reduce and allreduce, blocking and
                 * not, in place on alternate calls */
                for (int v = 0; v < 4; ++v) {
                    case_t c = {v < 2 ? REDUCE : ALLREDUCE, ty, &ops[o], counts[k], 0, v % 2 == 0,
                                (int) (o + k + v) % 3 == 0, 0};
                    one(c);
                }
            }
        }
    }
}

static void sweep_bcasts(const int *counts, int ncounts)
{
    static const type_t bytes = {MPI_BYTE, "bytes", 1, INTEGER, 0, 0};
    for (int k = 0; k < ncounts; ++k) {
        for (int blocking = 0; blocking < 2; ++blocking) {
            case_t b = {BCAST, &bytes, NULL, counts[k] * 8 + 3, 0, blocking, 0, 0};
            one(b);
            case_t d = {BCAST, &types[9], NULL, counts[k], 0, blocking, 0, 0};
            one(d);
        }
    }
}

/* Allgather and reduce-scatter go to the previous component while GPU
 * support is on, which is not CUDA-aware: managed and host memory only. */
static void sweep_ring_collectives(const int *counts, int ncounts)
{
    if (any_device) {
        ++skipped;
        return;
    }
    for (int k = 0; k < ncounts; ++k) {
        for (int in_place = 0; in_place < 2; ++in_place) {
            case_t g = {ALLGATHER, &types[4], NULL, counts[k], 0, 1, in_place, 0};
            one(g);
            case_t s = {REDUCE_SCATTER, &types[8], &float_ops[0], counts[k], 0, 1, in_place, 0};
            one(s);
        }
    }
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "probe")) return load_driver(1) ? 0 : 77;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "";
    random_floats = argc > 2 && !strcmp(argv[2], "random");
    int counts[8] = {1, 1000, 70001}, ncounts = 3;
    if (argc > 3) ncounts = parse_ints(argv[3], counts, 8);
    int mock = 0;
    if (!strcmp(mode, "device")) {
        mine = DEVICE;
    } else if (!strcmp(mode, "managed")) {
        mine = MANAGED;
    } else if (!strcmp(mode, "mixed")) {
        mine = rank % 3 == 0 ? DEVICE : rank % 3 == 1 ? MANAGED : HOST;
    } else if (!strcmp(mode, "mock") || !strcmp(mode, "mock-mixed")) {
        mock = 1;
        mine = HOST; /* the mock device's memory is host memory */
        adapt2_set_int("coll_adapt2_device_mock", !strcmp(mode, "mock") || rank % 2 == 0 ? 1 : 2);
    } else {
        fail("usage: device_ops_check device|managed|mixed|mock|mock-mixed|probe [exact|random] [COUNTS]");
    }
    int usable = mock || mine == HOST || load_driver(1), all_usable = 0;
    MPI_Allreduce(&usable, &all_usable, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_usable) {
        if (rank == 0) printf("device_ops_check %s: no usable CUDA device: skipped\n", mode);
        MPI_Finalize();
        return 77;
    }
    int device_here = mine == DEVICE;
    MPI_Allreduce(&device_here, &any_device, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    adapt2_counter("coll_adapt2_device_bytes");
    adapt2_counter("coll_adapt2_device_combines");

    sweep_bcasts(counts, ncounts);
    sweep_reductions(counts, ncounts);
    sweep_ring_collectives(counts, ncounts);

    long long copied = adapt2_counter("coll_adapt2_device_bytes");
    long long combined = adapt2_counter("coll_adapt2_device_combines"), all_combined = 0;
    const int staged = mock ? (!strcmp(mode, "mock") || rank % 2 == 0) : mine != HOST;
    if (staged && copied <= 0) fail("%s memory but no bytes were staged", mock ? "mock device" : memory_name[mine]);
    if (!staged && copied != 0) fail("host memory but %lld bytes were staged", copied);
    MPI_Allreduce(&combined, &all_combined, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    /* (reproducible mode, which `random` needs, combines on the host in a
     * fixed order) */
    if (!random_floats && all_combined <= 0) fail("no segment was combined on the GPU");
    long long all_bad = total_errors(bad_total, MPI_COMM_WORLD);
    if (rank == 0) {
        printf(
            "device_ops_check %s (%s floats): %ld cases, %lld wrong elements, %ld kinds skipped "
            "(padded pairs or allgather/reduce-scatter on cuMemAlloc memory); %lld segments combined on the GPU\n",
            mode, random_floats ? "random" : "exact", cases, all_bad, skipped, all_combined);
    }
    MPI_Finalize();
    return all_bad ? 1 : 0;
}
