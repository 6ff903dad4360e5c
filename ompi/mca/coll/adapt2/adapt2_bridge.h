/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * The seam between adapt2's C layer (which alone may include Open MPI headers)
 * and its C++ engine (which includes none). Only plain C types cross it.
 *
 *   C layer -> engine : mca_coll_adapt2_engine_... (implemented in engine/ and bridge/)
 *   engine -> C layer : mca_coll_adapt2_c_...      (implemented in c/)
 */
#ifndef MCA_COLL_ADAPT2_BRIDGE_H
#define MCA_COLL_ADAPT2_BRIDGE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The collectives (collectives.def), numbered from 0 in its order. */
typedef enum adapt2_collective {
#define ADAPT2_COLLECTIVE(name, NAME) ADAPT2_COLL_##NAME,
#include "collectives.def"
#undef ADAPT2_COLLECTIVE
    ADAPT2_COLL_COUNT
} adapt2_collective_t;

/* Copies bytes [offset, offset+len) of a message's packed stream to/from a
 * flat buffer. Used when the user's (count, datatype) is not contiguous. */
typedef int (*adapt2_pack_fn)(void *packer, size_t offset, size_t len, void *dst);
typedef int (*adapt2_unpack_fn)(void *packer, size_t offset, size_t len, const void *src);

/* A user buffer seen as a stream of packed bytes. Segments are cut in this
 * stream, so ranks may describe one type signature with different
 * (count, datatype) pairs. */
typedef struct adapt2_buffer {
    char *contig; /* first data byte when contiguous in memory, else NULL */
    size_t bytes; /* packed size of the whole message */
    void *packer; /* state for pack/unpack (non-contiguous only) */
    adapt2_pack_fn pack;
    adapt2_unpack_fn unpack;
    int on_device;        /* contig is GPU (device or managed) memory: it moves through the
                           * communicator's device queue and pinned staging buffers */
    size_t stream_offset; /* where byte 0 is in pack/unpack's stream (a part of a
                           * message, engine/user_data.h); 0 from the C layer */
} adapt2_buffer_t;

/* Per-call settings of a tree (and its segments and windows), validated by
 * the C layer from the MCA variables. */
typedef struct adapt2_bcast_settings {
    int algorithm;             /* an adapt2_algorithm_t */
    int fanout;                /* k-ary fanout */
    int radix;                 /* k-nomial radix */
    int chains;                /* number of chains for "chain" */
    size_t segment_size;       /* bytes per segment; 0 = one segment */
    int recv_window;           /* receives posted ahead of arrival */
    int send_window;           /* sends in flight per child */
    size_t detach_min_message; /* ... and above this many (below: the latency path) */
    size_t detach_max_message; /* complete early (see below) up to this many bytes; 0: never */
    size_t direct_detach_max;  /* the direct path leaves its sends behind up to this many (above
                                  detach_min_message; coll_adapt2_direct_detach_max) */
    size_t direct_watch_max;   /* ... and a broadcast's, while its peers come late, up to this
                                  many (coll_adapt2_direct_watch_max) */
    size_t await_min_bytes;    /* a blocking bcast root (and reduce leaf of the root) waits for
                                  hellos (below) from this size; smaller messages are copied at
                                  once ... */
    size_t watch_min_bytes;    /* ... from this size only while peers lag behind
                                  (engine/late_peers.h) */
    int blocking;              /* a blocking call (plan_call sets it from the call's facts): if
                                  the detach pool is full it waits for room (older detached
                                  calls finish) instead of running coupled, and it copies
                                  only for peers late past a grace period (below) */
    /* Multi-level trees (node, NUMA domain, core), for a communicator whose
     * engine knows where its ranks are (adapt2_comm_settings_t.node): */
    int topology;                 /* 1: use one when the communicator spans nodes or NUMA domains */
    int node_algorithm;           /* tree between node leaders (AUTO: binomial) */
    int numa_algorithm;           /* tree between the NUMA-domain leaders of a node (AUTO: flat) */
    size_t topology_segment_size; /* segment size of multi-level trees (0: one segment) */
    size_t node_segment_size;     /* messages between node leaders (0: topology_segment_size) */
    size_t numa_segment_size;     /* messages between NUMA-domain leaders (0: topology_segment_size) */
    size_t node_message_cost;     /* one message between nodes beyond its bytes, in bytes: sizes
                                     the segments across nodes (0: topology_segment_size) */
    /* Shared memory inside a node: */
    int single_copy;          /* 1: it moves a large message in one copy (the receiver reads
                                 the sender's buffer); 0: the sender copies each message */
    size_t core_message_cost; /* one message in it beyond its bytes, in bytes: sizes the
                                 segments of the two trees without single copy */
} adapt2_bcast_settings_t;

