/*
 * Describes a user buffer to the engine as a packed byte stream: a pointer
 * when (count, datatype) is contiguous in memory, otherwise pack/unpack hooks
 * over an Open MPI convertor kept in the request.
 */
#include "coll_adapt2.h"

#include "ompi/datatype/ompi_datatype.h"

typedef int32_t (*convert_fn)(opal_convertor_t *conv, struct iovec *iov, uint32_t *iov_count,
                              size_t *max_data);

/* Moves bytes [offset, offset+len) of the packed stream between the user
 * buffer and `flat` with opal_convertor_pack or _unpack. */
static int convert(opal_convertor_t *conv, size_t offset, size_t len, void *flat, convert_fn fn)
{
    struct iovec iov = {.iov_base = flat, .iov_len = len};
    uint32_t iov_count = 1;
    size_t max_data = len, position = offset;
    if (OPAL_SUCCESS != opal_convertor_set_position(conv, &position)) {
        return OMPI_ERROR;
    }
    fn(conv, &iov, &iov_count, &max_data);
    return max_data == len ? OMPI_SUCCESS : OMPI_ERROR;
}

static int pack(void *packer, size_t offset, size_t len, void *dst)
{
    mca_coll_adapt2_request_t *req = (mca_coll_adapt2_request_t *) packer;
    return convert(&req->send_conv, offset, len, dst, opal_convertor_pack);
}

static int unpack(void *packer, size_t offset, size_t len, const void *src)
{
    mca_coll_adapt2_request_t *req = (mca_coll_adapt2_request_t *) packer;
    return convert(&req->recv_conv, offset, len, (void *) src, opal_convertor_unpack);
}

int mca_coll_adapt2_describe_buffer(mca_coll_adapt2_request_t *req, void *buf, int count,
                                    ompi_datatype_t *datatype, bool sending, adapt2_buffer_t *out)
{
    size_t type_size;
    ptrdiff_t true_lb, true_extent;
    int rc;

    ompi_datatype_type_size(datatype, &type_size);
    memset(out, 0, sizeof *out);
    out->bytes = type_size * (size_t) count;
    if (0 == out->bytes) {
        return OMPI_SUCCESS;
    }
    if (ompi_datatype_is_contiguous_memory_layout(datatype, count)) {
        ompi_datatype_get_true_extent(datatype, &true_lb, &true_extent);
        out->contig = (char *) buf + true_lb;
        return OMPI_SUCCESS;
    }
    if (sending) {
        OBJ_CONSTRUCT(&req->send_conv, opal_convertor_t);
        req->has_send_conv = true;
        rc = opal_convertor_copy_and_prepare_for_send(ompi_mpi_local_convertor, &datatype->super,
                                                      count, buf, 0, &req->send_conv);
    } else {
        OBJ_CONSTRUCT(&req->recv_conv, opal_convertor_t);
        req->has_recv_conv = true;
        rc = opal_convertor_copy_and_prepare_for_recv(ompi_mpi_local_convertor, &datatype->super,
                                                      count, buf, 0, &req->recv_conv);
    }
    out->packer = req;
    out->pack = pack;
    out->unpack = unpack;
    return rc;
}
