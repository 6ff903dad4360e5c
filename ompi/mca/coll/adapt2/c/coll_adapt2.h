/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * adapt2's C layer: the parts Open MPI's headers allow only from C
 * (component and module structs, MCA variables, requests, PML calls,
 * convertors). The algorithms live in the C++ engine behind adapt2_bridge.h.
 */
#ifndef MCA_COLL_ADAPT2_H
#define MCA_COLL_ADAPT2_H

#include "ompi_config.h"
#include <time.h>
#include "mpi.h"
#include "ompi/communicator/communicator.h"
#include "ompi/datatype/ompi_datatype.h"
#include "ompi/op/op.h"
#include "ompi/mca/coll/coll.h"
#include "ompi/mca/coll/base/coll_base_util.h"
#include "ompi/request/request.h"
#include "opal/datatype/opal_convertor.h"
#include "coll_adapt2_series.h" /* what differs between Open MPI 4.1 and 5.0 */

#include "../adapt2_bridge.h"

BEGIN_C_DECLS

/* The C type of each kind of parameter in params.def. */
#define ADAPT2_CTYPE_INT int
#define ADAPT2_CTYPE_LONG long
#define ADAPT2_CTYPE_STRING char *
#define ADAPT2_CTYPE_ENUM int /* the index of the name in the list */

/* The MCA parameters' storage, by name (params.def); read them through
 * ADAPT2_INT(name) & co., which check the value. One struct, so that a
 * cached decision can tell whether any parameter changed since it was made
 * (the direct path, coll_adapt2_direct.c). */
typedef struct mca_coll_adapt2_param_values_t {
#define ADAPT2_PARAM(TYPE, name, deflt, min, max, help) ADAPT2_CTYPE_##TYPE name;
#include "../params.def"
#undef ADAPT2_PARAM
} mca_coll_adapt2_param_values_t;

typedef struct mca_coll_adapt2_component_t {
    adapt2_coll_component_t super;
    int output;                /* opal_output stream for verbose messages */
    opal_free_list_t requests; /* mca_coll_adapt2_request_t, reused: no allocation per call */
    bool thread_multiple;      /* MPI_THREAD_MULTIPLE at MPI_Init (MPI_T_init_thread
                                  later overwrites Open MPI's own flag) */
    char trace_prefix[4096];   /* copied when tracing starts: the variable may be gone at close */
    mca_coll_adapt2_param_values_t values;
} mca_coll_adapt2_component_t;

ADAPT2_COMPONENT_EXPORT extern mca_coll_adapt2_component_t mca_coll_adapt2_component;

/* What the module falls back to: the function and module that were installed
 * on the communicator before adapt2 was enabled. */
typedef struct mca_coll_adapt2_fallback_t {
#define ADAPT2_COLLECTIVE(name, NAME)            \
    mca_coll_base_module_##name##_fn_t name;     \
    mca_coll_base_module_t *name##_module;       \
    mca_coll_base_module_i##name##_fn_t i##name; \
    mca_coll_base_module_t *i##name##_module;
#include "../collectives.def"
#undef ADAPT2_COLLECTIVE
} mca_coll_adapt2_fallback_t;

typedef enum { ADAPT2_TRANSPORT_PML = 0, ADAPT2_TRANSPORT_UCX = 1 } mca_coll_adapt2_transport_t;

typedef struct mca_coll_adapt2_module_t {
    mca_coll_base_module_t super;
    adapt2_engine_comm_t *engine;         /* created by the first collective (lazily: UCX connects) */
    int transport;                        /* an mca_coll_adapt2_transport_t, fixed at enable */
    void *transport_ctx;                  /* the UCX transport's per-communicator state */
    volatile int32_t calls;               /* requests of this communicator not destroyed yet */
    bool is_world;                        /* MPI_COMM_WORLD's: its end (in MPI_Finalize) writes the trace */
    bool multi_level;                     /* the engine knows the ranks span nodes or NUMA domains */
    uint32_t cid;                         /* the communicator's context id (set with the engine) */
    bool rules_check_posted;              /* the ranks' decision tables are being or were compared */
    volatile int32_t rules_check_pending; /* ... and the comparison is in flight */
#define ADAPT2_DIRECT_SLOTS 5
    struct mca_coll_adapt2_direct_t *direct[ADAPT2_DIRECT_SLOTS]; /* the direct path's last routes: bcast,
                                                                   * allreduce, reduce, allgather,
                                                                   * reduce_scatter_block
                                                                   * (coll_adapt2_direct.h) */
    struct mca_coll_adapt2_behind_t *behind; /* the direct path's sends left behind (coll_adapt2_behind.c) */
    mca_coll_adapt2_fallback_t previous;
} mca_coll_adapt2_module_t;
OBJ_CLASS_DECLARATION(mca_coll_adapt2_module_t);

