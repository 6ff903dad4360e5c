/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * noise: a reusable, deterministic OS-noise injector for MPI benchmarks.
 *
 * Plain C, no MPI: a process describes its noise with a spec string, asks
 * noise_setup() for the state of its rank, and calls noise_work() once per
 * iteration instead of its own "compute" step.  noise_work() computes for W
 * microseconds (sleep by default, or spin) and then injects this iteration's
 * noise (sleep by default, or spin) on top.
 *
 * Deterministic for a seed: whether rank r is noisy, whether iteration i on
 * rank r has an event and how long it lasts are pure functions of
 * (seed, r, i) (a counter-based hash, no RNG state), so the same seed gives
 * the same noise on every run and for every component.  Periodic noise is
 * deterministic in time (the events of rank r are due at phase_r + k*P on
 * its own clock), not in iterations.
 *
 * Spec syntax (also parsed by perf/compare.py; keep the two in sync):
 *
 *   none                          no noise
 *   [random:]KEY=VAL,...          per iteration, with probability p, one
 *                                 event of a random duration
 *   periodic:KEY=VAL,...          D every P on each noisy rank, like an OS
 *                                 daemon, with a per-rank phase
 *
 *   random keys    p=PROB         probability per iteration (default 0.1)
 *                  d=DUR          fixed: the duration; exp: the mean; pareto:
 *                                 the minimum (scale) (default 5ms)
 *                  dist=fixed|exp|pareto   (default fixed)
 *                  alpha=A        Pareto shape, > 0 (default 1.5; mean
 *                                 alpha*d/(alpha-1) before the cap)
 *                  cap=DUR        upper bound of exp/pareto durations
 *                                 (default 20*d)
 *   periodic keys  d=DUR          duration of each event (default 5ms)
 *                  every=DUR      period (default 50ms)
 *                  phase=rand|same  per-rank phase drawn from the seed in
 *                                 [0, every) (default), or 0 on every rank
 *                                 (co-scheduled daemons)
 *   common keys    ranks=all|R|R+R+...   which ranks are noisy (default all)
 *                  frac=F         instead of ranks=: a fraction of the ranks,
 *                                 round(F*np) of them (at least 1 if F > 0),
 *                                 chosen by the seed
 *                  how=sleep|spin noise sleeps (default: the core is free for
 *                                 other ranks of an oversubscribed node) or
 *                                 spins (dedicated cores)
 *   DUR            a number with unit us, ms or s (no unit: us)
 *
 * Timing: everything is measured from absolute deadlines on CLOCK_MONOTONIC
 * anchored at the start of the iteration's work: compute ends at t0 + W,
 * noise at t0 + W + noise.  So an injected event costs exactly its nominal
 * duration on top of the compute (the wake-up overshoot of a sleep is the
 * same with and without noise), and the nominal durations are what the
 * injector reports.  Periodic events that fall due while the rank is inside
 * the collective are delivered at its next noise_work() (a single-threaded
 * injector cannot preempt MPI); events due during the compute or the noise
 * itself extend it at once.
 */
#ifndef PERF_NOISE_H
#define PERF_NOISE_H

#include <stddef.h>
#include <stdint.h>

#define NOISE_MAX_LIST 64

typedef enum { NOISE_OFF, NOISE_RANDOM, NOISE_PERIODIC } noise_mode_t;
typedef enum { NOISE_FIXED, NOISE_EXP, NOISE_PARETO } noise_dist_t;
typedef enum { NOISE_RANKS_ALL, NOISE_RANKS_LIST, NOISE_RANKS_FRAC } noise_ranks_t;

typedef struct {
    noise_mode_t mode;
    double p;    /* random: probability per iteration */
    double d_us; /* duration (fixed), mean (exp), scale (pareto), periodic event */
    noise_dist_t dist;
    double alpha;    /* pareto shape */
    double cap_us;   /* exp/pareto cap; 0: 20*d */
    double every_us; /* periodic: period */
    int phase_same;  /* periodic: phase 0 everywhere */
    noise_ranks_t ranks;
    int list[NOISE_MAX_LIST], nlist;
    double frac;
    int spin; /* noise spins instead of sleeping */
} noise_spec_t;

/* Per-rank state of one noisy (or clean) loop. */
typedef struct {
    noise_spec_t spec;
    uint64_t seed;
    int rank, nprocs;
    int noisy;       /* this rank gets noise */
    double phase_us; /* periodic: first event due at loop start + phase */
    double next_due; /* periodic: absolute time (s) of the next event */
    double origin;   /* the loop's start (s, CLOCK_MONOTONIC) */
    double total_us; /* noise injected so far */
    long events;     /* events injected so far */
} noise_state_t;

/* Parses SPEC.  0 on success; otherwise -1 and a message in err. */
int noise_parse(const char *spec, noise_spec_t *out, char *err, size_t errlen);

/* Writes the spec back in canonical form (every key, defaults filled in). */
void noise_format(const noise_spec_t *spec, char *buf, size_t len);

/* Checks the spec against the number of ranks (ranks= in range).  0 or -1. */
int noise_check_ranks(const noise_spec_t *spec, int nprocs, char *err, size_t errlen);

/* Whether `rank` is one of the noisy ranks for (spec, seed, nprocs). */
int noise_rank_is_noisy(const noise_spec_t *spec, uint64_t seed, int rank, int nprocs);

/* Prepares the state of one loop on `rank`; origin: the loop's start time. */
void noise_setup(noise_state_t *st, const noise_spec_t *spec, uint64_t seed, int rank, int nprocs, double origin);

/* The nominal duration (us) of the random event of iteration `iter` on this
 * rank (0: none); a pure function of (spec, seed, rank, iter). */
double noise_random_event(const noise_state_t *st, long iter);

/* Callback run repeatedly during the compute part (e.g. MPI_Test), at most
 * every poll_us; NULL: none. */
typedef void (*noise_poll_fn)(void *arg);

/* One iteration's work: computes for compute_us (spin_compute: busy loop,
 * otherwise sleep; poll called every poll_us during the compute if given),
 * then injects this iteration's noise.  Returns the noise injected (us). */
double noise_work(noise_state_t *st, long iter, double compute_us, int spin_compute, noise_poll_fn poll, void *poll_arg,
                  double poll_us);

/* CLOCK_MONOTONIC in seconds. */
double noise_now(void);

/* Sleeps (or spins) until the absolute CLOCK_MONOTONIC time `deadline`. */
void noise_wait_until(double deadline, int spin);

#endif
