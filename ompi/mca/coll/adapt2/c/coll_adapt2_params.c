/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * MCA variable helpers. Values are re-checked at every call (they may be
 * changed at run time through MPI_T), and an invalid value is reported once,
 * with the parameter's name and the value used instead.
 */
#include <limits.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "coll_adapt2.h"

#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/base/mca_base_var_enum.h"
#include "opal/util/output.h"
#include "opal/util/proc.h"

static mca_base_component_t *component(void)
{
    return &mca_coll_adapt2_component.super.collm_version;
}

/* The parameters of params.def as data: name, kind, default, range or
 * names, help, and where the component keeps the value. */
enum { KIND_INT, KIND_LONG, KIND_STRING, KIND_ENUM };
#define ADAPT2_KIND_INT KIND_INT
#define ADAPT2_KIND_LONG KIND_LONG
#define ADAPT2_KIND_STRING KIND_STRING
#define ADAPT2_KIND_ENUM KIND_ENUM
#define ADAPT2_NUMBER_INT(d) (d)
#define ADAPT2_NUMBER_LONG(d) (d)
#define ADAPT2_NUMBER_STRING(d) 0
#define ADAPT2_NUMBER_ENUM(d) 0
#define ADAPT2_TEXT_INT(d) NULL
#define ADAPT2_TEXT_LONG(d) NULL
#define ADAPT2_TEXT_STRING(d) (d)
#define ADAPT2_TEXT_ENUM(d) (d)
#define ADAPT2_NAMES_INT(m) NULL
#define ADAPT2_NAMES_LONG(m) NULL
#define ADAPT2_NAMES_STRING(m) NULL
#define ADAPT2_NAMES_ENUM(m) (m)
#define ADAPT2_RANGE_INT(m) (m)
#define ADAPT2_RANGE_LONG(m) (m)
#define ADAPT2_RANGE_STRING(m) 0
#define ADAPT2_RANGE_ENUM(m) 0
static const struct param {
    const char *name;
    int kind;
    long deflt;        /* INT and LONG */
    const char *text;  /* STRING's and ENUM's default */
    const char *names; /* ENUM's names, comma-separated */
    long min, max;
    const char *help;
    size_t offset; /* in mca_coll_adapt2_component_t */
} params[] = {
#define ADAPT2_PARAM(TYPE, name, deflt, min, max, help) \
    {#name,                                             \
     ADAPT2_KIND_##TYPE,                                \
     ADAPT2_NUMBER_##TYPE(deflt),                       \
     ADAPT2_TEXT_##TYPE(deflt),                         \
     ADAPT2_NAMES_##TYPE(min),                          \
     ADAPT2_RANGE_##TYPE(min),                          \
     max,                                               \
     help,                                              \
     offsetof(mca_coll_adapt2_component_t, values.name)},
#include "../params.def"
#undef ADAPT2_PARAM
};

static void *storage(const struct param *p)
{
    return (char *) &mca_coll_adapt2_component + p->offset;
}

/* An ENUM's names, split once from params.def's list (they live as long as
 * the library: the values are read at every call). */
#define ADAPT2_MAX_NAMES 16
static struct enum_names {
    int count;
    int previous; /* the index of `previous`, or -1 */
    const char *name[ADAPT2_MAX_NAMES];
    char text[256];
} enum_names[ADAPT2_P_COUNT];

static const struct enum_names *names_of(mca_coll_adapt2_param_t id)
{
    struct enum_names *e = &enum_names[id];
    if (0 == e->count) { /* registration runs before any call, in one thread */
        snprintf(e->text, sizeof e->text, "%s", params[id].names);
        e->previous = -1;
        for (char *save = NULL, *n = strtok_r(e->text, ",", &save); n && e->count < ADAPT2_MAX_NAMES;
             n = strtok_r(NULL, ",", &save)) {
            if (0 == strcmp(n, "previous")) e->previous = e->count;
            e->name[e->count++] = n;
        }
    }
    return e;
}

static int index_of(const struct enum_names *e, const char *name)
{
    for (int i = 0; i < e->count; ++i) {
        if (0 == strcmp(e->name[i], name)) return i;
    }
    return -1;
}

