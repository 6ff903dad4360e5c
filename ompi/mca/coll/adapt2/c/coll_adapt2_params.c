/*
 * MCA variable helpers. Values are re-checked at every call (they may be
 * changed at run time through MPI_T), and an invalid value is reported once,
 * with the parameter's name and the value used instead.
 */
#include <limits.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "coll_adapt2.h"

#include "opal/mca/base/mca_base_var.h"
#include "opal/util/output.h"
#include "opal/util/proc.h"

static mca_base_component_t *component(void)
{
    return &mca_coll_adapt2_component.super.collm_version;
}

/* The parameters of params.def as data: name, kind, default, range, help,
 * and where the component keeps the value. */
enum { KIND_INT, KIND_LONG, KIND_STRING };
#define ADAPT2_KIND_INT KIND_INT
#define ADAPT2_KIND_LONG KIND_LONG
#define ADAPT2_KIND_STRING KIND_STRING
#define ADAPT2_NUMBER_INT(d) (d)
#define ADAPT2_NUMBER_LONG(d) (d)
#define ADAPT2_NUMBER_STRING(d) 0
#define ADAPT2_TEXT_INT(d) NULL
#define ADAPT2_TEXT_LONG(d) NULL
#define ADAPT2_TEXT_STRING(d) (d)
static const struct param {
    const char *name;
    int kind;
    long deflt;          /* INT and LONG */
    const char *text;    /* STRING's default */
    long min, max;
    const char *help;
    size_t offset;       /* in mca_coll_adapt2_component_t */
} params[] = {
#define ADAPT2_PARAM(TYPE, name, deflt, min, max, help)                                    \
    {#name, ADAPT2_KIND_##TYPE, ADAPT2_NUMBER_##TYPE(deflt), ADAPT2_TEXT_##TYPE(deflt), min, \
     max, help, offsetof(mca_coll_adapt2_component_t, name)},
#include "../params.def"
#undef ADAPT2_PARAM
};

static void *storage(const struct param *p)
{
    return (char *) &mca_coll_adapt2_component + p->offset;
}

/* Variables are ALL_EQ (every rank must use the same value) and SETTABLE:
 * adapt2 reads them at every call, so MPI_T may change them between calls
 * (the tests and the tuning tool do). */
