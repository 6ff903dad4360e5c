// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// The production transports: byte transfers posted and completed by the C
// layer, through Open MPI's PML (c/coll_adapt2_pml.c) or adapt2's own UCX
// worker (c/coll_adapt2_ucx.c). Either may complete an operation inside the
// posting call.
#include <memory>
#include <new>

#include "../adapt2_bridge.h"
#include "../engine/comm.h"

namespace adapt2 {
namespace {

class CTransport final : public Transport {
public:
    explicit CTransport(const adapt2_transport_ops_t &ops) : ops_(ops) {}

    int send(const void *buf, size_t len, int peer, int tag, Op *op) override {
        return ops_.isend(ops_.ctx, buf, len, peer, tag, op);
    }
    int recv(void *buf, size_t len, int peer, int tag, Op *op) override {
        return ops_.irecv(ops_.ctx, buf, len, peer, tag, op);
    }

private:
    adapt2_transport_ops_t ops_;
};

adapt2::Topology topology_of(const adapt2_comm_settings_t &s) {
    adapt2::Topology topo;
    topo.node.assign(s.node, s.node + s.size);
    if (s.numa) topo.numa.assign(s.numa, s.numa + s.size);
    return topo;
}

}  // namespace
}  // namespace adapt2

extern "C" adapt2_engine_comm_t *mca_coll_adapt2_engine_comm_create(const adapt2_transport_ops_t *ops,
                                                                    const adapt2_comm_settings_t *s) {
    try {
        auto transport = std::make_unique<adapt2::CTransport>(*ops);
        auto *comm = new adapt2::Comm(std::move(transport), s->rank, s->size, s->pool_max_bytes, s->comm_id,
                                      s->detach_max_bytes, s->progress);
        comm->schedules().set_max(s->schedule_cache);
        if (s->node) comm->set_topology(adapt2::topology_of(*s));
        comm->set_tag_reserver(s->reserve_tags, s->reserve_ctx);
        comm->set_logger(s->log_level, s->log);
        return reinterpret_cast<adapt2_engine_comm_t *>(comm);
    } catch (...) {
        return nullptr;
    }
}