/* An MCA enum over the names: ompi_info lists them, and Open MPI rejects
 * (and reports, with the valid names) any other value before adapt2 sees it. */
static mca_base_var_enum_t *enumerator_of(mca_coll_adapt2_param_t id)
{
    const struct enum_names *e = names_of(id);
    mca_base_var_enum_value_t values[ADAPT2_MAX_NAMES + 1];
    for (int i = 0; i < e->count; ++i) {
        values[i].value = i;
        values[i].string = e->name[i];
    }
    values[e->count].value = 0;
    values[e->count].string = NULL;
    mca_base_var_enum_t *enumerator = NULL;
    char name[96];
    snprintf(name, sizeof name, "coll_adapt2_%s", params[id].name);
    return OPAL_SUCCESS == mca_base_var_enum_create(name, values, &enumerator) ? enumerator : NULL;
}

/* An ENUM that Open MPI rejected keeps its default, but Open MPI's message
 * does not say so: adapt2 adds which value it uses (variables come to the
 * processes through the environment, from mpirun --mca or the user). */
static void say_enum_default(const struct param *p, int index)
{
    char var[96];
    snprintf(var, sizeof var, "OMPI_MCA_coll_adapt2_%s", p->name);
    const char *given = getenv(var);
    const struct enum_names *e = names_of((mca_coll_adapt2_param_t) (p - params));
    if (given && index >= 0 && index < e->count && 0 != strcmp(given, e->name[index]) &&
        (given[0] < '0' || given[0] > '9' || atoi(given) != index)) {
        char why[160] = "known:";
        for (int i = 0; i < e->count; ++i) {
            snprintf(why + strlen(why), sizeof why - strlen(why), "%s %s", i ? "," : "", e->name[i]);
        }
        mca_coll_adapt2_report_invalid(p->name, given, e->name[index], why);
    }
}

/* Variables are ALL_EQ (every rank must use the same value) and SETTABLE:
 * adapt2 reads them at every call, so MPI_T may change them between calls
 * (the tests and the tuning tool do). */
int mca_coll_adapt2_register_params(void)
{
    static const mca_base_var_type_t types[] = {MCA_BASE_VAR_TYPE_INT, MCA_BASE_VAR_TYPE_LONG, MCA_BASE_VAR_TYPE_STRING,
                                                MCA_BASE_VAR_TYPE_INT};
    for (size_t i = 0; i < sizeof params / sizeof params[0]; ++i) {
        const struct param *p = &params[i];
        mca_base_var_enum_t *enumerator = NULL;
        if (KIND_INT == p->kind) *(int *) storage(p) = (int) p->deflt;
        if (KIND_LONG == p->kind) *(long *) storage(p) = p->deflt;
        if (KIND_STRING == p->kind) *(char **) storage(p) = (char *) p->text;
        if (KIND_ENUM == p->kind) {
            *(int *) storage(p) = index_of(names_of((mca_coll_adapt2_param_t) i), p->text);
            enumerator = enumerator_of((mca_coll_adapt2_param_t) i);
        }
        int rc = mca_base_component_var_register(component(), p->name, p->help, types[p->kind], enumerator, 0,
                                                 MCA_BASE_VAR_FLAG_SETTABLE, OPAL_INFO_LVL_5, MCA_BASE_VAR_SCOPE_ALL_EQ,
                                                 storage(p));
        (void) rc; /* a value Open MPI rejected: it said so; keep registering the others */
        if (enumerator) {
            OBJ_RELEASE(enumerator); /* the variable holds it */
            say_enum_default(p, *(int *) storage(p));
        }
    }
    return OMPI_SUCCESS;
}

/* Remembers the last invalid value reported per parameter name, so a bad
 * value is reported once rather than at every call. */
/* More than adapt2 has parameters, so each is reported once even when all
 * are invalid at once. */
#define ADAPT2_MAX_REPORTED 128
static struct {
    const char *name;
    char value[64];
} reported[ADAPT2_MAX_REPORTED];
static opal_mutex_t reported_lock = OPAL_MUTEX_STATIC_INIT;