/* A non-contiguous user buffer as the engine's pack/unpack hooks see it:
 * convertors over exactly this buffer, prepared on first use. */
typedef struct mca_coll_adapt2_user_buffer_t {
    void *buf;
    int count;
    ompi_datatype_t *dtype;
    opal_convertor_t pack_conv;
    opal_convertor_t unpack_conv;
    bool has_pack_conv, has_unpack_conv;
} mca_coll_adapt2_user_buffer_t;

/* One collective call, as MPI_Wait sees it. It must extend Open MPI's nbc
 * request: MPI_Ibcast & co. store the datatypes they retain in its fields. */
typedef struct mca_coll_adapt2_request_t {
    ompi_coll_base_nbc_request_t nbc;
    ompi_communicator_t *comm; /* retained until destroyed */
    mca_coll_adapt2_module_t *module;
    mca_coll_adapt2_user_buffer_t bufs[2]; /* the call's user buffers (send, receive) */
    ompi_op_t *op;                         /* reductions: the op ... */
    ompi_datatype_t *unit_type;            /* ... and the datatype it combines (both retained) */
    ptrdiff_t unit_true_lb;                /* where a unit's data starts from its MPI address */
    volatile int32_t state;                /* see coll_adapt2_request.c */
    int done_status, finished_status;      /* the engine's reports, kept for deferral */
    volatile int32_t deferred;             /* ADAPT2_DEFER_* events waiting, see _progress.c */
    void *grace;                           /* blocking call's grace period (engine handle) or NULL */
    struct mca_coll_adapt2_request_t *next_deferred;
} mca_coll_adapt2_request_t;
OBJ_CLASS_DECLARATION(mca_coll_adapt2_request_t);

/* adapt2's functions for each collective of collectives.def, with the types
 * Open MPI's module expects: mca_coll_adapt2_<name> and mca_coll_adapt2_i<name>
 * (coll_adapt2_<file>.c; the compiler checks each definition against these). */