typedef adapt2_bcast_settings_t adapt2_tree_settings_t;

/* A reduction: `combine(ctx, in, inout, units)` sets inout = in (op) inout
 * over `units` elements of `unit_bytes` each -- the argument order of Open
 * MPI's ompi_op_reduce, which matters for non-commutative ops. */
typedef int (*adapt2_combine_fn)(void *ctx, const void *in, void *inout, size_t units);
/* Optional (NULL: not used): out = in1 (op) in2 into a third buffer, Open
 * MPI's ompi_3buff_op_reduce; the engine uses it only where operand order
 * does not matter (commutative ops, arrival order). */
typedef int (*adapt2_combine3_fn)(void *ctx, const void *in1, const void *in2, void *out, size_t units);
typedef struct adapt2_reduction {
    size_t unit_bytes;
    int commutative;
    void *ctx;
    adapt2_combine_fn combine;
    adapt2_combine3_fn combine3;
    int device_op;   /* GPU kernel of the op: an adapt2_device_op_t, 0: none (combine on the host) */
    int device_type; /* ... and of the unit type: an adapt2_device_type_t */
} adapt2_reduction_t;

/* The ops and element types of the GPU reduction kernels (engine/device/
 * device_ops.h numbers them from 0 in this order). */
typedef enum adapt2_device_op {
    ADAPT2_DEVICE_OP_NONE = 0,
    ADAPT2_DEVICE_OP_SUM,
    ADAPT2_DEVICE_OP_PROD,
    ADAPT2_DEVICE_OP_MAX,
    ADAPT2_DEVICE_OP_MIN,
    ADAPT2_DEVICE_OP_LAND,
    ADAPT2_DEVICE_OP_LOR,
    ADAPT2_DEVICE_OP_LXOR,
    ADAPT2_DEVICE_OP_BAND,
    ADAPT2_DEVICE_OP_BOR,
    ADAPT2_DEVICE_OP_BXOR,
    ADAPT2_DEVICE_OP_MINLOC,
    ADAPT2_DEVICE_OP_MAXLOC
} adapt2_device_op_t;
typedef enum adapt2_device_type {
    ADAPT2_DEVICE_TYPE_NONE = 0,
    ADAPT2_DEVICE_TYPE_INT8,
    ADAPT2_DEVICE_TYPE_UINT8,
    ADAPT2_DEVICE_TYPE_INT16,
    ADAPT2_DEVICE_TYPE_UINT16,
    ADAPT2_DEVICE_TYPE_INT32,
    ADAPT2_DEVICE_TYPE_UINT32,
    ADAPT2_DEVICE_TYPE_INT64,
    ADAPT2_DEVICE_TYPE_UINT64,
    ADAPT2_DEVICE_TYPE_FLOAT32,
    ADAPT2_DEVICE_TYPE_FLOAT64,
    ADAPT2_DEVICE_TYPE_FLOAT_INT,
    ADAPT2_DEVICE_TYPE_DOUBLE_INT,
    ADAPT2_DEVICE_TYPE_LONG_INT,
    ADAPT2_DEVICE_TYPE_INT_INT,
    ADAPT2_DEVICE_TYPE_SHORT_INT
} adapt2_device_type_t;

typedef struct adapt2_reduce_settings {
    adapt2_tree_settings_t tree;
    int reproducible; /* combine in a fixed order whatever the arrival order */
} adapt2_reduce_settings_t;

/* In the order of the names of its MCA enum in params.def (then `previous`). */
typedef enum adapt2_allreduce_algorithm {
    ADAPT2_ALLREDUCE_AUTO = 0,
    ADAPT2_ALLREDUCE_TREE,         /* reduce up a tree fused with a broadcast down it */
    ADAPT2_ALLREDUCE_RING,         /* reduce-scatter then allgather around a ring */
    ADAPT2_ALLREDUCE_RECDOUBLING,  /* log2(p) exchanges of the whole buffer */
    ADAPT2_ALLREDUCE_RABENSEIFNER, /* reduce-scatter by recursive halving, allgather by doubling */
} adapt2_allreduce_algorithm_t;