void mca_coll_adapt2_report_invalid(const char *name, const char *bad, const char *used, const char *why)
{
    int i, slot = -1;
    OPAL_THREAD_LOCK(&reported_lock);
    for (i = 0; i < ADAPT2_MAX_REPORTED; ++i) {
        if (reported[i].name == name || (reported[i].name && 0 == strcmp(reported[i].name, name))) {
            slot = i;
            break;
        }
        if (!reported[i].name && slot < 0) {
            slot = i;
        }
    }
    bool fresh = slot < 0 || !reported[slot].name || 0 != strncmp(reported[slot].value, bad, 63);
    if (fresh && slot >= 0) {
        reported[slot].name = name;
        strncpy(reported[slot].value, bad, 63);
    }
    OPAL_THREAD_UNLOCK(&reported_lock);
    if (fresh) {
        opal_output(0,
                    "coll:adapt2: invalid value '%s' for MCA parameter coll_adapt2_%s (%s); "
                    "using %s",
                    bad, name, why, used);
    }
}

static long checked_long(const char *name, long value, long min, long max, long deflt)
{
    if (value >= min && value <= max) {
        return value;
    }
    char bad[32], used[32], why[64];
    snprintf(bad, sizeof bad, "%ld", value);
    snprintf(used, sizeof used, "%ld", deflt);
    if (max == LONG_MAX) {
        snprintf(why, sizeof why, "must be at least %ld", min);
    } else {
        snprintf(why, sizeof why, "must be between %ld and %ld", min, max);
    }
    mca_coll_adapt2_report_invalid(name, bad, used, why);
    return deflt;
}

int mca_coll_adapt2_param_int(mca_coll_adapt2_param_t id)
{
    const struct param *p = &params[id];
    return (int) checked_long(p->name, *(int *) storage(p), p->min, p->max == INT_MAX ? LONG_MAX : p->max, p->deflt);
}

long mca_coll_adapt2_param_long(mca_coll_adapt2_param_t id)
{
    const struct param *p = &params[id];
    return checked_long(p->name, *(long *) storage(p), p->min, p->max, p->deflt);
}

int mca_coll_adapt2_param_enum(mca_coll_adapt2_param_t id)
{
    const struct param *p = &params[id];
    const struct enum_names *e = names_of(id);
    int index = *(int *) storage(p);
    if (index >= 0 && index < e->count) return index; /* read at every call: no lookup */
    int deflt = index_of(e, p->text);
    char bad[32], why[48]; /* MPI_T writes ints unchecked */
    snprintf(bad, sizeof bad, "%d", index);
    snprintf(why, sizeof why, "must be between 0 and %d", e->count - 1);
    mca_coll_adapt2_report_invalid(p->name, bad, e->name[deflt], why);
    return deflt;
}

const char *mca_coll_adapt2_param_string(mca_coll_adapt2_param_t id)
{
    const struct param *p = &params[id];
    if (KIND_ENUM == p->kind) {
        return names_of(id)->name[mca_coll_adapt2_param_enum(id)];
    }
    const char *value = *(char **) storage(p);
    return value ? value : "";
}

/* From what size a blocking broadcast root waits for its children's hellos
 * rather than copying at once (auto). With a core per rank the hello round
 * trip is cheaper than a copy from 8 KiB (np 2: a 64 KiB broadcast took 1.04x
 * the time it takes without decoupling, against 2.3x copying at once), and
 * dearer below (np 2, 512 B-4 KiB: 1.76-3.56 us copying at once, 2.92-8.73
 * waiting; noise amplification at 2-4 KiB 1.13-1.14 against 1.21); with
 * more ranks than cores, waiting for a descheduled root to react costs more
 * than a copy below 1 MiB (np 4 on 2 cores: 0.65-0.8x copying, 1.1-1.4x
 * waiting, up to 64 KiB; at 128-512 KiB copying took 0.33-0.66x the time of
 * waiting at np 4 and 8, at 1 MiB it was no faster; docs/design.md). */
