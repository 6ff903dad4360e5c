/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/* The latency path allocates nothing: after a warm-up, MPI_Bcast, MPI_Reduce
 * and MPI_Allreduce (blocking and non-blocking) below
 * coll_adapt2_detach_min_message make no heap allocation on any rank in
 * adapt2 (request, schedule, flows, their arrays, staging buffers), neither
 * when they start nor in their completion callbacks.
 *
 * This program counts every malloc, calloc, realloc and aligned allocation
 * its calling thread makes (it defines them, so libmpi and the component
 * call these) while it runs `--calls` collectives per case, and checks every
 * element of every result. The transport's own allocations are told apart
 * by their stack and reported, not counted (from_transport()). `--expect-allocations` inverts the verdict: the run must
 * see allocations (with coll_adapt2_schedule_cache 0, every call builds its schedule anew), which shows the counter
 * sees the component's.
 *
 *   alloc_check [--calls N] [--bytes B] [--expect-allocations]
 *   alloc_check --allgather [--calls N] [--bytes B]
 * --allgather: blocking MPI_Allgather of B bytes of ints per rank into a
 * result with holes (every other int), which the direct path gathers in
 * scratch (above 64 KiB in all, the staging pool's): no allocation once warm
 * either, every block and every hole checked.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_check.h"

/* ---- counting allocator --------------------------------------------------- */

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

/* Only the calling thread counts: that is where the calls and their
 * callbacks run (no progress thread here). */
static atomic_long allocations;
static __thread int counting;
static __thread int measuring, in_note;
/* Where the first allocation of a measured window came from, printed on
 * failure: the stack names the allocating function. */
static void *first_stack[24];
static int first_depth;

static long transport_allocations;

/* Whose allocation this is: the first frame up the stack that is either the
 * component's or a transport's decides. A transport (pml ob1's buffers for
 * messages that arrive before their receive, pml ucx's memory pools, the
 * BTLs) allocates now and then when a rank runs ahead, and so does Open
 * MPI's runtime event loop (libevent) that opal_progress runs; that is not
 * the call's doing, and is reported apart. An allocation of adapt2's, also one
 * in a completion callback that the PML runs, meets the component first. */
static int from_transport(void *const *stack, int depth)
{
    for (int i = 1; i < depth; ++i) {
        Dl_info info;
        if (!dladdr(stack[i], &info) || !info.dli_fname) continue;
        const char *lib = strrchr(info.dli_fname, '/');
        lib = lib ? lib + 1 : info.dli_fname;
        if (!strncmp(lib, "mca_coll_adapt2", 15)) return 0;
        if (!strncmp(lib, "mca_pml_", 8) || !strncmp(lib, "mca_btl_", 8) || !strncmp(lib, "mca_allocator_", 14) ||
            !strncmp(lib, "libuc", 5) || !strncmp(lib, "libevent", 8))
            return 1; /* libevent: Open MPI's runtime events, run by opal_progress (a CI run saw one) */
    }
    return 0;
}

static void note(void)
{
    if (!counting) return;
    if (!measuring || in_note) {
        atomic_fetch_add(&allocations, 1);
        return;
    }
    in_note = 1;
    void *stack[24];
    int depth = backtrace(stack, 24);
    if (from_transport(stack, depth)) {
        ++transport_allocations;
    } else {
        atomic_fetch_add(&allocations, 1);
        if (!first_depth) {
            memcpy(first_stack, stack, sizeof stack);
            first_depth = depth;
        }
    }
    in_note = 0;
}
void *malloc(size_t n)
{
    note();
    return __libc_malloc(n);
}
void *calloc(size_t a, size_t b)
{
    note();
    return __libc_calloc(a, b);
}
void *realloc(void *p, size_t n)
{
    note();
    return __libc_realloc(p, n);
}
void *memalign(size_t align, size_t n)
{
    note();
    return __libc_memalign(align, n);
}
void *aligned_alloc(size_t align, size_t n)
{
    return memalign(align, n);
}
int posix_memalign(void **out, size_t align, size_t n)
{
    void *p = memalign(align, n);
    if (!p) return 12; /* ENOMEM */
    *out = p;
    return 0;
}

/* ---- the calls -------------------------------------------------------------- */

enum { BCAST, REDUCE, ALLREDUCE, KINDS };
static const char *kind_names[] = {"bcast", "reduce", "allreduce"};