/* In the order of the names of its MCA enum in params.def (then `previous`). */
typedef enum adapt2_allgather_algorithm {
    ADAPT2_ALLGATHER_AUTO = 0,
    ADAPT2_ALLGATHER_RING,        /* p - 1 steps around a ring, pipelined by segments */
    ADAPT2_ALLGATHER_BRUCK,       /* ceil(log2 p) exchanges of doubling runs of blocks */
    ADAPT2_ALLGATHER_MULTI_LEVEL, /* blocks to node leaders, bundles around their ring, then down */
    ADAPT2_ALLGATHER_LINEAR,      /* every rank's block to every rank at once (p - 1 exchanges) */
} adapt2_allgather_algorithm_t;

/* In the order of the names of its MCA enum in params.def (then `previous`). */
typedef enum adapt2_reduce_scatter_algorithm {
    ADAPT2_REDUCE_SCATTER_AUTO = 0,
    ADAPT2_REDUCE_SCATTER_RING,    /* p - 1 steps around a ring, pipelined by segments */
    ADAPT2_REDUCE_SCATTER_HALVING, /* ceil(log2 p) exchanges, in rank order (any op) */
} adapt2_reduce_scatter_algorithm_t;

typedef struct adapt2_allreduce_settings {
    adapt2_tree_settings_t tree;
    int algorithm;         /* the call's collective's: an adapt2_allreduce_algorithm_t,
                              adapt2_allgather_algorithm_t or adapt2_reduce_scatter_algorithm_t */
    size_t ring_min_bytes; /* allreduce auto: the ring for messages in [min, max) bytes */
    size_t ring_max_bytes;
    size_t recdoubling_max_bytes;           /* allreduce auto: recursive doubling below this size ... */
    int recdoubling_max_ranks;              /* ... on power-of-two communicators up to this size */
    size_t recdoubling_few_ranks_max_bytes; /* ... on one node of 4 ranks, below this size instead */
    size_t rabenseifner_min_bytes; /* allreduce auto: Rabenseifner's in [min, max) (one node: below the ring) */
    size_t rabenseifner_max_bytes;
    size_t bruck_max_bytes;       /* allgather auto: Bruck while all p blocks are below this size */
    size_t direct_max_bytes;      /* allgather auto, blocking and the direct path on (else 0): Bruck's
                                     exchanges, direct, below this size, from bruck_max_bytes too */
    size_t multi_level_max_bytes; /* allgather auto across nodes: multi-level below this size */
    size_t linear_max_bytes;      /* allgather auto on one node of few ranks: linear below this size */
    size_t pipeline_min_bytes;    /* multi-level allgather: bundles go down as they land from this size */
    size_t halving_max_bytes;     /* reduce_scatter_block auto: recursive halving for blocks below this */
    int reproducible;
} adapt2_allreduce_settings_t;

/* Tree shapes a user may force; ADAPT2_ALG_AUTO lets the decision rules pick.
 * In the order of params.def's ADAPT2_TREE_NAMES (an MCA enum's values). */
typedef enum adapt2_algorithm {
    ADAPT2_ALG_AUTO = 0,
    ADAPT2_ALG_BINOMIAL,
    ADAPT2_ALG_IN_ORDER_BINOMIAL,
    ADAPT2_ALG_BINARY,
    ADAPT2_ALG_KARY,
    ADAPT2_ALG_KNOMIAL,
    ADAPT2_ALG_CHAIN,
    ADAPT2_ALG_PIPELINE,
    ADAPT2_ALG_FLAT,
    ADAPT2_ALG_TWO_TREE,
    ADAPT2_ALG_COUNT
} adapt2_algorithm_t;

/* A tree's name (params.def's ADAPT2_TREE_NAMES, the values of
 * coll_adapt2_bcast_algorithm, are in this enum's order). */
const char *mca_coll_adapt2_engine_algorithm_name(int algorithm);

/* How the engine reports a collective: `done(ctx, status)` exactly once,
 * when this rank's part is complete (complete the request; the user's buffers
 * are the user's again), then `finished(ctx, status)` (if not NULL) exactly
 * once, when all of the call's work is over (release what the call holds).
 *
 * Decoupled ("detached") completion: a rank whose part is only to pass data
 * on (a broadcast's root or interior rank, a reduction's non-root) copies what
 * it still has to send into a private buffer and is done before its children
 * or parent have taken it; the rest runs in the background, driven by
 * whichever thread progresses the transport. The copies come from a
 * per-communicator pool with a byte cap; a blocking call that finds the pool
 * full waits until older detached calls have freed room, a non-blocking one
 * runs coupled (waits for its own sends). `done` then gets ADAPT2_STATUS_DETACHED instead of
 * 0; errors after that go to `finished` only. */