#define ADAPT2_COLLECTIVE(name, NAME)                                                  \
    extern __typeof__(*(mca_coll_base_module_##name##_fn_t) 0) mca_coll_adapt2_##name; \
    extern __typeof__(*(mca_coll_base_module_i##name##_fn_t) 0) mca_coll_adapt2_i##name;
#include "../collectives.def"
#undef ADAPT2_COLLECTIVE

/* where the ranks are (coll_adapt2_topology.c) */
bool mca_coll_adapt2_topology_of(ompi_communicator_t *comm, int *node, int *numa);
void mca_coll_adapt2_topology_settings(adapt2_tree_settings_t *s, const mca_coll_adapt2_module_t *module);
/* coll_adapt2_single_copy: 1 where shared memory moves a large message in one copy. */
int mca_coll_adapt2_single_copy(void);

/* component / module */
int mca_coll_adapt2_init_query(bool enable_progress_threads, bool enable_mpi_threads);
mca_coll_base_module_t *mca_coll_adapt2_comm_query(struct ompi_communicator_t *comm, int *priority);

/* MCA variables (params.def): registration and checked reads
 * (coll_adapt2_params.c). A value out of its range is reported once, by
 * name, and the default is used. */
typedef enum {
#define ADAPT2_PARAM(TYPE, name, deflt, min, max, help) ADAPT2_P_##name,
#include "../params.def"
#undef ADAPT2_PARAM
    ADAPT2_P_COUNT
} mca_coll_adapt2_param_t;
int mca_coll_adapt2_register_params(void);
int mca_coll_adapt2_param_int(mca_coll_adapt2_param_t id);
long mca_coll_adapt2_param_long(mca_coll_adapt2_param_t id);
/* A STRING's value, or an ENUM's name; never NULL. */
const char *mca_coll_adapt2_param_string(mca_coll_adapt2_param_t id);
#define ADAPT2_INT(name) mca_coll_adapt2_param_int(ADAPT2_P_##name)
#define ADAPT2_LONG(name) mca_coll_adapt2_param_long(ADAPT2_P_##name)
#define ADAPT2_STRING(name) mca_coll_adapt2_param_string(ADAPT2_P_##name)
/* An ENUM's value: the index of its name in params.def's list. */
int mca_coll_adapt2_param_enum(mca_coll_adapt2_param_t id);
#define ADAPT2_ENUM(name) mca_coll_adapt2_param_enum(ADAPT2_P_##name)
/* An algorithm parameter (an ENUM in its engine enum's order; previous: 0,
 * auto). */
int mca_coll_adapt2_checked_algorithm(mca_coll_adapt2_param_t id);
void mca_coll_adapt2_tree_settings(adapt2_tree_settings_t *s, mca_coll_adapt2_param_t algorithm,
                                   mca_coll_adapt2_param_t segment_size);
bool mca_coll_adapt2_use_previous(const char *algorithm);
/* The facts of a call that the engine's plan_call decides from (the call's
 * algorithm parameter's value, for `previous`). */
void mca_coll_adapt2_call_facts(adapt2_call_facts_t *facts, const char *algorithm, bool blocking, bool user_op);
/* rules check (coll_adapt2_rules_check.c): every rank's first adapt2 call
 * on a communicator posts the comparison of the ranks' decision tables;
 * poll tests the posted ones (only `module`'s, unless NULL) and reports
 * those done; the drains wait for the ones in flight. */
void mca_coll_adapt2_rules_check_post(mca_coll_adapt2_module_t *module, ompi_communicator_t *comm);
void mca_coll_adapt2_rules_check_poll(const mca_coll_adapt2_module_t *module);
int mca_coll_adapt2_rules_checks_in_flight(void);
int mca_coll_adapt2_rules_check_progress(void); /* an opal_progress callback */
void mca_coll_adapt2_rules_check_close(void);   /* at component close */
/* Reads coll_adapt2_rules' file into the engine, once per process (a bad
 * file is reported by name, line and reason, and the built-in rules stay). */
void mca_coll_adapt2_load_rules(void);
/* Reports an invalid value once per parameter and value. */
void mca_coll_adapt2_report_invalid(const char *name, const char *bad, const char *used, const char *why);
void mca_coll_adapt2_note_fallback(struct ompi_communicator_t *comm, const char *what, const char *why);
int mca_coll_adapt2_register_pvars(void);

/* GPU buffers (coll_adapt2_device.c) */
bool mca_coll_adapt2_device_active(void); /* a CUDA device is used (decided at the first call) */
void mca_coll_adapt2_device_close(void);
/* Marks a described buffer that lives on a GPU (`user`: the caller's
 * pointer); OMPI_ERR_NOT_SUPPORTED, `why` set, for device data adapt2 cannot
 * stage. */
int mca_coll_adapt2_device_mark(const void *user, adapt2_buffer_t *buf, const adapt2_call_facts_t *facts,
                                size_t message_bytes, const char **why);

/* Blocking calls bounced through host memory (coll_adapt2_bounce.c). Whether
 * a blocking call of `message_bytes` (as the engine counts them) bounces:
 * GPU support on and at most coll_adapt2_device_bounce_max; equal on every
 * rank. */
bool mca_coll_adapt2_bounce_wanted(size_t message_bytes);
enum { ADAPT2_BOUNCE_IN = 1, ADAPT2_BOUNCE_OUT = 2 };
typedef struct mca_coll_adapt2_bounce {
    adapt2_engine_comm_t *engine;
    char *user;    /* the span's first byte in GPU memory */
    void *host;    /* its copy in host memory; NULL: not bounced */
    size_t bytes;  /* the span, holes included */
    bool out;      /* copied back after the call */
    char why[160]; /* what failed, or "" */
} mca_coll_adapt2_bounce_t;
/* Where the call finds `buf` (count x dtype): buf where it is host memory,
 * else its copy in pinned host memory, filled from the GPU when `ways` has
 * ADAPT2_BOUNCE_IN (or the type has holes). On failure b->why says why
 * (mca_coll_adapt2_bounce_ok). */
void *mca_coll_adapt2_bounce_take(mca_coll_adapt2_module_t *module, ompi_communicator_t *comm,
                                  mca_coll_adapt2_bounce_t *b, const void *buf, size_t count, ompi_datatype_t *dtype,
                                  int ways);
/* A reduction's or gather's two buffers, in order: the send buffer in, the
 * result buffer out (in too when the call is in place, sbuf MPI_IN_PLACE);
 * rcount 0 leaves rbuf alone (a reduce off its root). True when both are
 * usable: *s and *r are where the call finds them. */
bool mca_coll_adapt2_bounce_pair(mca_coll_adapt2_module_t *module, ompi_communicator_t *comm,
                                 mca_coll_adapt2_bounce_t b[2], const void *sbuf, size_t scount,
                                 ompi_datatype_t *sdtype, void *rbuf, size_t rcount, ompi_datatype_t *rdtype,
                                 const void **s, void **r);
/* Whether every take of b[0..n) succeeded. */
static inline bool mca_coll_adapt2_bounce_ok(const mca_coll_adapt2_bounce_t *b, int n)
{
    for (int i = 0; i < n; ++i) {
        if (b[i].why[0]) {
            return false;
        }
    }
    return true;
}
/* After the call (its result `rc`): copies the ADAPT2_BOUNCE_OUT buffers back
 * to the GPU, gives the host memory back; a failure of the bounce itself is
 * reported by rank, call and reason (mca_coll_adapt2_call_failed). */
int mca_coll_adapt2_bounce_end(ompi_communicator_t *comm, const char *call, mca_coll_adapt2_bounce_t *b, int n, int rc);

/* requests (coll_adapt2_request.c): done, then finished, are the engine's
 * two reports (adapt2_bridge.h) */
int mca_coll_adapt2_requests_open(void);
void mca_coll_adapt2_requests_close(void);
mca_coll_adapt2_request_t *mca_coll_adapt2_request_new(ompi_communicator_t *comm, mca_coll_adapt2_module_t *module);
void mca_coll_adapt2_request_done(void *request, int status);
void mca_coll_adapt2_request_finished(void *request, int status);
void mca_coll_adapt2_request_discard(mca_coll_adapt2_request_t *req);
/* A call failed on this rank after its peers may have entered it: they would
 * wait for this rank forever, so say which rank, which call and why, and
 * abort the job. `call` names the call (e.g. "MPI_Bcast"). */
void mca_coll_adapt2_call_failed(struct ompi_communicator_t *comm, const char *call, int rc, const char *why);
/* True (with `why`) when the engine's plan hands the call to the previous
 * component whatever its buffers are (engine: hand_on_rule): asked with the
 * call's settings and facts and its whole message size, before a request or
 * any buffer description is built, so that handing on costs almost nothing. */
bool mca_coll_adapt2_hands_on_early(mca_coll_adapt2_module_t *module, ompi_communicator_t *comm, adapt2_call_t *call,
                                    size_t message_bytes, const char **why);
/* Bytes of `count` elements of `type` (its size: the packed data). */
size_t mca_coll_adapt2_packed_bytes(ompi_datatype_t *type, size_t count);
/* Starts a described call on the module's engine, reporting to `req`; on
 * failure (nothing started) `why` says why and the caller discards req. */
int mca_coll_adapt2_start_call(mca_coll_adapt2_module_t *module, mca_coll_adapt2_request_t *req, adapt2_call_t *call,
                               const char **why);
/* The end of every collective's entry point, after it tried to start
 * adapt2's call (`rc`, `req`, `why`): OMPI_ERR_NOT_SUPPORTED sets *fall_back
 * (noted, with why: the caller runs the previous component); another error
 * names the rank, the call (MPI_<Name> of `name`, e.g. "ibcast") and why, and
 * aborts; else a blocking call (`request` NULL) is waited for, a
 * non-blocking one handed out. Returns the MPI result. */
int mca_coll_adapt2_complete_start(mca_coll_adapt2_module_t *module, ompi_communicator_t *comm, const char *name,
                                   int rc, mca_coll_adapt2_request_t *req, const char *why, ompi_request_t **request,
                                   bool *fall_back);
#define ADAPT2_COMPLETE_OR_FALL_BACK(module, comm, name, rc, req, why, request, fallback)                         \
    do {                                                                                                          \
        bool fall_back_;                                                                                          \
        int result_ =                                                                                             \
            mca_coll_adapt2_complete_start((module), (comm), (name), (rc), (req), (why), (request), &fall_back_); \
        return fall_back_ ? (fallback) : result_;                                                                 \
    } while (0)
/* Why the engine refused to start a call that returned `rc`. */
const char *mca_coll_adapt2_start_failure(int rc);
enum { ADAPT2_DEFER_DONE = 1, ADAPT2_DEFER_FINISHED = 2, ADAPT2_DEFER_QUEUED = 4 };
void mca_coll_adapt2_request_run_deferred(mca_coll_adapt2_request_t *req, int events);
int mca_coll_adapt2_request_wait_and_free(mca_coll_adapt2_request_t *req);
void mca_coll_adapt2_request_nudge(mca_coll_adapt2_request_t *req);

/* life cycle (coll_adapt2_lifecycle.c): the engine of a communicator,
 * created by its first collective; draining at MPI_Comm_free/disconnect and
 * MPI_Finalize. Returns the engine or NULL (error reported). */
adapt2_engine_comm_t *mca_coll_adapt2_module_engine(mca_coll_adapt2_module_t *module, ompi_communicator_t *comm);
void mca_coll_adapt2_call_started(mca_coll_adapt2_module_t *module);
void mca_coll_adapt2_call_ended(mca_coll_adapt2_module_t *module);
int mca_coll_adapt2_transport_from_name(const char *name);

/* progress (coll_adapt2_progress.c): the optional progress thread, and
 * completions it must hand to an application thread */
void mca_coll_adapt2_progress_start(int transport);
void mca_coll_adapt2_progress_stop(void);
void mca_coll_adapt2_progress_detached(int delta);
bool mca_coll_adapt2_progress_must_defer(void);
void mca_coll_adapt2_progress_defer(mca_coll_adapt2_request_t *req, int event);
uint64_t mca_coll_adapt2_progress_cpu_ns(void);
uint64_t mca_coll_adapt2_progress_polls(void);

/* A broadcast's description without its buffer: settings and facts
 * (coll_adapt2_bcast.c; the direct path plans by it too). */
void mca_coll_adapt2_describe_bcast(adapt2_call_t *call, mca_coll_adapt2_module_t *module, int root, bool blocking);

/* The direct path (coll_adapt2_direct.c): a blocking broadcast that the
 * engine plans as one whole message with no hellos runs as plain
 * point-to-point on the plan's tree. True when it ran (*rc: the MPI result);
 * false: the caller runs the engine's path. (The allreduce's:
 * coll_adapt2_direct.h.) */
bool mca_coll_adapt2_direct_bcast(void *buf, int count, ompi_datatype_t *datatype, int root, ompi_communicator_t *comm,
                                  mca_coll_adapt2_module_t *module, int *rc);
void mca_coll_adapt2_direct_free(mca_coll_adapt2_module_t *module);

/* PML transport (coll_adapt2_pml.c) */
void mca_coll_adapt2_pml_choose_arming(void);
void mca_coll_adapt2_pml_close(void);
void mca_coll_adapt2_pml_ops(ompi_communicator_t *comm, adapt2_transport_ops_t *ops);
/* A send of `len` bytes through the PML whose completion calls done(req)
 * with req->req_complete_cb_data = data; `done` frees the request and
 * returns 1. It may run inside this call, and on any thread. */
int mca_coll_adapt2_pml_isend_then(ompi_communicator_t *comm, const void *buf, size_t len, int peer, int tag,
                                   ompi_request_complete_fn_t done, void *data);
bool mca_coll_adapt2_pml_inject_failure(void); /* coll_adapt2_inject_send_failure's send is now */

/* datatypes (coll_adapt2_datatype.c): `which` is the request's buffer
 * slot (0 or 1); one slot per distinct user buffer of the call. */
int mca_coll_adapt2_describe_buffer(mca_coll_adapt2_request_t *req, int which, void *buf, int count,
                                    ompi_datatype_t *datatype, adapt2_buffer_t *out);
void mca_coll_adapt2_release_buffers(mca_coll_adapt2_request_t *req);
/* Packs (`packing`) the whole of (buf, count, dtype) into the `bytes` at
 * `packed`, or unpacks them from there, as the engine's path does. */
int mca_coll_adapt2_convert_whole(void *buf, int count, ompi_datatype_t *dtype, void *packed, size_t bytes,
                                  bool packing);

/* helpers of every reduction (coll_adapt2_reduce.c) */
ompi_datatype_t *mca_coll_adapt2_unit_type_of(ompi_op_t *op, ompi_datatype_t *dtype, int count, const char **why);
int mca_coll_adapt2_describe_operand(mca_coll_adapt2_request_t *req, int which, const void *buf, int count,
                                     ompi_datatype_t *dtype, adapt2_buffer_t *out);
void mca_coll_adapt2_request_hold_op(mca_coll_adapt2_request_t *req, ompi_op_t *op, ompi_datatype_t *unit);
void mca_coll_adapt2_reduction_of(mca_coll_adapt2_request_t *req, adapt2_reduction_t *red);

/* Microseconds on the monotonic clock (grace periods). */
static inline double mca_coll_adapt2_now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

#define ADAPT2_VERBOSE(level, ...) \
    opal_output_verbose((level), mca_coll_adapt2_component.output, "coll:adapt2: " __VA_ARGS__)

END_C_DECLS

#endif /* MCA_COLL_ADAPT2_H */