static int rank, np;
static int *in, *out;
static long long errors;

/* Rank r's int k in call `it`: distinct per call, sums stay exact. */
static int value(int r, int k, int it)
{
    return (r + 1) * 1000 + k * 7 + it % 97;
}

static void fill(int kind, int count, int it)
{
    for (int k = 0; k < count; ++k) {
        in[k] = value(kind == BCAST ? 0 : rank, k, it);
        out[k] = -1;
    }
}

static void check(int kind, int count, int it, int root)
{
    const int *got = kind == BCAST ? in : out;
    if (kind == BCAST && rank == root) return;
    if (kind == REDUCE && rank != root) return;
    for (int k = 0; k < count; ++k) {
        int want = 0;
        if (kind == BCAST) {
            want = value(0, k, it);
        } else {
            for (int r = 0; r < np; ++r) want += value(r, k, it);
        }
        if (got[k] != want && errors++ < 5)
            printf("rank %d: %s call %d: element %d is %d, expected %d\n", rank, kind_names[kind], it, k, got[k], want);
    }
}

static void call(int kind, int blocking, int count)
{
    MPI_Request req;
    int *buf = in;
    if (kind == BCAST) {
        if (rank != 0) memset(buf, 0xff, (size_t) count * sizeof(int));
        if (blocking)
            MPI_Bcast(buf, count, MPI_INT, 0, MPI_COMM_WORLD);
        else
            MPI_Ibcast(buf, count, MPI_INT, 0, MPI_COMM_WORLD, &req), MPI_Wait(&req, MPI_STATUS_IGNORE);
        return;
    }
    reduce_call(in, out, count, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, kind == ALLREDUCE, blocking);
}

/* Allocations per rank over `calls` calls of one case (after a warm-up). */
static long run_case(int kind, int blocking, int count, int calls)
{
    for (int it = 0; it < 50; ++it) {
        fill(kind, count, it);
        call(kind, blocking, count);
        check(kind, count, it, 0);
    }
    long before = atomic_load(&allocations);
    for (int it = 50; it < 50 + calls; ++it) {
        fill(kind, count, it);
        measuring = 1;
        call(kind, blocking, count);
        measuring = 0;
        check(kind, count, it, 0);
    }
    long got = atomic_load(&allocations) - before;
    if (transport_allocations > 0)
        printf("rank %d: (the transport allocated %ld times: not counted)\n", rank, transport_allocations);
    transport_allocations = 0;
    return got;
}

/* ---- --allgather ---------------------------------------------------------- */

/* Rank r's block in call `it` lands at stride 2 in the result: ints between
 * them are holes that must stay as they were (kHole). */
enum { kHole = -7 };

static void allgather_fill(int *result, int count, int it)
{
    for (int k = 0; k < count; ++k) in[k] = value(rank, k, it);
    for (long i = 0; i < 2L * count * np; ++i) result[i] = kHole;
}

static void allgather_check(const int *result, int count, int it)
{
    for (int r = 0; r < np; ++r) {
        for (int k = 0; k < count; ++k) {
            const long at = 2L * ((long) r * count + k);
            if (result[at] != value(r, k, it) && errors++ < 5)
                printf("rank %d: allgather call %d: rank %d's element %d is %d, expected %d\n", rank, it, r, k,
                       result[at], value(r, k, it));
            if (result[at + 1] != kHole && errors++ < 5)
                printf("rank %d: allgather call %d: the hole after rank %d's element %d was written (%d)\n", rank, it,
                       r, k, result[at + 1]);
        }
    }
}

/* Allocations per rank over `calls` allgathers of `count` ints (after a warm-up). */
static long allgather_case(int count, int calls)
{
    MPI_Datatype strided, holes;
    MPI_Type_vector(count, 1, 2, MPI_INT, &strided);
    MPI_Type_create_resized(strided, 0, 2L * count * (long) sizeof(int), &holes);
    MPI_Type_commit(&holes);
    int *result = malloc(2 * (size_t) count * (size_t) np * sizeof(int));
    long before = 0;
    for (int it = 0; it < 50 + calls; ++it) {
        if (it == 50) before = atomic_load(&allocations);
        allgather_fill(result, count, it);
        measuring = it >= 50;
        MPI_Allgather(in, count, MPI_INT, result, 1, holes, MPI_COMM_WORLD);
        measuring = 0;
        allgather_check(result, count, it);
    }
    long got = atomic_load(&allocations) - before;
    free(result);
    MPI_Type_free(&holes);
    MPI_Type_free(&strided);
    return got;
}

