/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * noise: deterministic OS-noise injection (see noise.h for the spec syntax
 * and the timing model).
 */
#define _POSIX_C_SOURCE 200809L
#include "noise.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------------ */
/* deterministic randomness: a counter-based hash, no state                  */

static uint64_t mix64(uint64_t x) /* splitmix64 finalizer */
{
    x += UINT64_C(0x9e3779b97f4a7c15);
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

/* Uniform in [0, 1) for (seed, rank, iteration, stream). */
static double uniform(uint64_t seed, int rank, long iter, int stream)
{
    uint64_t h = mix64(seed ^ mix64((uint64_t) (uint32_t) rank * UINT64_C(0x100000001b3) ^
                                    mix64((uint64_t) iter * 4u + (uint64_t) stream)));
    return (double) (h >> 11) * (1.0 / 9007199254740992.0);
}

/* ------------------------------------------------------------------------ */
/* parsing                                                                   */

static void defaults(noise_spec_t *s, noise_mode_t mode)
{
    memset(s, 0, sizeof(*s));
    s->mode = mode;
    s->p = 0.1;
    s->d_us = 5000.0;
    s->dist = NOISE_FIXED;
    s->alpha = 1.5;
    s->cap_us = 0.0;
    s->every_us = 50000.0;
    s->ranks = NOISE_RANKS_ALL;
}

/* "5ms", "200us", "0.5s", "300" (us).  0 on error. */
static int parse_duration(const char *v, double *us)
{
    char *end;
    if (!*v || (!isdigit((unsigned char) *v) && *v != '.')) return 0;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || !isfinite(x) || x < 0) return 0;
    if (!*end || !strcmp(end, "us"))
        *us = x;
    else if (!strcmp(end, "ms"))
        *us = x * 1e3;
    else if (!strcmp(end, "s"))
        *us = x * 1e6;
    else
        return 0;
    return 1;
}

static int parse_double(const char *v, double *out)
{
    char *end;
    if (!*v) return 0;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || *end || !isfinite(x)) return 0;
    *out = x;
    return 1;
}

/* "all", "3", "1+3+5". */
static int parse_ranks(const char *v, noise_spec_t *s)
{
    if (!strcmp(v, "all")) {
        s->ranks = NOISE_RANKS_ALL;
        return 1;
    }
    s->ranks = NOISE_RANKS_LIST;
    s->nlist = 0;
    const char *p = v;
    for (;;) {
        char *end;
        if (!isdigit((unsigned char) *p)) return 0;
        errno = 0;
        long r = strtol(p, &end, 10);
        if (errno || r < 0 || r > 1 << 24 || s->nlist >= NOISE_MAX_LIST) return 0;
        s->list[s->nlist++] = (int) r;
        if (!*end) return 1;
        if (*end != '+') return 0;
        p = end + 1;
    }
}

static int set_key(noise_spec_t *s, const char *k, const char *v, int *have_ranks, char *err, size_t errlen)
{
    int periodic = s->mode == NOISE_PERIODIC;
    double x;
#define BAD(...)                            \
    do {                                    \
        snprintf(err, errlen, __VA_ARGS__); \
        return -1;                          \
    } while (0)
    if (!strcmp(k, "p") && !periodic) {
        if (!parse_double(v, &x) || x < 0 || x > 1) BAD("p=%s: want a probability in [0,1]", v);
        s->p = x;
    } else if (!strcmp(k, "d")) {
        if (!parse_duration(v, &x) || x <= 0) BAD("d=%s: want a positive duration (us, ms, s)", v);
        s->d_us = x;
    } else if (!strcmp(k, "dist") && !periodic) {
        if (!strcmp(v, "fixed"))
            s->dist = NOISE_FIXED;
        else if (!strcmp(v, "exp"))
            s->dist = NOISE_EXP;
        else if (!strcmp(v, "pareto"))
            s->dist = NOISE_PARETO;
        else
            BAD("dist=%s: want fixed, exp or pareto", v);
    } else if (!strcmp(k, "alpha") && !periodic) {
        if (!parse_double(v, &x) || x <= 0) BAD("alpha=%s: want a positive number", v);
        s->alpha = x;
    } else if (!strcmp(k, "cap") && !periodic) {
        if (!parse_duration(v, &x) || x <= 0) BAD("cap=%s: want a positive duration", v);
        s->cap_us = x;
    } else if (!strcmp(k, "every") && periodic) {
        if (!parse_duration(v, &x) || x <= 0) BAD("every=%s: want a positive duration", v);
        s->every_us = x;
    } else if (!strcmp(k, "phase") && periodic) {
        if (!strcmp(v, "rand"))
            s->phase_same = 0;
        else if (!strcmp(v, "same"))
            s->phase_same = 1;
        else
            BAD("phase=%s: want rand or same", v);
    } else if (!strcmp(k, "ranks")) {
        if (*have_ranks) BAD("ranks= and frac= given twice or together");
        if (!parse_ranks(v, s)) BAD("ranks=%s: want all, R or R+R+... (at most %d)", v, NOISE_MAX_LIST);
        *have_ranks = 1;
    } else if (!strcmp(k, "frac")) {
        if (*have_ranks) BAD("ranks= and frac= given twice or together");
        if (!parse_double(v, &x) || x <= 0 || x > 1) BAD("frac=%s: want a fraction in (0,1]", v);
        s->ranks = NOISE_RANKS_FRAC;
        s->frac = x;
        *have_ranks = 1;
    } else if (!strcmp(k, "how")) {
        if (!strcmp(v, "sleep"))
            s->spin = 0;
        else if (!strcmp(v, "spin"))
            s->spin = 1;
        else
            BAD("how=%s: want sleep or spin", v);
    } else {
        BAD("unknown key '%s' for %s noise", k, periodic ? "periodic" : "random");
    }
#undef BAD
    return 0;
}

