/*
 * Describes a user buffer to the engine as a packed byte stream: a pointer
 * when (count, datatype) is contiguous in memory, otherwise pack/unpack hooks
 * over Open MPI convertors kept in the request, one pair per user buffer.
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

/* Convertors are prepared on first use (in an engine handler), once per
 * call: a broadcast root only packs, a leaf only unpacks. */
static opal_convertor_t *pack_convertor(mca_coll_adapt2_user_buffer_t *b)
{
    if (!b->has_pack_conv) {
        OBJ_CONSTRUCT(&b->pack_conv, opal_convertor_t);
        b->has_pack_conv = true;
        opal_convertor_copy_and_prepare_for_send(ompi_mpi_local_convertor, &b->dtype->super, b->count,
                                                 b->buf, 0, &b->pack_conv);
    }
    return &b->pack_conv;
}

static opal_convertor_t *unpack_convertor(mca_coll_adapt2_user_buffer_t *b)
{
    if (!b->has_unpack_conv) {
        OBJ_CONSTRUCT(&b->unpack_conv, opal_convertor_t);
        b->has_unpack_conv = true;
        opal_convertor_copy_and_prepare_for_recv(ompi_mpi_local_convertor, &b->dtype->super, b->count,
                                                 b->buf, 0, &b->unpack_conv);
    }
    return &b->unpack_conv;
}

static int pack(void *packer, size_t offset, size_t len, void *dst)
{
    return convert(pack_convertor(packer), offset, len, dst, opal_convertor_pack);
}

static int unpack(void *packer, size_t offset, size_t len, const void *src)
{
    return convert(unpack_convertor(packer), offset, len, (void *) src, opal_convertor_unpack);
}

void mca_coll_adapt2_release_buffers(mca_coll_adapt2_request_t *req)
{
    for (int i = 0; i < 2; ++i) {
        if (req->bufs[i].has_pack_conv) OBJ_DESTRUCT(&req->bufs[i].pack_conv);
        if (req->bufs[i].has_unpack_conv) OBJ_DESTRUCT(&req->bufs[i].unpack_conv);
        req->bufs[i].has_pack_conv = req->bufs[i].has_unpack_conv = false;
    }
}

int mca_coll_adapt2_describe_buffer(mca_coll_adapt2_request_t *req, int which, void *buf, int count,
                                    ompi_datatype_t *datatype, adapt2_buffer_t *out)
{
    size_t type_size;
    ptrdiff_t true_lb, true_extent;

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
    mca_coll_adapt2_user_buffer_t *b = &req->bufs[which];
    b->buf = buf;
    b->count = count;
    b->dtype = datatype;
    out->packer = b;
    out->pack = pack;
    out->unpack = unpack;
    return OMPI_SUCCESS;
}
