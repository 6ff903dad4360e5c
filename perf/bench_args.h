/* Argument parsing shared by the benchmarks under perf/. */
#ifndef ADAPT2_PERF_BENCH_ARGS_H
#define ADAPT2_PERF_BENCH_ARGS_H

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

/* A byte count with an optional K, M or G suffix (binary), also written KiB
 * or KB: 64K, 64KiB and 64KB are all 65536. 1 on success. */
static inline int parse_size(const char *s, size_t *out)
{
    char *end;
    if (!*s || !isdigit((unsigned char)*s)) return 0;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10), mult = 1;
    if (errno) return 0;
    if (*end) {
        switch (toupper((unsigned char)*end)) {
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
    *out = (size_t)(v * mult);
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
    *out = (int)v;
    return 1;
}

#endif