typedef void (*adapt2_done_fn)(void *ctx, int status);
#define ADAPT2_STATUS_DETACHED 1
/* A device copy or reduction failed (OMPI_ERROR); the device layer's own
 * message: mca_coll_adapt2_engine_device_last_error(). */
#define ADAPT2_STATUS_DEVICE_ERROR (-1)
/* An internal inconsistency or a datatype conversion failed (OMPI_ERROR). */
#define ADAPT2_STATUS_INTERNAL_ERROR (-1)
/* Inside `done` or `finished` of a failed call, on the reporting thread: one
 * line saying which rank, which call and why it failed ("" otherwise). */
const char *mca_coll_adapt2_engine_call_failure(void);

/* A transport provided by the C layer: byte transfers with ranks of one
 * communicator. On completion the provider calls
 * mca_coll_adapt2_engine_op_complete(op, status), possibly inside the post. */
typedef struct adapt2_transport_ops {
    void *ctx;
    int (*isend)(void *ctx, const void *buf, size_t len, int peer, int tag, void *op);
    int (*irecv)(void *ctx, void *buf, size_t len, int peer, int tag, void *op);
} adapt2_transport_ops_t;

typedef struct adapt2_comm_settings {
    int rank;
    int size;
    uint32_t comm_id;        /* names the communicator in traces */
    size_t pool_max_bytes;   /* cap on staging buffers */
    size_t detach_max_bytes; /* cap on the copies of detached calls (0: never detach) */
    int schedule_cache;      /* finished call schedules kept for reuse */
    void (*progress)(void);  /* advances the transports (waiting for detach room) */
    const int *node;         /* per rank: its node (equal = same node), or NULL: unknown */
    const int *numa;         /* per rank: its NUMA domain within its node, or NULL */
    /* Reserves `count` consecutive tags for one call and returns the first
     * (they count down): Open MPI's per-communicator collective tags, which
     * every component's non-blocking calls share. */
    int (*reserve_tags)(void *ctx, int count);
    void *reserve_ctx;
    /* Verbose output (NULL: none): the level in force, and a line at a level
     * (the engine writes each call's plan and the rule that chose it at 20). */
    int (*log_level)(void);
    void (*log)(int level, const char *message);
} adapt2_comm_settings_t;

/* Per-communicator engine state. */
typedef struct adapt2_engine_comm adapt2_engine_comm_t;
adapt2_engine_comm_t *mca_coll_adapt2_engine_comm_create(const adapt2_transport_ops_t *transport,
                                                         const adapt2_comm_settings_t *settings);

/* Tracing: on for this process from the first call; written at the end. */
void mca_coll_adapt2_engine_trace_enable(size_t max_events, int world_rank);
/* Reads the decision table at `path` (engine/rules.h; docs/rules.md) and
 * makes it the process's: 0 and *rules lines, or an error with `why` (file,
 * line, reason); the table stays as it was then. Call before any collective. */
int mca_coll_adapt2_engine_load_rules(const char *path, int *rules, char *why, size_t why_len);
/* The process's table's fingerprint (equal on two ranks iff their tables
 * decide alike; 0: no table) and, if any, the file it came from. */
uint64_t mca_coll_adapt2_engine_rules_fingerprint(const char **origin);
int mca_coll_adapt2_engine_trace_write(const char *prefix);
void mca_coll_adapt2_engine_comm_destroy(adapt2_engine_comm_t *comm);

/* What the engine knows of a communicator's layout, and how often this rank
 * crossed its slow links. */
typedef struct adapt2_comm_shape {
    int nodes;                   /* nodes its ranks are on (1 when unknown) */
    int multi_level;             /* more than one node, or a node with several NUMA domains */
    uint64_t internode_segments; /* segments this rank sent to other nodes */
    uint64_t internode_bytes;
} adapt2_comm_shape_t;
void mca_coll_adapt2_engine_comm_shape(const adapt2_engine_comm_t *comm, adapt2_comm_shape_t *out);

