// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// C entry points of the engine (see adapt2_bridge.h). Nothing C++ may escape
// into Open MPI: every exception becomes an error code here.
#include <fstream>
#include <new>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "../adapt2_bridge.h"
#include "bcast_flow.h"
#include "collectives.h"
#include "schedule.h"
#include "counters.h"
#include "param_defaults.h"
#include "rules.h"
#include "threads.h"
#include "trace.h"

namespace {
constexpr int kErrNoMemory = -2;  // OMPI_ERR_OUT_OF_RESOURCE

// The tree names are params.def's (ADAPT2_TREE_NAMES: the names of
// coll_adapt2_bcast_algorithm), in adapt2_algorithm_t's order, then `previous`.
constexpr int count_names(const char *list) {
    int n = 1;
    for (; *list; ++list) n += *list == ',';
    return n;
}
static_assert(count_names(adapt2::defaults::bcast_algorithm_names) == ADAPT2_ALG_COUNT + 1,
              "params.def's tree names: one per adapt2_algorithm_t, then previous");

std::string_view nth_name(const char *list, int n) {
    std::string_view rest(list);
    for (; n > 0 && rest.find(',') != std::string_view::npos; --n) rest.remove_prefix(rest.find(',') + 1);
    return n > 0 ? std::string_view() : rest.substr(0, rest.find(','));
}
}  // namespace

// Runs an engine entry point, turning C++ exceptions into error codes.
template <typename Start>
static int guarded(Start start) {
    try {
        return start();
    } catch (const std::bad_alloc &) {
        return kErrNoMemory;
    } catch (...) {
        return ADAPT2_STATUS_BAD_PARAM;
    }
}

extern "C" {

const char *mca_coll_adapt2_engine_algorithm_name(int algorithm) {
    // The names as C strings, cut once from the list.
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out;
        for (int a = 0; a < ADAPT2_ALG_COUNT; ++a) {
            out.emplace_back(nth_name(adapt2::defaults::bcast_algorithm_names, a));
        }
        return out;
    }();
    return algorithm >= 0 && algorithm < ADAPT2_ALG_COUNT ? names[algorithm].c_str() : "unknown";
}

void mca_coll_adapt2_engine_comm_destroy(adapt2_engine_comm_t *comm) { delete reinterpret_cast<adapt2::Comm *>(comm); }

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

int mca_coll_adapt2_engine_start(adapt2_engine_comm_t *engine_comm, const adapt2_call_t *call, const char **why) {
    auto *comm = reinterpret_cast<adapt2::Comm *>(engine_comm);
    if (!comm || !call) return ADAPT2_STATUS_BAD_PARAM;
    return guarded([&] { return adapt2::start_call(*comm, *call, why); });
}

const char *mca_coll_adapt2_engine_hands_on(const adapt2_engine_comm_t *engine_comm, const adapt2_call_t *call) {
    const auto *comm = reinterpret_cast<const adapt2::Comm *>(engine_comm);
    return adapt2::hand_on_rule(*call, adapt2::shape_of(*comm));
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

int mca_coll_adapt2_engine_load_rules(const char *path, int *rules, char *why, size_t why_len) {
    std::string error;
    const int rc = guarded([&] {
        std::ifstream in(path);
        if (!in) {
            error = std::string(path) + ": cannot be read";
            return ADAPT2_STATUS_BAD_PARAM;
        }
        std::stringstream text;
        text << in.rdbuf();
        auto table = std::make_shared<adapt2::RuleTable>();
        if (!adapt2::RuleTable::parse(text.str(), path, table.get(), &error)) return ADAPT2_STATUS_BAD_PARAM;
        *rules = static_cast<int>(table->size());
        adapt2::set_rule_table(std::move(table));
        return 0;
    });
    if (rc != 0 && why_len > 0) snprintf(why, why_len, "%s", error.empty() ? "out of memory" : error.c_str());
    return rc;
}

uint64_t mca_coll_adapt2_engine_rules_fingerprint(const char **origin) {
    const adapt2::RuleTable *table = adapt2::rule_table();
    *origin = table ? table->origin().c_str() : "";
    return table ? table->fingerprint() : 0;
}

int mca_coll_adapt2_engine_trace_write(const char *prefix) {
    adapt2::Tracer *t = adapt2::Tracer::get();
    return t && prefix ? t->write(prefix) : 0;
}

const char *mca_coll_adapt2_engine_call_failure(void) { return adapt2::call_failure(); }

void mca_coll_adapt2_engine_set_threads_may_race(int may_race) {
    adapt2::g_threads_may_race.store(may_race != 0, std::memory_order_relaxed);
}

uint64_t mca_coll_adapt2_engine_counter(int which) {
    if (which < 0 || which >= ADAPT2_COUNTER_COUNT) return 0;
    return adapt2::counter_value(static_cast<adapt2::Counter>(which));
}

void mca_coll_adapt2_engine_count(int which, uint64_t amount) {
    if (which < 0 || which >= ADAPT2_COUNTER_COUNT) return;
    adapt2::count(static_cast<adapt2::Counter>(which), amount);
}

char *mca_coll_adapt2_engine_scratch_borrow(adapt2_engine_comm_t *engine_comm, size_t bytes) {
    try {
        return reinterpret_cast<adapt2::Comm *>(engine_comm)->pool().borrow_one(bytes);
    } catch (const std::bad_alloc &) {
        return nullptr;  // the caller reports it with its call
    }
}

void mca_coll_adapt2_engine_scratch_give_back(adapt2_engine_comm_t *engine_comm, size_t bytes, char *scratch) {
    reinterpret_cast<adapt2::Comm *>(engine_comm)->pool().give_back_one(bytes, scratch);
}

}  // extern "C"
