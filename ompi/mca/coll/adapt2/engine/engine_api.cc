// C entry points of the engine (see adapt2_bridge.h). Nothing C++ may escape
// into Open MPI: every exception becomes an error code here.
#include <new>
#include <string>

#include "../adapt2_bridge.h"
#include "bcast_flow.h"
#include "collectives.h"
#include "schedule.h"
#include "counters.h"
#include "trace.h"

namespace {
constexpr int kErrNoMemory = -2;  // OMPI_ERR_OUT_OF_RESOURCE
constexpr int kErrBadParam = -5;  // OMPI_ERR_BAD_PARAM

struct AlgorithmName {
    int algorithm;
    const char *name;
};
constexpr AlgorithmName kAlgorithms[] = {
    {ADAPT2_ALG_AUTO, "auto"},         {ADAPT2_ALG_BINOMIAL, "binomial"},
    {ADAPT2_ALG_IN_ORDER_BINOMIAL, "in_order_binomial"},
    {ADAPT2_ALG_BINARY, "binary"},     {ADAPT2_ALG_KARY, "kary"},
    {ADAPT2_ALG_KNOMIAL, "knomial"},   {ADAPT2_ALG_CHAIN, "chain"},
    {ADAPT2_ALG_PIPELINE, "pipeline"}, {ADAPT2_ALG_FLAT, "flat"},
};
}  // namespace

// Runs an engine entry point, turning C++ exceptions into error codes.
template <typename Start>
static int guarded(Start start) {
    try {
        return start();
    } catch (const std::bad_alloc &) {
        return kErrNoMemory;
    } catch (...) {
        return kErrBadParam;
    }
}

extern "C" {

int mca_coll_adapt2_engine_algorithm_from_name(const char *name) {
    if (!name) return -1;
    for (const auto &a : kAlgorithms) {
        if (std::string(a.name) == name) return a.algorithm;
    }
    return -1;
}

const char *mca_coll_adapt2_engine_algorithm_name(int algorithm) {
    for (const auto &a : kAlgorithms) {
        if (a.algorithm == algorithm) return a.name;
    }
    return "unknown";
}

const char *mca_coll_adapt2_engine_algorithm_names(void) {
    return "auto, binomial, in_order_binomial, binary, kary, knomial, chain, pipeline, flat";
}

void mca_coll_adapt2_engine_comm_destroy(adapt2_engine_comm_t *comm) {
    delete reinterpret_cast<adapt2::Comm *>(comm);
}

void mca_coll_adapt2_engine_comm_shape(const adapt2_engine_comm_t *engine_comm, adapt2_comm_shape_t *out) {
    const auto *comm = reinterpret_cast<const adapt2::Comm *>(engine_comm);
    const adapt2::Topology &topo = comm->topology();
    out->nodes = topo.empty() ? 1 : topo.nodes();
    out->multi_level = topo.multi_level() ? 1 : 0;
    out->internode_segments = comm->internode_segments();
    out->internode_bytes = comm->internode_bytes();
}

void mca_coll_adapt2_engine_grace_fire(void *grace) { static_cast<adapt2::Grace *>(grace)->fire(); }

void mca_coll_adapt2_engine_grace_release(void *grace) { static_cast<adapt2::Grace *>(grace)->release(); }

int mca_coll_adapt2_engine_start(adapt2_engine_comm_t *engine_comm, const adapt2_call_t *call,
                                 const char **why) {
    auto *comm = reinterpret_cast<adapt2::Comm *>(engine_comm);
    if (!comm || !call) return kErrBadParam;
    return guarded([&] { return adapt2::start_call(*comm, *call, why); });
}

void mca_coll_adapt2_engine_op_complete(void *op, int status) {
    auto *o = static_cast<adapt2::Op *>(op);
    o->owner->complete(o, status);
}

void mca_coll_adapt2_engine_trace_enable(size_t max_events, int world_rank) {
    try {
        adapt2::Tracer::enable(max_events, world_rank);
    } catch (...) {
        // no memory for the trace: run untraced
    }
}

int mca_coll_adapt2_engine_trace_write(const char *prefix) {
    adapt2::Tracer *t = adapt2::Tracer::get();
    return t && prefix ? t->write(prefix) : 0;
}

const char *mca_coll_adapt2_engine_call_failure(void) { return adapt2::call_failure(); }

uint64_t mca_coll_adapt2_engine_counter(int which) {
    if (which < 0 || which >= ADAPT2_COUNTER_COUNT) return 0;
    return adapt2::counter_value(static_cast<adapt2::Counter>(which));
}

void mca_coll_adapt2_engine_count(int which, uint64_t amount) {
    if (which < 0 || which >= ADAPT2_COUNTER_COUNT) return;
    adapt2::count(static_cast<adapt2::Counter>(which), amount);
}

}  // extern "C"