/* ---- GPU buffers (engine/device/) ---- */
typedef struct adapt2_device_settings {
    int streams;             /* per communicator */
    int queue_capacity;      /* device operations outstanding per communicator */
    size_t pinned_max_bytes; /* pinned staging buffers per communicator */
    int mock;                /* testing: a mock device that owns every user buffer */
} adapt2_device_settings_t;

/* Sets the limits and asks the device backend (the CUDA driver, loaded at
 * run time) whether a device can be used: 1 yes, 0 no (`reason` says why). */
int mca_coll_adapt2_engine_device_start(const adapt2_device_settings_t *settings, char *reason, size_t reason_len);
/* Where p points: 0 host, 1 device, 2 managed (host when no device). */
int mca_coll_adapt2_engine_memory_type(const void *p);
/* Host memory for a bounced buffer: from the communicator's pinned staging
 * pool, past its cap if need be; NULL where none can be had. */
void *mca_coll_adapt2_engine_bounce_borrow(adapt2_engine_comm_t *comm, size_t bytes);
void mca_coll_adapt2_engine_bounce_give_back(adapt2_engine_comm_t *comm, void *host, size_t bytes);
/* Copies between GPU and host memory and returns once the copy is over,
 * ordered after the work the process queued before on the legacy default
 * stream: 0, or an error (mca_coll_adapt2_engine_device_last_error()). */
int mca_coll_adapt2_engine_device_copy(adapt2_engine_comm_t *comm, void *dst, const void *src, size_t bytes);
/* Polls every communicator's device queue; returns the operations finished. */
int mca_coll_adapt2_engine_device_progress(void);
/* The last device error as text ("" if none). */
const char *mca_coll_adapt2_engine_device_last_error(void);

/* A blocking call's grace period. A rank that may detach first waits for
 * its peers to enter the call (they say hello); only those still missing
 * when the period ends are served from a copy. Without noise nobody is late
 * and nothing is copied. Calls with a grace return a handle in *grace (else
 * NULL): the waiting caller fires it when the period is over (any number of
 * times) and releases it once the call is done. */
void mca_coll_adapt2_engine_grace_fire(void *grace);
void mca_coll_adapt2_engine_grace_release(void *grace);

/* Every setting a call may use, validated by the C layer from the MCA
 * variables (the tree's for every collective; the rest where it applies). */
typedef adapt2_allreduce_settings_t adapt2_call_settings_t;

/* One call of a collective: what the engine's single entry point starts.
 *   bcast:                recv: the buffer (the data at the root).
 *   reduce:               send: this rank's contribution; recv: the result (root only).
 *   allreduce:            send: the contribution; recv: the result.
 *   allgather:            send: this rank's block; recv: p blocks, block r from rank r.
 *   reduce_scatter_block: send: p blocks; recv: block r of their reduction.
 * With in_place, the contribution is in recv (reduce: at the root; for
 * reduce_scatter_block recv then describes all p blocks, and the result goes
 * to its first one). */
/* What the C layer knows of a call and its process, beyond its buffers and
 * op: the facts the engine's plan_call (engine/plan_call.h) decides from.
 * Each is the same on every rank of a call, so every rank plans alike. */
typedef struct adapt2_call_facts {
    int blocking;               /* MPI_Bcast, not MPI_Ibcast */
    int user_op;                /* a user-defined op (MPI_Op_create) */
    int device_support;         /* GPU buffers are looked for in this process */
    size_t device_segment_size; /* with device_support: the least segment size (0: none) */
    size_t device_bounce_max;   /* with device_support: blocking calls of at most this many
                                 * bytes are planned as host calls; a rank whose buffers are
                                 * GPU memory copies them whole through host memory (bounce) */
    int previous;               /* the user set the collective's algorithm to `previous` */
} adapt2_call_facts_t;

/* (GPU buffers, engine/device/) Whether a call of `bytes` (its message size, as the plan counts it) with
 * these facts is bounced: planned as a host call on every rank, each rank
 * copying its GPU buffers whole through host memory (the facts and the size
 * are equal on every rank, so every rank answers alike). */
int mca_coll_adapt2_engine_device_bounces(const adapt2_call_facts_t *facts, uint64_t bytes);

