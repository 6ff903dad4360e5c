/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * Where a communicator's ranks are: their node and, on this rank's node,
 * their NUMA domain. The engine builds multi-level trees from it (node
 * leaders, then NUMA leaders, then cores; engine/topology.h).
 *
 * Nodes come from Open MPI's view of the processes (their hostnames), or
 * from coll_adapt2_nodes, which declares node boundaries by hand so the
 * multi-level logic can be tested on one host. NUMA domains come from the
 * locality strings the runtime gives for processes on this node (bound
 * processes only). Every rank of a node derives the same numbers without
 * communicating (no blocking communication before the first collective may
 * be needed). Ranks on other nodes get domain 0: a rank's parent and
 * children never depend on the inside of other nodes.
 */
#include <errno.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "coll_adapt2.h"

#include "ompi/proc/proc.h"
#include "opal/util/proc.h"

/* The multi-level parts of a call's tree settings. */
void mca_coll_adapt2_topology_settings(adapt2_tree_settings_t *s, const mca_coll_adapt2_module_t *module)
{
    s->topology = module->multi_level && ADAPT2_INT(topology);
    if (!s->topology) {
        return;
    }
    s->node_algorithm = mca_coll_adapt2_checked_algorithm(ADAPT2_P_node_algorithm);
    s->numa_algorithm = mca_coll_adapt2_checked_algorithm(ADAPT2_P_numa_algorithm);
    s->topology_segment_size = (size_t) ADAPT2_LONG(topology_segment_size);
    s->node_segment_size = (size_t) ADAPT2_LONG(node_segment_size);
    s->numa_segment_size = (size_t) ADAPT2_LONG(numa_segment_size);
    s->node_message_cost = (size_t) ADAPT2_LONG(node_message_cost);
}

/* The name btl `btl` gives its single_copy_mechanism ("cma", "none", ...),
 * NULL where that btl is not loaded; the caller frees it. */
static char *single_copy_mechanism(const char *btl)
{
    const mca_base_var_t *var;
    const int *value = NULL;
    char *name = NULL;
    int index = mca_base_var_find("opal", "btl", btl, "single_copy_mechanism");
    if (index < 0 || OPAL_SUCCESS != mca_base_var_get(index, &var) || NULL == var->mbv_enumerator ||
        OPAL_SUCCESS != mca_base_var_get_value(index, &value, NULL, NULL) || NULL == value ||
        OPAL_SUCCESS != var->mbv_enumerator->string_from_value(var->mbv_enumerator, *value, &name)) {
        return NULL;
    }
    return name;
}

/* Every rank must plan a broadcast alike, so `auto` cannot follow what
 * differs between nodes (whether vader fell back to none on this one, how
 * many ranks share its cores): it keeps the wide tree (yes), and says at
 * verbose 10, once per process, where the btl has no single copy, that `no`
 * may pay where every rank has a core of its own (on an oversubscribed node
 * the copies share the cores whatever the tree: np 4 and 8 on 2 cores took
 * 1.4-2.4x the wide tree's time with the two trees at 64-512 KiB,
 * docs/measurements.md). */
static void hint_without_single_copy(void)
{
    static bool hinted = false; /* a second hint from a racing first call is harmless */
    if (hinted) {
        return;
    }
    hinted = true;
    const char *btls[] = {"vader", "sm"};
    for (size_t i = 0; i < sizeof btls / sizeof btls[0]; ++i) {
        char *name = single_copy_mechanism(btls[i]);
        if (NULL == name) {
            continue;
        }
        if (0 == strcmp(name, "none")) {
            ADAPT2_VERBOSE(10,
                           "btl %s's single_copy_mechanism is none: where every rank has a core, "
                           "--mca coll_adapt2_single_copy no sends broadcasts from 64 KiB down the two "
                           "trees inside a node (auto keeps the wide tree: every rank must choose alike)",
                           btls[i]);
        }
        free(name);
        break;
    }
}

int mca_coll_adapt2_single_copy(void)
{
    const char *setting = ADAPT2_STRING(single_copy);
    if (0 == strcmp(setting, "no")) {
        return 0;
    }
    if (0 == strcmp(setting, "auto")) {
        hint_without_single_copy();
    }
    return 1;
}

static int world_rank_of(ompi_proc_t *proc)
{
    return (int) proc->super.proc_name.vpid;
}

/* Node of each world rank from "block:N", "cyclic:N" or "list:A,B,...";
 * false (reported) when the value is malformed. */
