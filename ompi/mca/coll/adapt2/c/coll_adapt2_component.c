/*
 * The component: what Open MPI's MCA loader finds in mca_coll_adapt2.so (the
 * only exported symbol), plus the parameters shared by all collectives.
 */
#include "coll_adapt2.h"

#include "opal/util/output.h"

static int adapt2_register(void);
static int adapt2_open(void);
static int adapt2_close(void);

mca_coll_adapt2_component_t mca_coll_adapt2_component = {
    .super = {
        .collm_version = {
            MCA_COLL_BASE_VERSION_2_0_0,
            .mca_component_name = "adapt2",
            MCA_BASE_MAKE_VERSION(component, 0, 1, 0),
            .mca_open_component = adapt2_open,
            .mca_close_component = adapt2_close,
            .mca_register_component_params = adapt2_register,
        },
        .collm_data = {MCA_BASE_METADATA_PARAM_CHECKPOINT},
        .collm_init_query = mca_coll_adapt2_init_query,
        .collm_comm_query = mca_coll_adapt2_comm_query,
    },
    .output = -1,
};

static int adapt2_register(void)
{
    mca_coll_adapt2_component_t *c = &mca_coll_adapt2_component;

    mca_coll_adapt2_register_int("priority",
        "Priority of adapt2 (0 or less: not selected; above tuned's 30 to take over "
        "bcast, reduce and allreduce, e.g. 100)", 0, &c->priority);
    mca_coll_adapt2_register_int("verbose",
        "Verbosity: 1 fallbacks and invalid parameters, 10 per-communicator choices, "
        "20 every call", 0, &c->verbose);
    mca_coll_adapt2_register_int("recv_window",
        "Receives posted ahead of arrival per collective (1-64)", 4, &c->recv_window);
    mca_coll_adapt2_register_int("send_window",
        "Segments past the oldest unfinished send to a child that may be in flight (1-64)", 2,
        &c->send_window);
    mca_coll_adapt2_register_long("pool_max_bytes",
        "Cap on the staging buffers one communicator holds, in bytes (non-contiguous "
        "data); a collective that finds the pool empty still gets one buffer", 32L << 20,
        &c->pool_max_bytes);
    mca_coll_adapt2_register_string("trace",
        "Record every segment's posts, arrivals, combines and sends, and each call's start and "
        "end, and write them at MPI_Finalize to <prefix>.<world rank>.csv (empty: off); "
        "contrib/adapt2-trace turns the files into a timeline", "", &c->trace);
    mca_coll_adapt2_register_long("trace_max_events",
        "Events one process keeps for coll_adapt2_trace (later ones are dropped and counted)",
        1L << 20, &c->trace_max_events);
    mca_coll_adapt2_register_long("detach_max_message",
        "Broadcasts and reduces up to this many bytes complete on a rank as soon as its own "
        "part is done (data copied into adapt2's buffers), before its peers have taken it; "
        "0: never (every call waits for its sends)", 1L << 20, &c->detach_max_message);
    mca_coll_adapt2_register_long("detach_max_bytes",
        "Cap per communicator on the bytes that calls which completed early still hold: "
        "how far (in bytes of messages) a rank may run ahead of its slowest peer. A blocking "
        "call that would exceed it waits until older calls free room, a non-blocking one "
        "waits for its own sends (read when the communicator's first collective runs)",
        8L << 20, &c->detach_max_bytes);
    mca_coll_adapt2_register_int("detach_grace_us",
        "A blocking call that may complete early first waits this long (microseconds) for its "
        "peers to enter the call, and copies only for those still missing: without noise "
        "nothing is copied. 0: copy at once", 100, &c->detach_grace_us);
    mca_coll_adapt2_register_long("detach_await_min_bytes",
        "A blocking broadcast root waits for the grace period from this message size; smaller "
        "messages are copied at once when a child has not entered the call yet. -1 (auto): 0 "
        "with a core per rank, 131072 when the node has more ranks than cores", -1,
        &c->detach_await_min_bytes);
    mca_coll_adapt2_register_int("progress_thread",
        "1: a thread advances collectives that completed early while the application "
        "computes (drives opal_progress under MPI_THREAD_MULTIPLE, adapt2's UCX worker with "
        "transport=ucx; not started otherwise)", 0, &c->progress_thread);
    mca_coll_adapt2_register_int("progress_interval_us",
        "How often the progress thread polls while collectives are in flight, in "
        "microseconds (1-1000000)", 50, &c->progress_interval_us);
    mca_coll_adapt2_register_string("transport",
        "How adapt2 moves data: pml (Open MPI's point-to-point layer) or ucx (adapt2's "
        "own UCX worker; falls back to pml if UCX cannot be used)", "pml", &c->transport);
    mca_coll_adapt2_bcast_register();
    mca_coll_adapt2_reduce_register();
    mca_coll_adapt2_ring_register();
    mca_coll_adapt2_topology_register();
    mca_coll_adapt2_device_register();
    mca_coll_adapt2_register_int("inject_send_failure",
        "Testing: the Nth send this process posts through the PML fails, as a broken link would "
        "(0: never); shows how a failure on one rank ends the job", 0, &c->inject_send_failure);
    return mca_coll_adapt2_register_pvars();
}

static int adapt2_open(void)
{
    mca_coll_adapt2_component_t *c = &mca_coll_adapt2_component;
    c->output = opal_output_open(NULL);
    opal_output_set_verbosity(c->output, c->verbose);
    return OMPI_SUCCESS;
}

static int adapt2_close(void)
{
    mca_coll_adapt2_device_close();
    if (mca_coll_adapt2_component.output >= 0) {
        opal_output_close(mca_coll_adapt2_component.output);
        mca_coll_adapt2_component.output = -1;
    }
    return OMPI_SUCCESS;
}

void mca_coll_adapt2_c_log(int level, const char *message)
{
    ADAPT2_VERBOSE(level, "%s", message);
}