typedef struct adapt2_call {
    int collective; /* an adapt2_collective_t */
    adapt2_call_facts_t facts;
    adapt2_buffer_t send;
    adapt2_buffer_t recv;
    int in_place;
    int root;                     /* bcast, reduce */
    adapt2_reduction_t reduction; /* reductions */
    adapt2_call_settings_t settings;
    adapt2_done_fn done; /* see "How the engine reports a collective" */
    adapt2_done_fn finished;
    void *ctx;
    void **grace; /* receives the call's grace period or NULL (see
                     above) where the plan gives it one; NULL: none wanted */
} adapt2_call_t;
/* Plans the call (engine/plan_call.h), reserves its tags on the communicator
 * (adapt2_comm_settings_t's reserve_tags) and starts it: 0, with `done`
 * called once later (or before returning), or an error code and `done` never
 * called. ADAPT2_STATUS_PREVIOUS: the plan hands the call to the previous
 * component, `*why` says why; nothing was started. */
#define ADAPT2_STATUS_PREVIOUS (-8) /* OMPI_ERR_NOT_SUPPORTED */
/* A call description the engine cannot run (a root out of range, a
 * reduction without an element size). */
#define ADAPT2_STATUS_BAD_PARAM (-5) /* OMPI_ERR_BAD_PARAM */
int mca_coll_adapt2_engine_start(adapt2_engine_comm_t *comm, const adapt2_call_t *call, const char **why);
/* Why the engine would hand this call to the previous component, or NULL:
 * from its facts, settings and message size alone (send.bytes and
 * recv.bytes; no buffer need be described yet), so the C layer hands such a
 * call on before it builds a request. */
const char *mca_coll_adapt2_engine_hands_on(const adapt2_engine_comm_t *comm, const adapt2_call_t *call);

/* A transport operation posted with mca_coll_adapt2_c_pml_* has completed.
 * Safe from any thread and from inside the posting call. */
void mca_coll_adapt2_engine_op_complete(void *op, int status);

/* Process-wide counters (read by the MPI_T performance variables): one
 * "<name>_calls" per collective (collectives.def), then the others. */
typedef enum adapt2_counter {
#define ADAPT2_COLLECTIVE(name, NAME) ADAPT2_COUNTER_##NAME##_CALLS,
#include "collectives.def"
#undef ADAPT2_COLLECTIVE
    ADAPT2_COUNTER_SEGMENTS_SENT,
    ADAPT2_COUNTER_BYTES_SENT,
    ADAPT2_COUNTER_FALLBACKS,
    ADAPT2_COUNTER_POOL_OVERDRAFTS,
    ADAPT2_COUNTER_DETACHED_CALLS,     /* calls that completed before their work was over */
    ADAPT2_COUNTER_DETACH_BYTES,       /* bytes copied so that calls could detach */
    ADAPT2_COUNTER_DETACH_REFUSED,     /* calls that could have detached but found the cap reached */
    ADAPT2_COUNTER_DETACH_WAITS,       /* blocking calls that waited for room under the cap */
    ADAPT2_COUNTER_INTERNODE_SEGMENTS, /* segments sent to a rank on another node */
    ADAPT2_COUNTER_INTERNODE_BYTES,    /* their bytes */
    ADAPT2_COUNTER_DEVICE_BYTES,       /* bytes copied between GPU buffers and staging buffers */
    ADAPT2_COUNTER_DEVICE_COMBINES,    /* segments of children's data combined on the GPU */
    ADAPT2_COUNTER_DIRECT_CALLS,       /* calls run on the direct path (direct_route below) */
    ADAPT2_COUNTER_COUNT
} adapt2_counter_t;
uint64_t mca_coll_adapt2_engine_counter(int which);
void mca_coll_adapt2_engine_count(int which, uint64_t amount);
/* Whether two threads may run the engine at once (MPI_THREAD_MULTIPLE, or
 * adapt2's progress thread): decided once per process, when the first
 * communicator's engine is made, before its first call. 0 lets the engine's
 * inbox and mutexes take plain loads and stores (engine/threads.h). Until
 * called: 1. */
void mca_coll_adapt2_engine_set_threads_may_race(int may_race);

/* The direct path (engine/direct_route.cc): a blocking broadcast or reduce
 * that its plan sends as one whole message with no hellos, a blocking
 * allreduce that its plan runs by recursive doubling, a small blocking
 * allgather that its plan runs by Bruck's exchanges, or a small blocking
 * reduce_scatter_block (commutative op) that its plan runs by recursive
 * halving, runs as plain point-to-point in the C layer, on the route the
 * plan gives. */
