/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * Describes a user buffer to the engine as a packed byte stream: a pointer
 * when (count, datatype) is contiguous in memory, otherwise pack/unpack hooks
 * over Open MPI convertors kept in the request, one pair per user buffer.
 */
#include "coll_adapt2.h"

#include "ompi/datatype/ompi_datatype.h"

/* Convertors are prepared on first use (in an engine handler), once per
 * call: a broadcast root only packs, a leaf only unpacks. */
static opal_convertor_t *pack_convertor(mca_coll_adapt2_user_buffer_t *b)
{
    if (!b->has_pack_conv) {
        OBJ_CONSTRUCT(&b->pack_conv, opal_convertor_t);
        b->has_pack_conv = true;
        opal_convertor_copy_and_prepare_for_send(ompi_mpi_local_convertor, &b->dtype->super, b->count, b->buf, 0,
                                                 &b->pack_conv);
    }
    return &b->pack_conv;
}

static opal_convertor_t *unpack_convertor(mca_coll_adapt2_user_buffer_t *b)
{
    if (!b->has_unpack_conv) {
        OBJ_CONSTRUCT(&b->unpack_conv, opal_convertor_t);
        b->has_unpack_conv = true;
        opal_convertor_copy_and_prepare_for_recv(ompi_mpi_local_convertor, &b->dtype->super, b->count, b->buf, 0,
                                                 &b->unpack_conv);
    }
    return &b->unpack_conv;
}

/* Larger than any predefined element (long double complex: 32 bytes). */
#define ADAPT2_BOUNCE_BYTES 64

/* Moves `conv` to stream byte `*p` from the beginning: Open MPI 4.1 cannot
 * always move a convertor forward from a position it rounded down (the
 * position walk divides by zero, found by the fuzzer), so a jump never starts
 * from a previous jump. Whole datatype instances are skipped by one division,
 * so this costs a walk through one instance at most. */
static int rewind_and_set(opal_convertor_t *conv, size_t *p)
{
    size_t zero = 0;
    if ((0 != conv->bConverted || 0 != conv->partial_length) &&
        OPAL_SUCCESS != opal_convertor_set_position(conv, &zero)) {
        return OMPI_ERROR;
    }
    return 0 == *p || OPAL_SUCCESS == opal_convertor_set_position(conv, p) ? OMPI_SUCCESS : OMPI_ERROR;
}

/* Segment edges are byte offsets of the packed stream that every rank
 * computes alike, so an edge may cut a predefined element (the double of a
 * struct) in two. Open MPI's convertor moves whole elements only: it seeks to
 * the start of a cut element (4.1) or records how far into it the position
 * is (5.0). Either way, `*into` gets the bytes of the element before
 * `position` and the convertor is left at that element's start. A convertor
 * already at `position` (the previous segment ended there) is not moved. */
static int seek(opal_convertor_t *conv, size_t position, size_t *into)
{
    *into = 0;
    if (position == conv->bConverted && 0 == conv->partial_length) {
        return OMPI_SUCCESS;
    }
    size_t p = position;
    if (OMPI_SUCCESS != rewind_and_set(conv, &p) || p > position) {
        return OMPI_ERROR;
    }
    if (p == position && 0 != conv->partial_length) {
        p = position - conv->partial_length;
        if (OMPI_SUCCESS != rewind_and_set(conv, &p) || 0 != conv->partial_length) {
            return OMPI_ERROR;
        }
    }
    *into = position - p;
    return OMPI_SUCCESS;
}

/* Moves whole elements between the convertor's position and at most `len`
 * bytes at `flat`; returns the bytes moved. */
static size_t move_whole(opal_convertor_t *conv, const void *flat, size_t len, bool packing)
{
    struct iovec iov = {.iov_base = (void *) flat, .iov_len = len};
    uint32_t iov_count = 1;
    size_t max_data = len;
    if (packing) {
        opal_convertor_pack(conv, &iov, &iov_count, &max_data);
    } else {
        opal_convertor_unpack(conv, &iov, &iov_count, &max_data);
    }
    return max_data;
}

/* Reads the whole elements from stream byte `start` (the start of a cut
 * element) in the user's buffer into `bounce`; returns the bytes read. A
 * fresh convertor each time: Open MPI 4.1's send convertor crashed when moved
 * forward again after packing (a resized type with a negative lower bound in
 * an indexed_block, found by the fuzzer). */
static size_t read_elements(mca_coll_adapt2_user_buffer_t *b, size_t start, char *bounce)
{
    size_t into, got = 0;
    opal_convertor_t conv;
    OBJ_CONSTRUCT(&conv, opal_convertor_t);
    opal_convertor_copy_and_prepare_for_send(ompi_mpi_local_convertor, &b->dtype->super, b->count, b->buf, 0, &conv);
    if (OMPI_SUCCESS == seek(&conv, start, &into) && 0 == into) {
        got = move_whole(&conv, bounce, ADAPT2_BOUNCE_BYTES, true);
    }
    OBJ_DESTRUCT(&conv);
    return got;
}

/* Packs (or unpacks) bytes [offset, offset+len) of the stream to (from)
 * `flat`, for datatypes whose instance is larger than the instance bounce.
 * Whole elements go straight through the convertor. An element cut
 * by an edge goes through a small bounce buffer: packing copies out our part
 * of it; unpacking reads the element's current bytes from the user's buffer,
 * puts our part in and writes it back whole, so the part the other segment
 * brings (before or after us) is kept. */
