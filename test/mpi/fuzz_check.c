/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/* The fuzzer's buffers and checks: each call's send and receive buffers
 * (values where the typemap says, sentinels everywhere else), and the
 * checks of every unit against the local reference, of every byte outside
 * the typemap, of send buffers, and against the algorithm=previous run. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_case.h"
#include "mpi_check.h"

long long case_errors;
int case_reported;

void report_header(const case_t *k, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "FUZZ MISMATCH [rank %d] seed %llu case %ld: ", wrank, (unsigned long long) opt.seed, k->index);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    if (!case_reported++) {
        fprintf(stderr, "%s", k->desc);
        fprintf(stderr, "reproduce: %s --case %ld\n", repro_prefix, k->index);
    }
    fflush(stderr);
}

void call_error(const case_t *k, int i, int rc, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(rc, msg, &len);
    report_header(k, "call %d (%s) returned %s", k->calls[i].id, what, msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

/* ---- buffers of a call ---- */

/* `rank`'s first n elements, from element `first` of the buffer on. */
static void fill(const call_t *c, region_t *g, int rank, long first, long n)
{
    unsigned char v[16];
    const dtype_t *t = c->t;
    for (long e = 0; e < n; ++e) {
        for (int j = 0; j < t->nmap; ++j) {
            const prim_info_t *p = &prims[t->map[j].prim];
            unsigned char *at = g->buf + (first + e) * t->extent + t->map[j].off;
            gen_value(c->key, rank, (uint64_t) (e * t->nmap + j), t->map[j].prim, c->op, v);
            for (int s = 0; s < p->nsig; ++s) memcpy(at + p->sig_off[s], v + p->sig_off[s], (size_t) p->sig_len[s]);
        }
    }
}

int has_result(const call_t *c)
{
    return c->coll != C_REDUCE || c->c->rank == c->root;
}

/* The result's elements: p blocks for an allgather. */
static int result_count(const call_t *c)
{
    return c->coll == C_ALLGATHER ? c->count * c->c->size : c->count;
}

/* The receive buffer's elements: the result's, or a reduce_scatter_block's p
 * blocks in place (its input; the result is the first block). */
static int buffer_count(const call_t *c)
{
    return c->coll == C_RSB && c->inplace ? c->count * c->c->size : result_count(c);
}

void prepare(call_t *c)
{
    int me = c->c->rank;
    const long all = (long) c->count * c->c->size;
    if (c->coll == C_ALLGATHER) {
        region_alloc(&c->rbuf, c->t, result_count(c), RECV_SENTINEL);
        if (c->inplace) {
            fill(c, &c->rbuf, me, (long) me * c->count, c->count);
        } else {
            region_alloc(&c->sbuf, c->t, c->count, SEND_SENTINEL);
            fill(c, &c->sbuf, me, 0, c->count);
            region_copy(&c->scopy, &c->sbuf);
        }
    } else if (c->coll == C_RSB) { /* p blocks in, one out */
        region_alloc(&c->rbuf, c->t, buffer_count(c), RECV_SENTINEL);
        if (c->inplace) {
            fill(c, &c->rbuf, me, 0, all);
        } else {
            region_alloc(&c->sbuf, c->t, (int) all, SEND_SENTINEL);
            fill(c, &c->sbuf, me, 0, all);
            region_copy(&c->scopy, &c->sbuf);
        }
    } else if (c->coll == C_BCAST) {
        region_alloc(&c->rbuf, c->t, c->count, RECV_SENTINEL);
        if (me == c->root) {
            fill(c, &c->rbuf, me, 0, c->count);
            region_copy(&c->scopy, &c->rbuf);
        }
    } else {
        int inplace_here = c->inplace && has_result(c);
        if (!inplace_here) {
            region_alloc(&c->sbuf, c->t, c->count, SEND_SENTINEL);
            fill(c, &c->sbuf, me, 0, c->count);
            region_copy(&c->scopy, &c->sbuf);
        }
        if (has_result(c) || !c->null_recv) {
            region_alloc(&c->rbuf, c->t, c->count, RECV_SENTINEL);
            if (inplace_here) fill(c, &c->rbuf, me, 0, c->count);
        }
    }
    if (c->prev && c->rbuf.mem) region_copy(&c->rprev, &c->rbuf);
}

void release_buffers(call_t *c)
{
    region_free(&c->sbuf);
    region_free(&c->scopy);
    region_free(&c->rbuf);
    region_free(&c->rprev);
}

/* ---- checks ---- */