/* A rank's exchanges at most: recursive doubling or halving on any int p
 * takes 31 and the pairing's two, one spare (an allgather's ceil(log2 p) fewer). */
#define ADAPT2_DIRECT_MAX_STEPS 34
/* One exchange of recursive doubling (engine/recdoubling_plan.h), or of an
 * allgather (engine/allgather_plan.h). */
typedef struct adapt2_direct_step {
    int peer;
    int send;        /* send the accumulator (allgather: blocks) to `peer` */
    int recv;        /* receive the peer's data (into scratch; allgather: from `from`) */
    int fold;        /* combine it into the accumulator, lower ranks' data on the left */
    int into_result; /* the receive lands in the accumulator (the result handed back) */
    /* allgather: blocks [send_block, +blocks) go to `peer`, and as many
     * arrive from `from` into [recv_block, +blocks) of the working buffer;
     * reduce_scatter_block: [send_block, +blocks) go to `peer`, and
     * [recv_block, +recv_blocks) are folded with what arrives from it */
    int from, send_block, recv_block, blocks, recv_blocks;
} adapt2_direct_step_t;
typedef struct adapt2_direct_route {
    /* bcast and reduce: the plan's tree (reduce: data flows up it) */
    int parent;       /* this rank's parent in the tree, -1 at the root */
    int children;     /* how many: child[0 .. children) in serving order */
    int *child;       /* the caller's array, room for the communicator's size */
    int leave_behind; /* 1: the sends are posted from a copy and left behind (the call
                         may detach: coll_adapt2_direct_detach_max) */
    int watch;        /* 1 (bcast): the sends go from the message and are waited for while
                         the peers keep up, left behind like leave_behind's while they come
                         late (coll_adapt2_direct_watch_max) */
    int eager;        /* 1: small enough (256 B) that a blocking send completes without
                         its receiver on every transport, so the children are sent
                         to in turn (the PML's inline send: no request) */
    /* allreduce and allgather: this rank's exchanges, in order */
    int steps;
    /* allgather: the working buffer holds the blocks in Bruck's rotated
     * order (slot i: rank (rank + i) % p's block), else in rank order */
    int rotated;
    adapt2_direct_step_t step[ADAPT2_DIRECT_MAX_STEPS];
    /* every collective: the messages this rank sends, and of them to other
     * nodes, and their bytes (the counters; set with the route, so that a
     * call only adds them) */
    int sends, remote_sends;
    uint64_t sent_bytes, remote_sent_bytes;
    char plan[192]; /* the plan and the rule that chose it, or why not direct */
} adapt2_direct_route_t;
/* 1 with *route filled when the call (described by its facts, settings,
 * root, recv.bytes and reduction.commutative; no buffer needed) runs on the
 * direct path; 0 with route->plan saying why not. Equal on every rank, as
 * plans are. */
int mca_coll_adapt2_engine_direct_route(adapt2_engine_comm_t *comm, const adapt2_call_t *call,
                                        adapt2_direct_route_t *route);
/* Counts a direct call (`collective`: an ADAPT2_COLL_*) along `route`. */
void mca_coll_adapt2_engine_direct_done(adapt2_engine_comm_t *comm, int collective, const adapt2_direct_route_t *route);

/* Counts a direct call that left its sends behind (coll_adapt2_behind.c):
 * `copied` bytes copied for them, `in_flight` 1 if they had not completed
 * when the call returned (a detached call), `waited` 1 if it waited for an
 * older call's sends to free a slot. */
void mca_coll_adapt2_engine_direct_left_behind(size_t copied, int in_flight, int waited);

/* Working memory of `bytes` for one direct call, from the communicator's
 * staging pool (coll_adapt2_pool_max_bytes): cached by size, so calls of a
 * size seen before allocate nothing; past the cap it is made for the call and
 * freed when given back (counted in coll_adapt2_pool_overdrafts). NULL: no
 * memory. Given back before the call returns. */
char *mca_coll_adapt2_engine_scratch_borrow(adapt2_engine_comm_t *comm, size_t bytes);
void mca_coll_adapt2_engine_scratch_give_back(adapt2_engine_comm_t *comm, size_t bytes, char *scratch);

/* ---- implemented by the C layer ---------------------------------------- */

/* Verbose output through the component's opal_output stream. */
void mca_coll_adapt2_c_log(int level, const char *message);

#ifdef __cplusplus
}
#endif

#endif /* MCA_COLL_ADAPT2_BRIDGE_H */
