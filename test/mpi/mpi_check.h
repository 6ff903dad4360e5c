/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/* Helpers shared by adapt2's MPI test programs: MPI_T access to adapt2's
 * counters and parameters, and reporting of failures. */
#ifndef ADAPT2_MPI_CHECK_H
#define ADAPT2_MPI_CHECK_H

#include <mpi.h>
#include <stdint.h>

/* How much an adapt2 counter (e.g. "coll_adapt2_bcast_calls") grew since
 * this process first asked for it (0 the first time), or -1 if adapt2 is not
 * loaded. */
long long adapt2_counter(const char *name);

/* Sets an adapt2 control variable for all later calls on this process. Every
 * rank must set the same value. Aborts if the variable does not exist. */
void adapt2_set_string(const char *name, const char *value); /* a string or an enum's name */
/* Any type, from text (an enum by name or number), as --set NAME=VALUE gives it. */
void adapt2_set(const char *name, const char *text);
void adapt2_set_long(const char *name, long value);
void adapt2_set_int(const char *name, int value);
/* Current value of a control variable of an integer or bool type, an
 * enumeration's as its number (-1 if unknown). */
long adapt2_get_long(const char *name);
/* Whether enumeration control variable `name` has the value named `item`
 * (aborts if either is unknown). */
int adapt2_enum_is(const char *name, const char *item);

/* Prints the message with the rank and aborts the job: a test failure. */
void fail(const char *fmt, ...);

/* Sum of local error counts over the communicator; ranks print their own. */
long long total_errors(long long local, MPI_Comm comm);

/* Rank 0 prints "PROGRAM: WHAT per rank: FEWEST-MOST" of a count each rank
 * has (exact where interleaved verbose lines are not: test/mpi/direct.sh). */
void print_per_rank_range(const char *program, const char *what, long long local, MPI_Comm comm);
/* The same for 1-4 counts in one collective (tests count the program's own
 * collectives in verbose lines). */
void print_per_rank_ranges(const char *program, int n, const char *const *what, const long long *local, MPI_Comm comm);

/* The MPI_THREAD_MULTIPLE harness. `workers` holds `count` structs of
 * `size` bytes, each beginning with a thread_worker_t. threads_init gives
 * each its own duplicate of MPI_COMM_WORLD (creating communicators runs
 * collectives: take counter baselines after it) and its index as id;
 * threads_run runs `fn` on each on its own thread and returns when all have
 * finished; threads_free frees the communicators. */
typedef struct {
    MPI_Comm comm;
    int id;
} thread_worker_t;
void threads_init(void *workers, int count, size_t size);
void threads_run(void *workers, int count, size_t size, void *(*fn)(void *) );
void threads_free(void *workers, int count, size_t size);
/* MPI_Init_thread asking for MPI_THREAD_MULTIPLE; fails if not provided. */
void init_thread_multiple(int *argc, char ***argv);
/* MPI_Init (thread_multiple: init_thread_multiple), then this rank and the
 * size of MPI_COMM_WORLD. */
void mpi_start(int *argc, char ***argv, int thread_multiple, int *rank, int *size);
/* Positional argument i as an int, or `deflt` when there is none. */
int int_arg(int argc, char **argv, int i, int deflt);
/* MPI_(I)Reduce or MPI_(I)Allreduce (`all`), waited for when non-blocking. */
void reduce_call(const void *in, void *out, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm, int all,
                 int blocking);

/* Splits a comma-separated list in place into at most `max` items; returns
 * how many. */
int split_list(char *arg, char **out, int max);
/* Comma-separated numbers (at most `max`), and "R:S,..." receive:send
 * window pairs (a malformed pair fails the test); each returns how many. */
int parse_ints(char *arg, int *out, int max);
/* MPI started: the options of the derived-type broadcast tests (bcast_cut,
 * bcast_misaligned): --counts N,N.. (replaces `counts`, at most `max`),
 * --root R (modulo the world's size), --nonblocking. */
void bcast_test_options(int argc, char **argv, int *counts, int max, int *ncounts, int *root, int *nonblocking);
int parse_longs(char *arg, long *out, int max);
int parse_windows(char *arg, int *recv, int *send, int max);

/* The expected byte of a message at a position, for a given call. */
static inline unsigned char pattern_byte(int call, int root, size_t pos)
{
    uint64_t x = (uint64_t) pos * 2654435761u + (uint64_t) call * 40503u + (uint64_t) root * 977u;
    return (unsigned char) (x ^ (x >> 13) ^ (x >> 29));
}

#endif