int noise_parse(const char *spec, noise_spec_t *out, char *err, size_t errlen)
{
    char buf[512];
    const char *body = spec;
    int have_ranks = 0;
    if (!strcmp(spec, "none") || !strcmp(spec, "off")) {
        defaults(out, NOISE_OFF);
        return 0;
    }
    const char *colon = strchr(spec, ':'), *eq = strchr(spec, '=');
    if (colon && (!eq || colon < eq)) { /* a MODE: prefix */
        size_t n = (size_t) (colon - spec);
        if (n == 8 && !strncmp(spec, "periodic", 8))
            defaults(out, NOISE_PERIODIC);
        else if (n == 6 && !strncmp(spec, "random", 6))
            defaults(out, NOISE_RANDOM);
        else {
            snprintf(err, errlen, "unknown noise mode '%.*s' (random or periodic)", (int) n, spec);
            return -1;
        }
        body = colon + 1;
    } else {
        defaults(out, NOISE_RANDOM);
    }
    if (strlen(body) >= sizeof(buf)) {
        snprintf(err, errlen, "noise spec too long");
        return -1;
    }
    strcpy(buf, body);
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *sep = strchr(item, '=');
        if (!sep || sep == item) {
            snprintf(err, errlen, "'%s' is not KEY=VALUE", item);
            return -1;
        }
        *sep = '\0';
        if (set_key(out, item, sep + 1, &have_ranks, err, errlen)) return -1;
    }
    if (out->cap_us == 0.0) out->cap_us = 20.0 * out->d_us;
    if (out->mode == NOISE_RANDOM && out->cap_us < out->d_us) {
        snprintf(err, errlen, "cap (%gus) below d (%gus)", out->cap_us, out->d_us);
        return -1;
    }
    return 0;
}

static void fmt_dur(double us, char *b, size_t n)
{
    if (us >= 1e3 && fmod(us, 1e3) == 0.0)
        snprintf(b, n, "%gms", us / 1e3);
    else
        snprintf(b, n, "%gus", us);
}

void noise_format(const noise_spec_t *s, char *buf, size_t len)
{
    char d[32], x[32], ranks[8 * NOISE_MAX_LIST + 16] = "ranks=all";
    if (s->mode == NOISE_OFF) {
        snprintf(buf, len, "none");
        return;
    }
    if (s->ranks == NOISE_RANKS_LIST) {
        size_t o = (size_t) snprintf(ranks, sizeof(ranks), "ranks=");
        for (int i = 0; i < s->nlist; i++)
            o += (size_t) snprintf(ranks + o, sizeof(ranks) - o, "%s%d", i ? "+" : "", s->list[i]);
    } else if (s->ranks == NOISE_RANKS_FRAC) {
        snprintf(ranks, sizeof(ranks), "frac=%g", s->frac);
    }
    fmt_dur(s->d_us, d, sizeof(d));
    if (s->mode == NOISE_PERIODIC) {
        fmt_dur(s->every_us, x, sizeof(x));
        snprintf(buf, len, "periodic:d=%s,every=%s,phase=%s,%s,how=%s", d, x, s->phase_same ? "same" : "rand", ranks,
                 s->spin ? "spin" : "sleep");
    } else {
        static const char *names[] = {"fixed", "exp", "pareto"};
        char cap[64] = "";
        if (s->dist != NOISE_FIXED) {
            fmt_dur(s->cap_us, x, sizeof(x));
            if (s->dist == NOISE_PARETO)
                snprintf(cap, sizeof(cap), ",alpha=%g,cap=%s", s->alpha, x);
            else
                snprintf(cap, sizeof(cap), ",cap=%s", x);
        }
        snprintf(buf, len, "random:p=%g,d=%s,dist=%s%s,%s,how=%s", s->p, d, names[s->dist], cap, ranks,
                 s->spin ? "spin" : "sleep");
    }
}