static size_t auto_await_min_bytes(void)
{
    enum { COPY_BELOW_ONE_CORE_EACH = 8192, COPY_BELOW_OVERSUBSCRIBED = 1 << 20 };
    static int decided = -1; /* the same for every call of the process */
    if (decided < 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        bool oversubscribed = cores > 0 && opal_process_info.num_local_peers + 1 > cores;
        decided = oversubscribed;
        ADAPT2_VERBOSE(10,
                       "%d ranks on %ld cores here: broadcast roots and the root's reduce leaves copy at once "
                       "below %d bytes",
                       opal_process_info.num_local_peers + 1, cores,
                       oversubscribed ? COPY_BELOW_OVERSUBSCRIBED : COPY_BELOW_ONE_CORE_EACH);
    }
    return decided ? (size_t) COPY_BELOW_OVERSUBSCRIBED : (size_t) COPY_BELOW_ONE_CORE_EACH;
}

/* Tree, segment and window settings of one call: the algorithm and segment
 * size of the collective at hand, the tree parameters and windows shared by
 * all collectives. Every value checked. */
void mca_coll_adapt2_tree_settings(adapt2_tree_settings_t *s, mca_coll_adapt2_param_t algorithm,
                                   mca_coll_adapt2_param_t segment_size)
{
    s->algorithm = mca_coll_adapt2_checked_algorithm(algorithm);
    s->segment_size = (size_t) mca_coll_adapt2_param_long(segment_size);
    s->fanout = ADAPT2_INT(bcast_fanout);
    s->radix = ADAPT2_INT(bcast_radix);
    s->chains = ADAPT2_INT(bcast_chains);
    s->recv_window = ADAPT2_INT(recv_window);
    s->send_window = ADAPT2_INT(send_window);
    s->detach_min_message = (size_t) ADAPT2_LONG(detach_min_message);
    s->detach_max_message = (size_t) ADAPT2_LONG(detach_max_message);
    s->direct_detach_max = (size_t) ADAPT2_LONG(direct_detach_max);
    s->direct_watch_max = (size_t) ADAPT2_LONG(direct_watch_max);
    long await_min = ADAPT2_LONG(detach_await_min_bytes);
    s->await_min_bytes = (size_t) (await_min >= 0 ? await_min : auto_await_min_bytes());
    s->watch_min_bytes = (size_t) ADAPT2_LONG(detach_watch_min_bytes);
    s->blocking = 0;
    s->topology = 0; /* mca_coll_adapt2_topology_settings() sets these */
    s->node_algorithm = s->numa_algorithm = ADAPT2_ALG_AUTO;
    s->topology_segment_size = s->node_segment_size = s->numa_segment_size = 0;
    s->node_message_cost = 0;
    s->single_copy = mca_coll_adapt2_single_copy();
    s->core_message_cost = (size_t) ADAPT2_LONG(core_message_cost);
}

/* Whether a collective's algorithm parameter says to hand calls to the
 * component selected before adapt2. */
bool mca_coll_adapt2_use_previous(const char *algorithm)
{
    return algorithm && 0 == strcmp(algorithm, "previous");
}

void mca_coll_adapt2_call_facts(adapt2_call_facts_t *facts, const char *algorithm, bool blocking, bool user_op)
{
    facts->blocking = blocking;
    facts->user_op = user_op;
    facts->device_support = mca_coll_adapt2_device_active();
    /* read even without a GPU, so that an invalid value is reported */
    const size_t least = (size_t) ADAPT2_LONG(device_segment_size);
    facts->device_segment_size = facts->device_support ? least : 0;
    facts->device_bounce_max = (size_t) ADAPT2_LONG(device_bounce_max);
    facts->previous = mca_coll_adapt2_use_previous(algorithm);
}

int mca_coll_adapt2_checked_algorithm(mca_coll_adapt2_param_t id)
{
    /* previous: the call's facts say so (plan_call hands the call on); auto
     * stands in, as a tree is still needed */
    int alg = mca_coll_adapt2_param_enum(id);
    return alg == names_of(id)->previous ? 0 : alg;
}

void mca_coll_adapt2_load_rules(void)
{
    const char *path = ADAPT2_STRING(rules);
    char why[512];
    int lines = 0;
    if (NULL == path || '\0' == path[0]) {
        return;
    }
    if (0 != mca_coll_adapt2_engine_load_rules(path, &lines, why, sizeof why)) {
        mca_coll_adapt2_report_invalid("rules", path, "the built-in rules", why);
        return;
    }
    ADAPT2_VERBOSE(10, "decision rules: %d line(s) from %s", lines, path);
}
