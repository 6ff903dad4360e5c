// The production transport: byte transfers through Open MPI's PML (ob1 or
// ucx), posted and completed by the C layer (c/coll_adapt2_pml.c), which may
// complete an operation inside the posting call.
#include <memory>
#include <new>

#include "../adapt2_bridge.h"
#include "../engine/comm.h"

namespace adapt2 {
namespace {

class PmlTransport final : public Transport {
public:
    explicit PmlTransport(void *ompi_comm) : comm_(ompi_comm) {}

    int send(const void *buf, size_t len, int peer, int tag, Op *op) override {
        return mca_coll_adapt2_c_pml_isend(comm_, buf, len, peer, tag, op);
    }
    int recv(void *buf, size_t len, int peer, int tag, Op *op) override {
        return mca_coll_adapt2_c_pml_irecv(comm_, buf, len, peer, tag, op);
    }

private:
    void *comm_;  // ompi_communicator_t*, opaque here
};

}  // namespace
}  // namespace adapt2

extern "C" adapt2_engine_comm_t *mca_coll_adapt2_engine_comm_create(void *ompi_comm, int rank, int size,
                                                                    size_t pool_max_bytes, uint32_t comm_id) {
    try {
        auto transport = std::make_unique<adapt2::PmlTransport>(ompi_comm);
        auto *comm = new adapt2::Comm(std::move(transport), rank, size, pool_max_bytes, comm_id);
        return reinterpret_cast<adapt2_engine_comm_t *>(comm);
    } catch (...) {
        return nullptr;
    }
}