int mca_coll_adapt2_register_params(void)
{
    static const mca_base_var_type_t types[] = {MCA_BASE_VAR_TYPE_INT, MCA_BASE_VAR_TYPE_LONG,
                                                MCA_BASE_VAR_TYPE_STRING};
    for (size_t i = 0; i < sizeof params / sizeof params[0]; ++i) {
        const struct param *p = &params[i];
        if (KIND_INT == p->kind) *(int *) storage(p) = (int) p->deflt;
        if (KIND_LONG == p->kind) *(long *) storage(p) = p->deflt;
        if (KIND_STRING == p->kind) *(char **) storage(p) = (char *) p->text;
        int rc = mca_base_component_var_register(component(), p->name, p->help, types[p->kind], NULL, 0,
                                                 MCA_BASE_VAR_FLAG_SETTABLE, OPAL_INFO_LVL_5,
                                                 MCA_BASE_VAR_SCOPE_ALL_EQ, storage(p));
        (void) rc; /* a value Open MPI rejected: it said so; keep registering the others */
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

void mca_coll_adapt2_report_invalid(const char *name, const char *bad, const char *used,
                                    const char *why)
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
        opal_output(0, "coll:adapt2: invalid value '%s' for MCA parameter coll_adapt2_%s (%s); "
                    "using %s", bad, name, why, used);
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
    return (int) checked_long(p->name, *(int *) storage(p), p->min, p->max == INT_MAX ? LONG_MAX : p->max,
                              p->deflt);
}

long mca_coll_adapt2_param_long(mca_coll_adapt2_param_t id)
{
    const struct param *p = &params[id];
    return checked_long(p->name, *(long *) storage(p), p->min, p->max, p->deflt);
}

const char *mca_coll_adapt2_param_string(mca_coll_adapt2_param_t id)
{
    const char *value = *(char **) storage(&params[id]);
    return value ? value : "";
}

/* From what size a blocking broadcast root waits for its children's hellos
 * rather than copying at once (auto). With a core per rank the hello round
 * trip is cheaper than a copy at every size (np 2: a 64 KiB broadcast took
 * 1.04x the time it takes without decoupling, against 2.3x copying at once);
 * with more ranks than cores, waiting for a descheduled root to react costs
 * more than a small copy (np 4 on 2 cores: 0.65-0.8x copying, 1.1-1.4x
 * waiting, up to 64 KiB). */
static size_t auto_await_min_bytes(void)
{
    static int decided = -1; /* the same for every call of the process */
    if (decided < 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        bool oversubscribed = cores > 0 && opal_process_info.num_local_peers + 1 > cores;
        decided = oversubscribed;
        ADAPT2_VERBOSE(10, "%d ranks on %ld cores here: broadcast roots copy at once below %d bytes",
                       opal_process_info.num_local_peers + 1, cores, oversubscribed ? 128 << 10 : 0);
    }
    return decided ? (size_t) 128 << 10 : 0;
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
    s->detach_max_message = (size_t) ADAPT2_LONG(detach_max_message);
    long await_min = ADAPT2_LONG(detach_await_min_bytes);
    s->await_min_bytes = (size_t) (await_min >= 0 ? await_min : auto_await_min_bytes());
    s->blocking = 0;
    s->topology = 0; /* mca_coll_adapt2_topology_settings() sets these */
    s->node_algorithm = s->numa_algorithm = ADAPT2_ALG_AUTO;
    s->topology_segment_size = s->node_segment_size = s->numa_segment_size = 0;
}

/* Whether a collective's algorithm parameter says to hand calls to the
 * component selected before adapt2. */
bool mca_coll_adapt2_use_previous(const char *algorithm)
{
    return algorithm && 0 == strcmp(algorithm, "previous");
}

int mca_coll_adapt2_checked_choice(const char *param, const char *value, const char *const names[],
                                   int count)
{
    if (mca_coll_adapt2_use_previous(value)) {
        return -1;
    }
    for (int i = 0; i < count; ++i) {
        if (value && 0 == strcmp(value, names[i])) {
            return i;
        }
    }
    char known[128] = "known:";
    for (int i = 0; i < count; ++i) {
        snprintf(known + strlen(known), sizeof known - strlen(known), " %s,", names[i]);
    }
    snprintf(known + strlen(known), sizeof known - strlen(known), " previous");
    mca_coll_adapt2_report_invalid(param, value, "auto", known);
    return 0;
}

void mca_coll_adapt2_call_facts(adapt2_call_facts_t *facts, const char *algorithm, bool blocking,
                                bool user_op)
{
    facts->blocking = blocking;
    facts->user_op = user_op;
    facts->device_support = mca_coll_adapt2_device_active();
    facts->previous = mca_coll_adapt2_use_previous(algorithm);
}

int mca_coll_adapt2_checked_algorithm(mca_coll_adapt2_param_t id)
{
    const char *name = params[id].name, *value = mca_coll_adapt2_param_string(id);
    if (mca_coll_adapt2_use_previous(value)) {
        return ADAPT2_ALG_AUTO; /* the caller decided already; a tree is still needed */
    }
    int alg = mca_coll_adapt2_engine_algorithm_from_name(value ? value : "auto");
    if (alg >= 0) {
        return alg;
    }
    char why[160];
    snprintf(why, sizeof why, "known: %s, previous", mca_coll_adapt2_engine_algorithm_names());
    mca_coll_adapt2_report_invalid(name, value, "auto", why);
    return ADAPT2_ALG_AUTO;
}