/* Every unit of the result (values only). */
static long long check_values(const case_t *k, int i, const region_t *g, const char *what, int quiet)
{
    const call_t *c = &k->calls[i];
    const dtype_t *t = c->t;
    int group = ops[c->op].group, pg[4], shown = 0;
    unsigned char want[4][16];
    long long bad = 0;
    const long all = result_count(c);
    for (long e = 0; e < all; ++e) {
        /* an allgather's element e: element e % count of rank e / count; a
         * reduce_scatter_block's: element rank * count + e of every rank's */
        const long own = c->coll == C_ALLGATHER && c->count > 0 ? e % c->count
                         : c->coll == C_RSB                     ? (long) c->c->rank * c->count + e
                                                                : e;
        const int owner = c->coll == C_ALLGATHER && c->count > 0 ? (int) (e / c->count) : c->root;
        for (int j = 0; j < t->nmap; j += group) {
            uint64_t u = (uint64_t) (own * t->nmap + j);
            for (int q = 0; q < group; ++q) pg[q] = t->map[j + q].prim;
            if (c->coll == C_BCAST || c->coll == C_ALLGATHER)
                gen_value(c->key, owner, u, pg[0], OP_NONE, want[0]);
            else
                expected_group(c->key, c->c->size, u, pg, group, c->op, want);
            for (int q = 0; q < group; ++q) {
                const unsigned char *got = g->buf + e * t->extent + t->map[j + q].off;
                if (prim_equal(pg[q], got, want[q])) continue;
                if (!quiet && shown++ < 5) {
                    char a[64], b[64];
                    prim_show(pg[q], got, a, sizeof a);
                    prim_show(pg[q], want[q], b, sizeof b);
                    if (bad == 0) report_header(k, "call %d: %s: wrong values", k->calls[i].id, what);
                    fprintf(stderr, "  %s: element %ld, unit %d (%s at buffer offset %ld): got %s, expected %s\n", what,
                            e, j + q, prims[pg[q]].name, e * t->extent + t->map[j + q].off, a, b);
                }
                ++bad;
            }
        }
    }
    if (!quiet && bad) fprintf(stderr, "  %s: %lld wrong units of %ld\n", what, bad, all * t->nmap);
    return bad;
}

/* Values and holes of a receive buffer where the result is defined. */
static long long check_result(const case_t *k, int i, const region_t *g, const char *what, int quiet)
{
    const call_t *c = &k->calls[i];
    long long bad = check_values(k, i, g, what, quiet);
    int budget = quiet ? 0 : 5;
    long long holes = check_holes(c->t, buffer_count(c), g, RECV_SENTINEL, what, &budget);
    if (holes && !quiet) {
        if (!bad) report_header(k, "call %d: %s: bytes outside the typemap overwritten", k->calls[i].id, what);
        fprintf(stderr, "  %s: %lld bytes outside the typemap overwritten\n", what, holes);
    }
    return bad + holes;
}

static long long check_unchanged(const case_t *k, int i, const region_t *now, const region_t *before, const char *what)
{
    if (!now->mem || !memcmp(now->mem, before->mem, now->bytes)) return 0;
    size_t at = 0;
    while (now->mem[at] == before->mem[at]) ++at;
    report_header(k, "call %d: %s was modified (first at buffer offset %ld)", k->calls[i].id, what,
                  (long) (now->mem + at - now->buf));
    return 1;
}

long long check_call(const case_t *k, int i)
{
    call_t *c = (call_t *) &k->calls[i];
    long long bad = 0;
    int me = c->c->rank;
    if (c->coll == C_BCAST && me == c->root) {
        bad += check_unchanged(k, i, &c->rbuf, &c->scopy, "the root's buffer");
    } else if (c->coll == C_BCAST || has_result(c)) {
        bad += check_result(k, i, &c->rbuf, "result", 0);
    } else if (c->rbuf.mem) {
        int budget = 5;
        long long b = check_holes(c->t, 0, &c->rbuf, RECV_SENTINEL, "recvbuf of a non-root", &budget);
        if (b) report_header(k, "call %d: MPI_Reduce wrote %lld bytes into a non-root's recvbuf", k->calls[i].id, b);
        bad += b;
    }
    if (c->sbuf.mem) bad += check_unchanged(k, i, &c->sbuf, &c->scopy, "the send buffer");
    if (c->rprev.mem && (c->coll != C_REDUCE || has_result(c))) {
        stats.prev_compared++;
        if (allow_pair_padding) {
            reset_pair_padding(c->t, c->count, &c->rbuf, RECV_SENTINEL);
            reset_pair_padding(c->t, c->count, &c->rprev, RECV_SENTINEL);
        }
        if (memcmp(c->rprev.mem, c->rbuf.mem, c->rbuf.bytes)) {
            /* blame: the previous component may be the one that is wrong */
            long long prev_bad = c->coll == C_BCAST && me == c->root ? 0 : check_result(k, i, &c->rprev, "previous", 1);
            if (prev_bad && !bad) {
                if (stats.prev_warnings++ < 3)
                    fprintf(stderr,
                            "fuzz: warning [rank %d]: case %ld call %d: the previous component's result "
                            "differs from the reference (%lld units/bytes), adapt2's is right\n",
                            wrank, k->index, c->id, prev_bad);
            } else if (!bad) {
                size_t at = 0;
                while (c->rprev.mem[at] == c->rbuf.mem[at]) ++at;
                report_header(k,
                              "call %d: adapt2's result differs from algorithm=previous at buffer offset %ld "
                              "(0x%02x, previous 0x%02x)",
                              c->id, (long) (c->rbuf.mem + at - c->rbuf.buf), c->rbuf.mem[at], c->rprev.mem[at]);
                ++bad;
            }
        }
    }
    return bad;
}
