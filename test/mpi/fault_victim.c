/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * A job that loses a rank in the middle of a long collective: every rank
 * loops over 64 MiB MPI_Bcast and MPI_Allreduce calls on MPI_COMM_WORLD (so
 * at any moment nearly every rank is inside a collective, waiting for its
 * peers); one rank dies by SIGKILL. test/mpi/faults.sh checks that the whole
 * job then ends quickly with Open MPI's error, and that no process is left.
 *
 *   fault_victim [--victim R (1)] [--self-kill MIN:MAX] [--seed S (1)]
 *                [--stamp FILE] [--pid-dir DIR] [--bytes B (67108864)]
 *                [--calls N (1000000)] [--thread-multiple] [--tag ANY]
 *
 * --self-kill MIN:MAX: rank R kills itself with raise(SIGKILL) after a delay
 * drawn from [MIN, MAX] milliseconds (by --seed), counted from its first
 * collective. It first writes the time of the kill (CLOCK_REALTIME, seconds)
 * to FILE, so that the script can measure how long the job took to end.
 * --pid-dir DIR: every rank writes its pid to DIR/pid.<rank> once it has
 * entered its first collective, so that the script can kill one itself.
 * Without either, the loop ends after N calls and the program exits 0 (a
 * run without a fault is the control; the loop is counted, not timed, as
 * every rank must make the same calls). --tag is ignored: the script puts
 * a unique string on the command line to find its own processes.
 */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mpi_check.h"

typedef struct options {
    int victim, thread_multiple;
    long min_ms, max_ms, bytes, calls;
    unsigned seed;
    const char *stamp, *pid_dir;
} options_t;

static options_t o = {.victim = 1, .min_ms = -1, .bytes = 64L << 20, .calls = 1000000, .seed = 1};

static void parse(int argc, char **argv)
{
    static struct option longopts[] = {{"victim", 1, 0, 'v'}, {"self-kill", 1, 0, 'k'},       {"seed", 1, 0, 's'},
                                       {"stamp", 1, 0, 'f'},  {"pid-dir", 1, 0, 'p'},         {"bytes", 1, 0, 'b'},
                                       {"calls", 1, 0, 'c'},  {"thread-multiple", 0, 0, 'm'}, {"tag", 1, 0, 'g'},
                                       {0, 0, 0, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "v:k:s:f:p:b:c:mg:", longopts, NULL)) != -1) {
        switch (ch) {
        case 'v': o.victim = atoi(optarg); break;
        case 'k':
            if (sscanf(optarg, "%ld:%ld", &o.min_ms, &o.max_ms) != 2 || o.min_ms < 0 || o.max_ms < o.min_ms)
                fail("--self-kill MIN:MAX (milliseconds)");
            break;
        case 's': o.seed = (unsigned) strtoul(optarg, NULL, 0); break;
        case 'f': o.stamp = optarg; break;
        case 'p': o.pid_dir = optarg; break;
        case 'b': o.bytes = atol(optarg); break;
        case 'c': o.calls = atol(optarg); break;
        case 'm': o.thread_multiple = 1; break;
        case 'g': break;
        default: fail("usage: see the comment at the top of fault_victim.c");
        }
    }
}

/* The victim's killer: sleeps, records the time, and kills its process.
 * A thread, so that the kill lands wherever the main thread is: inside a
 * collective nearly always. */
static void *killer(void *arg)
{
    long ms = *(long *) arg;
    struct timespec delay = {ms / 1000, (ms % 1000) * 1000000L}, now;
    nanosleep(&delay, NULL);
    clock_gettime(CLOCK_REALTIME, &now);
    if (o.stamp) {
        FILE *f = fopen(o.stamp, "w");
        if (f) {
            fprintf(f, "%ld.%09ld\n", (long) now.tv_sec, now.tv_nsec);
            fclose(f);
        }
    }
    fprintf(stderr, "fault_victim: rank %d raising SIGKILL after %ld ms\n", o.victim, ms);
    raise(SIGKILL);
    return NULL;
}

static void write_pid(int rank)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/pid.%d", o.pid_dir, rank);
    FILE *f = fopen(path, "w");
    if (!f) fail("cannot write %s", path);
    fprintf(f, "%d\n", (int) getpid());
    fclose(f);
}

int main(int argc, char **argv)
{
    int rank, size, provided;
    parse(argc, argv);
    MPI_Init_thread(&argc, &argv, o.thread_multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (o.thread_multiple && provided < MPI_THREAD_MULTIPLE) fail("MPI_THREAD_MULTIPLE not provided");
    int count = (int) (o.bytes / (long) sizeof(int));
    int *a = malloc((size_t) count * sizeof *a), *b = malloc((size_t) count * sizeof *b);
    if (!a || !b) fail("out of memory");
    for (int i = 0; i < count; ++i) a[i] = i ^ rank;

    static long delay_ms;
    pthread_t th;
    if (o.min_ms >= 0 && rank == o.victim) {
        srand(o.seed);
        delay_ms = o.min_ms + rand() % (o.max_ms - o.min_ms + 1);
    }
    for (long call = 0; call < o.calls; ++call) {
        if (call == 0 && o.min_ms >= 0 && rank == o.victim) pthread_create(&th, NULL, killer, &delay_ms);
        if (call % 2)
            MPI_Allreduce(a, b, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        else
            MPI_Bcast(b, count, MPI_INT, (int) (call / 2 % size), MPI_COMM_WORLD);
        /* after the first call, so the kill comes while a collective is on */
        if (call == 0 && o.pid_dir) write_pid(rank);
    }
    if (rank == 0) printf("fault_victim: np %d: no fault, %ld collectives: ok\n", size, o.calls);
    free(a);
    free(b);
    MPI_Finalize();
    return 0;
}