int noise_check_ranks(const noise_spec_t *s, int nprocs, char *err, size_t errlen)
{
    if (s->ranks != NOISE_RANKS_LIST) return 0;
    for (int i = 0; i < s->nlist; i++)
        if (s->list[i] >= nprocs) {
            snprintf(err, errlen, "noisy rank %d is not a rank (np=%d)", s->list[i], nprocs);
            return -1;
        }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* who, when, how long                                                       */

int noise_rank_is_noisy(const noise_spec_t *s, uint64_t seed, int rank, int nprocs)
{
    if (s->mode == NOISE_OFF) return 0;
    if (s->ranks == NOISE_RANKS_ALL) return 1;
    if (s->ranks == NOISE_RANKS_LIST) {
        for (int i = 0; i < s->nlist; i++)
            if (s->list[i] == rank) return 1;
        return 0;
    }
    /* frac: the k ranks with the smallest keys (ties broken by rank) */
    int k = (int) floor(s->frac * nprocs + 0.5);
    if (k < 1) k = 1;
    if (k > nprocs) k = nprocs;
    double mine = uniform(seed, rank, -1, 3);
    int below = 0;
    for (int r = 0; r < nprocs; r++) {
        double x = uniform(seed, r, -1, 3);
        if (x < mine || (x == mine && r < rank)) below++;
    }
    return below < k;
}

void noise_setup(noise_state_t *st, const noise_spec_t *spec, uint64_t seed, int rank, int nprocs, double origin)
{
    memset(st, 0, sizeof(*st));
    st->spec = *spec;
    st->seed = seed;
    st->rank = rank;
    st->nprocs = nprocs;
    st->noisy = noise_rank_is_noisy(spec, seed, rank, nprocs);
    st->origin = origin;
    if (spec->mode == NOISE_PERIODIC) {
        st->phase_us = spec->phase_same ? 0.0 : uniform(seed, rank, -2, 2) * spec->every_us;
        st->next_due = origin + 1e-6 * st->phase_us;
    }
}

double noise_random_event(const noise_state_t *st, long iter)
{
    const noise_spec_t *s = &st->spec;
    if (s->mode != NOISE_RANDOM || !st->noisy) return 0.0;
    if (uniform(st->seed, st->rank, iter, 0) >= s->p) return 0.0;
    double u = uniform(st->seed, st->rank, iter, 1), d;
    switch (s->dist) {
    case NOISE_EXP: d = -s->d_us * log1p(-u); break;
    case NOISE_PARETO: d = s->d_us / pow(1.0 - u, 1.0 / s->alpha); break;
    default: return s->d_us;
    }
    return d < s->cap_us ? d : s->cap_us;
}

/* ------------------------------------------------------------------------ */
/* time                                                                      */

double noise_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

void noise_wait_until(double deadline, int spin)
{
    if (spin) {
        while (noise_now() < deadline) { /* busy */
        }
        return;
    }
    struct timespec ts;
    ts.tv_sec = (time_t) deadline;
    ts.tv_nsec = (long) ((deadline - (double) ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    if (ts.tv_nsec < 0) ts.tv_nsec = 0;
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

double noise_work(noise_state_t *st, long iter, double compute_us, int spin_compute, noise_poll_fn poll, void *poll_arg,
                  double poll_us)
{
    double t0 = noise_now();
    double end_compute = t0 + 1e-6 * compute_us;
    if (poll && poll_us > 0) {
        for (;;) {
            poll(poll_arg);
            double next = noise_now() + 1e-6 * poll_us;
            if (next >= end_compute) break;
            noise_wait_until(next, spin_compute);
        }
    }
    noise_wait_until(end_compute, spin_compute);

    double noise_us = 0.0;
    long events = 0;
    if (st->spec.mode == NOISE_RANDOM) {
        noise_us = noise_random_event(st, iter);
        events = noise_us > 0;
    } else if (st->spec.mode == NOISE_PERIODIC && st->noisy) {
        /* every event due before the noise would end: pending ones (due in
         * the collective), ones due in the compute, and ones due during the
         * noise itself */
        double end = end_compute, d = 1e-6 * st->spec.d_us, every = 1e-6 * st->spec.every_us;
        while (st->next_due < end) {
            end += d;
            st->next_due += every;
            events++;
        }
        noise_us = events * st->spec.d_us;
    }
    if (noise_us > 0) noise_wait_until(end_compute + 1e-6 * noise_us, st->spec.spin);
    st->total_us += noise_us;
    st->events += events;
    return noise_us;
}
