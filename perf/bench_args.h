/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/* Argument parsing and start-up shared by the benchmarks under perf/. */
#ifndef ADAPT2_PERF_BENCH_ARGS_H
#define ADAPT2_PERF_BENCH_ARGS_H

#include <mpi.h>

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* A byte count with an optional K, M or G suffix (binary), also written KiB
 * or KB: 64K, 64KiB and 64KB are all 65536. 1 on success. */
static inline int parse_size(const char *s, size_t *out)
{
    char *end;
    if (!*s || !isdigit((unsigned char) *s)) return 0;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10), mult = 1;
    if (errno) return 0;
    if (*end) {
        switch (toupper((unsigned char) *end)) {
        case 'K': mult = 1ULL << 10; break;
        case 'M': mult = 1ULL << 20; break;
        case 'G': mult = 1ULL << 30; break;
        default: return 0;
        }
        end++;
        if (*end == 'i') end++;
        if (*end == 'B' || *end == 'b') end++;
        if (*end) return 0;
    }
    if (v > ULLONG_MAX / mult) return 0;
    *out = (size_t) (v * mult);
    return 1;
}

/* An integer of at least min. 1 on success. */
static inline int parse_int(const char *s, int min, int *out)
{
    char *end;
    if (!*s) return 0;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < min || v > INT_MAX) return 0;
    *out = (int) v;
    return 1;
}

/* Whether option `flag` is among argv's options (parsed with optstring as
 * getopt would), looked at before MPI_Init so that -t can choose
 * MPI_Init_thread's level.  Leaves getopt ready to parse argv again. */
static inline int option_given(int argc, char **argv, const char *optstring, int flag)
{
    int opt, found = 0, saved = opterr;
    opterr = 0;
    while ((opt = getopt(argc, argv, optstring)) != -1)
        if (opt == flag) found = 1;
    optind = 1;
    opterr = saved;
    return found;
}

/* MPI_Init, or with `multiple` (-t) MPI_Init_thread(MPI_THREAD_MULTIPLE);
 * returns the thread level provided. */
static inline int bench_mpi_init(int *argc, char ***argv, int multiple)
{
    int provided = MPI_THREAD_SINGLE;
    if (multiple)
        MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(argc, argv);
    MPI_Query_thread(&provided);
    return provided;
}

/* After parsing: on a usage error or -h, rank 0 prints the message and the
 * usage, MPI is finalized and the exit status is returned (2 for an error,
 * 0 for help); -1 means go on. Every rank parsed the same argv, so all take
 * the same branch. */
static inline int bench_stop_for_usage(int rank, const char *err, int help, const char *prog,
                                       void (*usage)(FILE *, const char *))
{
    if (!err && !help) return -1;
    if (0 == rank) {
        if (err) fprintf(stderr, "%s: %s\n", prog, err);
        usage(err ? stderr : stdout, prog);
    }
    MPI_Finalize();
    return err ? 2 : 0;
}

/* A thread level as a word (for the benchmarks' output). */
static inline const char *thread_level_name(int level)
{
    if (level == MPI_THREAD_MULTIPLE) return "multiple";
    if (level == MPI_THREAD_SERIALIZED) return "serialized";
    if (level == MPI_THREAD_FUNNELED) return "funneled";
    if (level == MPI_THREAD_SINGLE) return "single";
    return "unknown";
}

#endif
