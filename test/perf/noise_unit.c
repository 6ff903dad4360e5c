/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * Unit tests of the noise injector (perf/noise.[ch]), without MPI: spec
 * parsing and its canonical form, determinism for a seed, the choice of the
 * noisy ranks, the statistics of the random durations, periodic delivery, and
 * that noise_work really waits for compute + noise.
 */
#define _POSIX_C_SOURCE 200809L
#include "../../perf/noise.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int failures, checks;

#define CHECK(cond, ...)                                           \
    do {                                                           \
        checks++;                                                  \
        if (!(cond)) {                                             \
            failures++;                                            \
            printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            printf(__VA_ARGS__);                                   \
            printf("\n");                                          \
        }                                                          \
    } while (0)

static noise_spec_t parse_ok(const char *text)
{
    noise_spec_t s;
    char err[200] = "";
    int rc = noise_parse(text, &s, err, sizeof(err));
    CHECK(rc == 0, "'%s' rejected: %s", text, err);
    return s;
}

static void test_parse(void)
{
    static const char *good[] = {
        "p=0.1,d=5ms",
        "random:p=0.5,d=300",
        "p=0.1,d=2ms,dist=pareto,alpha=1.5,cap=50ms",
        "dist=exp,d=1.5ms",
        "periodic:d=2ms,every=20ms",
        "periodic:phase=same,how=spin",
        "p=1,ranks=0+3+5",
        "p=0,frac=0.25",
        "none",
        "",
        "p=.5,d=1e3us",
    };
    static const char *bad[] = {
        "p=2",
        "p=-0.1",
        "d=0",
        "d=5parsecs",
        "dist=normal",
        "alpha=0",
        "periodic:p=0.1",
        "every=20ms",
        "bogus:p=0.1",
        "p",
        "=3",
        "ranks=a",
        "ranks=1+",
        "frac=0",
        "frac=1.5",
        "ranks=1,frac=0.5",
        "d=5ms,cap=1ms",
        "how=yield",
        "periodic:phase=odd",
    };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        noise_spec_t s = parse_ok(good[i]), t;
        char a[512], b[512], err[200];
        noise_format(&s, a, sizeof(a));
        CHECK(noise_parse(a, &t, err, sizeof(err)) == 0, "canonical '%s' rejected: %s", a, err);
        noise_format(&t, b, sizeof(b));
        CHECK(!strcmp(a, b), "canonical form not stable: '%s' -> '%s'", a, b);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        noise_spec_t s;
        char err[200] = "";
        CHECK(noise_parse(bad[i], &s, err, sizeof(err)) != 0, "'%s' accepted", bad[i]);
        CHECK(err[0] != '\0', "'%s': no message", bad[i]);
    }
    noise_spec_t s = parse_ok("p=0.1");
    CHECK(s.mode == NOISE_RANDOM && s.d_us == 5000 && s.dist == NOISE_FIXED && !s.spin, "defaults");
    s = parse_ok("periodic:d=2ms,every=20ms");
    CHECK(s.mode == NOISE_PERIODIC && s.d_us == 2000 && s.every_us == 20000, "periodic");
    char err[200];
    s = parse_ok("ranks=0+7");
    CHECK(noise_check_ranks(&s, 8, err, sizeof(err)) == 0, "rank 7 of 8");
    CHECK(noise_check_ranks(&s, 7, err, sizeof(err)) != 0, "rank 7 of 7 accepted");
}

static void test_ranks(void)
{
    noise_spec_t s = parse_ok("ranks=1+3");
    for (int r = 0; r < 5; r++) CHECK(noise_rank_is_noisy(&s, 1, r, 5) == (r == 1 || r == 3), "list: rank %d", r);
    s = parse_ok("p=0.1");
    CHECK(noise_rank_is_noisy(&s, 1, 3, 4), "all");
    s = parse_ok("none");
    CHECK(!noise_rank_is_noisy(&s, 1, 0, 4), "none");
    int differs = 0;
    for (int np = 1; np <= 16; np++) {
        for (double frac = 0.1; frac <= 1.0; frac += 0.15) {
            char text[64];
            snprintf(text, sizeof(text), "frac=%g", frac);
            s = parse_ok(text);
            int want = (int) floor(frac * np + 0.5);
            want = want < 1 ? 1 : want;
            unsigned mask1 = 0;
            for (uint64_t seed = 1; seed <= 3; seed++) {
                int k = 0;
                unsigned mask = 0;
                for (int r = 0; r < np; r++)
                    if (noise_rank_is_noisy(&s, seed, r, np)) k++, mask |= 1u << r;
                CHECK(k == want, "np %d frac %g seed %llu: %d noisy ranks, want %d", np, frac,
                      (unsigned long long) seed, k, want);
                if (seed == 1)
                    mask1 = mask;
                else
                    differs |= mask != mask1;
            }
        }
    }
    CHECK(differs, "frac: the seed never changes the noisy ranks");
}