static int convert_elements(mca_coll_adapt2_user_buffer_t *b, size_t offset, size_t len, char *flat, bool packing)
{
    char bounce[ADAPT2_BOUNCE_BYTES];
    opal_convertor_t *conv = packing ? pack_convertor(b) : unpack_convertor(b);
    size_t done = 0, into;
    while (done < len) {
        if (OMPI_SUCCESS != seek(conv, offset + done, &into)) {
            return OMPI_ERROR;
        }
        const size_t want = len - done;
        size_t got = into ? 0 : move_whole(conv, flat + done, want, packing);
        if (0 == got) {
            const size_t start = offset + done - into;
            size_t whole = read_elements(b, start, bounce);
            if (whole <= into) {
                return OMPI_ERROR; /* cannot happen: elements are smaller than the bounce */
            }
            got = whole - into < want ? whole - into : want;
            if (packing) {
                memcpy(flat + done, bounce + into, got);
            } else {
                memcpy(bounce + into, flat + done, got);
                if (OMPI_SUCCESS != seek(conv, start, &into) || move_whole(conv, bounce, whole, false) != whole) {
                    return OMPI_ERROR;
                }
            }
        }
        done += got;
    }
    return OMPI_SUCCESS;
}

/* Largest datatype instance moved whole through a stack bounce buffer. */
#define ADAPT2_INSTANCE_BOUNCE_BYTES 4096

/* Moves `len` bytes (whole instances) between stream byte `position` (an
 * instance boundary) and `flat`; returns the bytes moved. */
static size_t move_instances(opal_convertor_t *conv, size_t position, const void *flat, size_t len, bool packing)
{
    size_t into;
    if (OMPI_SUCCESS != seek(conv, position, &into) || 0 != into) {
        return 0;
    }
    return move_whole(conv, flat, len, packing);
}

/* Packs instance `k` of the user's buffer, as it is now, into `bounce`. A
 * fresh convertor, as in read_elements. */
static size_t read_instance(mca_coll_adapt2_user_buffer_t *b, size_t k, size_t size, char *bounce)
{
    opal_convertor_t conv;
    OBJ_CONSTRUCT(&conv, opal_convertor_t);
    opal_convertor_copy_and_prepare_for_send(ompi_mpi_local_convertor, &b->dtype->super, b->count, b->buf, 0, &conv);
    size_t got = move_instances(&conv, k * size, bounce, size, true);
    OBJ_DESTRUCT(&conv);
    return got;
}

/* Packs (or unpacks) bytes [offset, offset+len) of the stream to (from)
 * `flat`, keeping every convertor call on datatype instance boundaries.
 * Open MPI 5.0.7's convertor corrupts data when it resumes inside an
 * instance whose elements are misaligned (hvector(2, 1, 18, MPI_DOUBLE)
 * unpacked in 1000-byte pieces writes doubles into the holes; plain MPI_Recv
 * over its pml ucx does the same; 4.1.4 does not), so an instance cut by a
 * segment edge goes through a bounce buffer whole: packing copies out our
 * part; unpacking reads the instance's current bytes, puts our part in and
 * writes the instance back, keeping the part the other segment brings. */
static int convert_instances(mca_coll_adapt2_user_buffer_t *b, size_t size, size_t offset, size_t len, char *flat,
                             bool packing)
{
    char bounce[ADAPT2_INSTANCE_BOUNCE_BYTES];
    opal_convertor_t *conv = packing ? pack_convertor(b) : unpack_convertor(b);
    size_t done = 0;
    while (done < len) {
        const size_t position = offset + done, want = len - done;
        const size_t k = position / size, into = position - k * size;
        if (0 == into && want >= size) {
            const size_t whole = want - want % size;
            if (move_instances(conv, position, flat + done, whole, packing) != whole) {
                return OMPI_ERROR;
            }
            done += whole;
            continue;
        }
        const size_t got = size - into < want ? size - into : want;
        if (read_instance(b, k, size, bounce) != size) {
            return OMPI_ERROR;
        }
        if (packing) {
            memcpy(flat + done, bounce + into, got);
        } else {
            memcpy(bounce + into, flat + done, got);
            if (move_instances(conv, k * size, bounce, size, false) != size) {
                return OMPI_ERROR;
            }
        }
        done += got;
    }
    return OMPI_SUCCESS;
}

static int convert_range(mca_coll_adapt2_user_buffer_t *b, size_t offset, size_t len, char *flat, bool packing)
{
    const size_t size = b->dtype->super.size;
    if (size <= ADAPT2_INSTANCE_BOUNCE_BYTES) {
        return convert_instances(b, size, offset, len, flat, packing);
    }
    return convert_elements(b, offset, len, flat, packing);
}

static int pack(void *packer, size_t offset, size_t len, void *dst)
{
    return convert_range(packer, offset, len, dst, true);
}

static int unpack(void *packer, size_t offset, size_t len, const void *src)
{
    return convert_range(packer, offset, len, (char *) src, false);
}

int mca_coll_adapt2_convert_whole(void *buf, int count, ompi_datatype_t *dtype, void *packed, size_t bytes,
                                  bool packing)
{
    mca_coll_adapt2_user_buffer_t b = {.buf = buf, .count = count, .dtype = dtype};
    const int rc = convert_range(&b, 0, bytes, packed, packing);
    if (b.has_pack_conv) OBJ_DESTRUCT(&b.pack_conv);
    if (b.has_unpack_conv) OBJ_DESTRUCT(&b.unpack_conv);
    return rc;
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