static bool declared_node(const char *spec, int world_rank, int *node)
{
    long n;
    char *end;
    if (0 == strncmp(spec, "block:", 6) || 0 == strncmp(spec, "cyclic:", 7)) {
        bool block = 'b' == spec[0];
        n = strtol(spec + (block ? 6 : 7), &end, 10);
        if (n < 1 || n > INT_MAX || *end != '\0') {
            return false;
        }
        *node = block ? (int) (world_rank / n) : (int) (world_rank % n);
        return true;
    }
    if (0 != strncmp(spec, "list:", 5)) {
        return false;
    }
    /* Every entry is checked, not only those up to this rank's: all ranks
     * must accept or reject the same list. */
    const char *p = spec + 5;
    bool found = false;
    for (int i = 0;; ++i) {
        errno = 0;
        n = strtol(p, &end, 10);
        if (end == p || n < 0 || n > INT_MAX || ERANGE == errno || (*end != ',' && *end != '\0')) {
            return false;
        }
        if (i == world_rank) {
            *node = (int) n;
            found = true;
        }
        if (*end == '\0') {
            return found; /* false: the list is shorter than the world */
        }
        p = end + 1;
    }
}

typedef struct host_of_rank {
    const char *name; /* NULL: unknown, a node of its own */
    int rank;
} host_of_rank_t;

static int by_name_then_rank(const void *a, const void *b)
{
    const host_of_rank_t *x = a, *y = b;
    int c = (x->name && y->name) ? strcmp(x->name, y->name) : (x->name != NULL) - (y->name != NULL);
    return c ? c : x->rank - y->rank;
}

/* Node numbers from hostnames: the lowest rank on the same host. Sorted,
 * so a communicator of p ranks costs O(p log p), once. */
static bool nodes_from_hostnames(ompi_communicator_t *comm, int size, int *node)
{
    host_of_rank_t *hosts = malloc((size_t) size * sizeof *hosts);
    if (NULL == hosts) {
        return false;
    }
    for (int r = 0; r < size; ++r) {
        ompi_proc_t *proc = ompi_comm_peer_lookup(comm, r);
        hosts[r].name = proc ? opal_get_proc_hostname(&proc->super) : NULL;
        hosts[r].rank = r;
    }
    qsort(hosts, (size_t) size, sizeof *hosts, by_name_then_rank);
    for (int i = 0, first = 0; i < size; ++i) {
        bool same_host = i > 0 && hosts[i].name && hosts[first].name && 0 == strcmp(hosts[i].name, hosts[first].name);
        if (!same_host) {
            first = i;
        }
        node[hosts[i].rank] = hosts[first].rank;
    }
    free(hosts);
    return true;
}

static bool nodes_declared(ompi_communicator_t *comm, int size, const char *spec, int *node)
{
    for (int r = 0; r < size; ++r) {
        ompi_proc_t *proc = ompi_comm_peer_lookup(comm, r);
        if (NULL == proc || !declared_node(spec, world_rank_of(proc), &node[r])) {
            mca_coll_adapt2_report_invalid("nodes", spec, "(Open MPI's view)",
                                           "expected block:N, cyclic:N or list:A,B,... covering "
                                           "every world rank");
            return false;
        }
    }
    return true;
}

/* The NUMA domain (else socket) number in a locality string, or -1. */
static int domain_in_locality(const char *loc)
{
    static const char *keys[] = {"NM", "SK"};
    for (int k = 0; k < 2 && loc; ++k) {
        for (const char *p = strstr(loc, keys[k]); p; p = strstr(p + 2, keys[k])) {
            if (isdigit((unsigned char) p[2]) && (p == loc || p[-1] == ':')) {
                return atoi(p + 2);
            }
        }
    }
    return -1;
}

/* NUMA domains of the ranks on this node; false if any is unknown (then the
 * node counts as one domain: all its ranks see the same strings). */
static bool numa_of_local_ranks(ompi_communicator_t *comm, int size, const int *node, int *numa)
{
    const int me = ompi_comm_rank(comm);
    for (int r = 0; r < size; ++r) {
        numa[r] = 0;
        if (node[r] != node[me]) {
            continue;
        }
        ompi_proc_t *proc = ompi_comm_peer_lookup(comm, r);
        char *loc = NULL;
        int rc = proc ? adapt2_locality_string(proc, &loc) : OPAL_ERR_NOT_FOUND;
        numa[r] = OPAL_SUCCESS == rc ? domain_in_locality(loc) : -1;
        free(loc);
        if (numa[r] < 0) {
            return false;
        }
    }
    return true;
}

/* Fills node[] and numa[] (size entries each) for `comm`; returns whether
 * numa[] holds real domains. A declared layout (coll_adapt2_nodes) has none. */
bool mca_coll_adapt2_topology_of(ompi_communicator_t *comm, int *node, int *numa)
{
    const int size = ompi_comm_size(comm);
    const char *spec = ADAPT2_STRING(nodes);
    if (spec && spec[0] && nodes_declared(comm, size, spec, node)) {
        return false;
    }
    if (!nodes_from_hostnames(comm, size, node)) {
        for (int r = 0; r < size; ++r) {
            node[r] = 0;
        }
        return false;
    }
    return numa_of_local_ranks(comm, size, node, numa);
}