static void test_random(void)
{
    struct {
        const char *spec;
        double mean_us, tol;
    } cases[] = {
        {"p=0.1,d=5ms", 5000, 1e-9},
        {"p=0.2,d=1ms,dist=exp", 1000 * (1 - exp(-20.0)), 0.03},
        /* E[min(X, cap)] = d + d/(alpha-1) * (1 - (d/cap)^(alpha-1)) */
        {"p=0.3,d=2ms,dist=pareto,alpha=1.5,cap=50ms", 2000 + 4000 * (1 - sqrt(0.04)), 0.04},
    };
    const long n = 200000;
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        noise_spec_t s = parse_ok(cases[c].spec);
        noise_state_t a, b, other;
        noise_setup(&a, &s, 42, 2, 4, 0.0);
        noise_setup(&b, &s, 42, 2, 4, 0.0);
        noise_setup(&other, &s, 43, 2, 4, 0.0);
        long events = 0, same = 1, diff = 0;
        double sum = 0, mx = 0;
        for (long i = 0; i < n; i++) {
            double x = noise_random_event(&a, i);
            same &= x == noise_random_event(&b, i);
            diff += x != noise_random_event(&other, i);
            if (x > 0) events++, sum += x;
            mx = x > mx ? x : mx;
        }
        double freq = (double) events / n, mean = sum / events;
        CHECK(same, "%s: not deterministic", cases[c].spec);
        CHECK(diff > n / 100, "%s: another seed gives the same noise", cases[c].spec);
        CHECK(fabs(freq - s.p) < 0.01, "%s: frequency %g, want %g", cases[c].spec, freq, s.p);
        CHECK(fabs(mean - cases[c].mean_us) <= cases[c].tol * cases[c].mean_us + 1e-6, "%s: mean %g us, want %g",
              cases[c].spec, mean, cases[c].mean_us);
        CHECK(mx <= s.cap_us + 1e-9, "%s: max %g above the cap %g", cases[c].spec, mx, s.cap_us);
    }
    noise_spec_t s = parse_ok("p=1,ranks=1");
    noise_state_t st;
    noise_setup(&st, &s, 1, 0, 4, 0.0);
    CHECK(noise_random_event(&st, 0) == 0.0, "a quiet rank got noise");
}

static void test_work(void)
{
    /* random: compute 1 ms + an event of 3 ms on every iteration */
    noise_spec_t s = parse_ok("p=1,d=3ms");
    noise_state_t st;
    double t0 = noise_now();
    noise_setup(&st, &s, 1, 0, 1, t0);
    for (int i = 0; i < 3; i++) {
        double n = noise_work(&st, i, 1000, 0, NULL, NULL, 0);
        CHECK(n == 3000, "iteration %d: noise %g us", i, n);
    }
    double el = noise_now() - t0;
    CHECK(el >= 0.012 && el < 0.5, "3 x (1 ms + 3 ms) took %g s", el);
    CHECK(st.events == 3 && st.total_us == 9000, "events %ld total %g", st.events, st.total_us);

    /* spin */
    s = parse_ok("p=1,d=1ms,how=spin");
    t0 = noise_now();
    noise_setup(&st, &s, 1, 0, 1, t0);
    noise_work(&st, 0, 500, 1, NULL, NULL, 0);
    el = noise_now() - t0;
    CHECK(el >= 0.0015 && el < 0.5, "spin 0.5 ms + 1 ms took %g s", el);

    /* periodic: 200 us every 2 ms, phase 0: over ~40 ms of 1 ms computes
     * about 40 / 2 events, each delivered in full */
    s = parse_ok("periodic:d=200us,every=2ms,phase=same");
    t0 = noise_now();
    noise_setup(&st, &s, 1, 0, 1, t0);
    int it = 0;
    double longest = 0; /* a loaded machine may deschedule one iteration for ms */
    while (noise_now() - t0 < 0.04) {
        const double before = noise_now();
        noise_work(&st, it++, 1000, 0, NULL, NULL, 0);
        longest = fmax(longest, noise_now() - before);
    }
    el = noise_now() - t0;
    /* one event per 2 ms boundary a call started after; the last call's own
     * length (at most `longest`) may hold boundaries no call saw */
    const double most = el / 0.002, least = (el - longest) / 0.002;
    CHECK(st.events >= least - 2 && st.events <= most + 2, "periodic: %ld events in %g s (longest call %g s)",
          st.events, el, longest);
    CHECK(fabs(st.total_us - 200.0 * st.events) < 1e-6, "periodic total %g", st.total_us);

    /* per-rank phase: in [0, every), differs between ranks */
    s = parse_ok("periodic:d=1ms,every=10ms");
    noise_state_t r0, r1;
    noise_setup(&r0, &s, 5, 0, 2, 0.0);
    noise_setup(&r1, &s, 5, 1, 2, 0.0);
    CHECK(r0.phase_us >= 0 && r0.phase_us < 10000 && r1.phase_us >= 0 && r1.phase_us < 10000 &&
              r0.phase_us != r1.phase_us,
          "phases %g %g", r0.phase_us, r1.phase_us);
}

static int polls;
static void count_poll(void *arg)
{
    (void) arg;
    polls++;
}

static void test_poll(void)
{
    noise_spec_t s = parse_ok("none");
    noise_state_t st;
    noise_setup(&st, &s, 1, 0, 1, noise_now());
    polls = 0;
    noise_work(&st, 0, 5000, 0, count_poll, NULL, 500);
    CHECK(polls >= 2 && polls <= 11, "5 ms compute polled every 0.5 ms: %d polls", polls);
}

int main(void)
{
    test_parse();
    test_ranks();
    test_random();
    test_work();
    test_poll();
    printf("%d checks, %d failed\n", checks, failures);
    return failures ? 1 : 0;
}