static int run_allgather(int bytes, int calls)
{
    const int count = bytes / (int) sizeof(int);
    in = malloc((size_t) count * sizeof(int));
    const long direct_before = adapt2_counter("coll_adapt2_direct_calls");
    long got = allgather_case(count, calls), max_got = 0;
    MPI_Allreduce(&got, &max_got, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf(
            "alloc_check: allgather of %d bytes per rank into a result with holes: at most %ld allocations per "
            "rank over %d calls\n",
            bytes, max_got, calls);
    if (got > 0) {
        printf("rank %d: allgather of %d bytes allocated %ld times in %d calls\n", rank, bytes, got, calls), ++errors;
        if (first_depth) {
            fflush(stdout);
            backtrace_symbols_fd(first_stack, first_depth, 1);
        }
    }
    if (adapt2_counter("coll_adapt2_direct_calls") - direct_before < 50L + calls)
        printf("rank %d: the allgathers did not all run on adapt2's direct path\n", rank), ++errors;
    long long all = total_errors(errors, MPI_COMM_WORLD);
    free(in);
    MPI_Finalize();
    return all == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    int calls = 500, bytes = 256, expect_allocations = 0, allgather = 0;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--calls") && i + 1 < argc)
            calls = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--bytes") && i + 1 < argc)
            bytes = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--expect-allocations"))
            expect_allocations = 1;
        else if (!strcmp(argv[i], "--allgather"))
            allgather = 1;
        else
            fail("unknown argument %s", argv[i]);
    }
    backtrace(first_stack, 1); /* loads the unwinder now, not inside a measured call */
    counting = 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const int count = bytes / (int) sizeof(int);
    if (count < 1) fail("--bytes must hold one int");
    if (allgather) return run_allgather(bytes, calls);
    if ((long) count * (long) sizeof(int) > adapt2_get_long("coll_adapt2_detach_min_message"))
        fail("%d bytes are above coll_adapt2_detach_min_message: not the latency path", bytes);
    in = malloc((size_t) count * sizeof(int));
    out = malloc((size_t) count * sizeof(int));
    adapt2_counter("coll_adapt2_bcast_calls");
    adapt2_counter("coll_adapt2_reduce_calls");

    long least = -1;
    for (int kind = 0; kind < KINDS; ++kind) {
        for (int blocking = 1; blocking >= 0; --blocking) {
            long got = run_case(kind, blocking, count, calls);
            long max_got = 0, min_got = 0;
            MPI_Allreduce(&got, &max_got, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
            MPI_Allreduce(&got, &min_got, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
            if (rank == 0)
                printf("alloc_check: %s%s of %d bytes: %ld to %ld allocations per rank over %d calls\n",
                       blocking ? "" : "i", kind_names[kind], bytes, min_got, max_got, calls);
            if (got > 0 && !expect_allocations)
                printf("rank %d: %s%s of %d bytes allocated %ld times in %d calls\n", rank, blocking ? "" : "i",
                       kind_names[kind], bytes, got, calls),
                    ++errors;
            if (got > 0 && !expect_allocations && first_depth) {
                fflush(stdout);
                backtrace_symbols_fd(first_stack, first_depth, 1); /* the first one's stack */
            }
            first_depth = 0;
            least = least < 0 || got < least ? got : least;
        }
    }
    /* adapt2 ran them: the counters grew by every bcast and reduce call */
    if (adapt2_counter("coll_adapt2_bcast_calls") < 2L * (calls + 50))
        printf("rank %d: adapt2 did not run the broadcasts\n", rank), ++errors;
    if (adapt2_counter("coll_adapt2_reduce_calls") < 2L * (calls + 50))
        printf("rank %d: adapt2 did not run the reduces\n", rank), ++errors;
    if (expect_allocations && least < calls)
        printf("rank %d: expected allocations in every case (at least one per call), saw %ld in one\n", rank, least),
            ++errors;
    long long all = total_errors(errors, MPI_COMM_WORLD);
    free(in);
    free(out);
    MPI_Finalize();
    return all == 0 ? 0 : 1;
}
