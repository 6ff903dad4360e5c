/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * The send-behind ring: where the direct path's calls that may detach
 * (above coll_adapt2_detach_min_message, up to coll_adapt2_direct_detach_max)
 * keep the copies their sends are posted from, so that the call returns
 * without waiting for its peers. Such a send is eager (or, with the limit
 * raised above 4 KiB on one node with single copy, a rendezvous whose data
 * the receiver pulls): the PML hands it to the peer's queue when it is
 * posted, so a peer that is late (computing,
 * descheduled) finds the data when it arrives, and the sender's noise stays
 * with the sender; only the send's completion waits for the peer. Without the
 * ring the sender waits until the peer takes the data (measured: 512 B-4 KiB
 * sends over shared memory do not complete before their receiver is in MPI;
 * docs/measurements.md, "Sends left behind").
 *
 * A slot holds one call's copy and how many of its sends are in flight.
 * Each send's completion callback frees its request and counts it off (on
 * whatever thread progresses it: an atomic count, no lock), so no request
 * outlives its send: a pending request would keep the communicator, and with
 * it this ring, alive after MPI_Comm_free. Slots are taken in order and given
 * back in order once their sends are over (looked at each take, progressed
 * until then when the ring is full), so the memory is bounded: at most
 * coll_adapt2_detach_max_bytes per communicator (as the engine's detached
 * calls), in at most kMaxSlots slots of coll_adapt2_direct_detach_max bytes,
 * each made when first used (a communicator whose peers keep up uses one or
 * two).
 * Collectives on one communicator never run concurrently (MPI), so only the
 * callbacks run beside the calls.
 *
 * Broadcasts above direct_detach_max (up to direct_watch_max) use the ring
 * only while their peers come late: a copy of 8-64 KiB costs more than the
 * call saves, and hellos a round trip (measured at np 2: sending from the
 * user's buffer took 0.53-0.81x the time of the engine's hellos; a copy into
 * the ring was slower still from 32 KiB, docs/measurements.md, "Broadcasts
 * watched on the direct path"), so they send from the message and wait, and a
 * send still in flight when the grace period ends turns the ring on for the
 * next calls, until every earlier call's sends were over at the start of
 * kInStepCalls calls in a row (the engine's watching root, late_peers.h).
 */
#include <string.h>

#include "coll_adapt2_direct.h"

#include "opal/runtime/opal_progress.h"

/* kMaxSlots bounds how many calls a rank may run ahead of a late peer (within
 * coll_adapt2_detach_max_bytes): 64 slots, 256 KiB of 4 KiB calls, let a
 * noise loop's root fall behind its leaves only by 64 calls, and then each
 * leaf waited for it (perf/noise_bench -k reduce -m 4096 -s 6 at np 8: 1.49
 * amplification against the data's floor of 1.00; 1.005 with 2048 slots,
 * 0.98-1.05 with 512, where that root falls about 40 calls behind;
 * docs/measurements.md, "The floor of the noise loop"). A send completes only as the PML
 * progresses, which a caller that never waits does not do, so past
 * kReclaimFrom slots in use each call progresses once first: a ring whose
 * peers keep up stays near that many slots, the rest is slack for late ones. */
enum { kMaxSlots = 512, kReclaimFrom = 64, kInStepCalls = 8 };

typedef struct behind_slot {
    volatile int32_t in_flight; /* its call's sends not over yet */
    mca_coll_adapt2_behind_t *ring;
    char *copy; /* slot_bytes, made when the slot is first used */
} behind_slot_t;

struct mca_coll_adapt2_behind_t {
    int slots;               /* in the ring */
    size_t slot_bytes;       /* a call's message at most */
    int oldest, used;        /* the slots in use: oldest .. oldest + used - 1 (mod slots) */
    behind_slot_t *slot;     /* slots */
    volatile int32_t failed; /* a send's error, not reported yet (0: none) */
    int waited;              /* the call being made waited for a slot */
    bool peers_late;         /* watching calls leave their sends behind */
    int in_step;             /* calls in a row that found every earlier send over */
};

static int clamp(long value, int low, int high)
{
    return value < low ? low : value > high ? high : (int) value;
}

static mca_coll_adapt2_behind_t *behind_new(void)
{
    mca_coll_adapt2_behind_t *b = calloc(1, sizeof *b);
    if (NULL == b) {
        return NULL;
    }
    /* a call's message at most: the watched broadcasts' too */
    const long most = ADAPT2_LONG(direct_detach_max), watched = ADAPT2_LONG(direct_watch_max);
    b->slot_bytes = (size_t) (watched > most ? watched : most);
    const long cap = ADAPT2_LONG(detach_max_bytes);
    b->slots = clamp(b->slot_bytes > 0 ? cap / (long) b->slot_bytes : 0, 1, kMaxSlots);
    b->slot = calloc((size_t) b->slots, sizeof *b->slot);
    if (NULL == b->slot) {
        free(b);
        return NULL;
    }
    for (int i = 0; i < b->slots; ++i) {
        b->slot[i].ring = b;
    }
    return b;
}

/* The module's ring, made at its first use (NULL: no memory). */
static mca_coll_adapt2_behind_t *ring_of(mca_coll_adapt2_module_t *module)
{
    if (NULL == module->behind) {
        module->behind = behind_new();
    }
    return module->behind;
}

/* A send's completion (any thread, maybe inside the posting call). */
static int send_over(ompi_request_t *req)
{
    behind_slot_t *slot = req->req_complete_cb_data;
    const int status = req->req_status.MPI_ERROR;
    if (OMPI_SUCCESS != status) {
        (void) opal_atomic_compare_exchange_strong_32(&slot->ring->failed, &(int32_t){0}, status);
    }
    opal_atomic_wmb();
    (void) opal_atomic_add_fetch_32(&slot->in_flight, -1);
    /* Last: the request may hold the communicator's last reference, whose
     * end frees this ring (measured: counting off after this deadlocked in
     * mca_coll_adapt2_behind_free). */
    ompi_request_free(&req);
    return 1; /* freed: the PML must not mark it complete */
}

/* A send that an earlier call left behind failed: its peer may never get the
 * data, so this is reported like the failing call itself would have been. */
static int report_failed_send(ompi_communicator_t *comm, int rc)
{
    char why[192];
    snprintf(why, sizeof why,
             "rank %d of %d: a send that an earlier broadcast or reduce on the direct path left behind "
             "(coll_adapt2_direct_detach_max) failed with error %d",
             ompi_comm_rank(comm), ompi_comm_size(comm), rc);
    mca_coll_adapt2_call_failed(comm, "a collective's send left behind", rc, why);
    return rc;
}

/* Gives back the oldest slots whose sends are over; with `wait`, progresses
 * until the oldest one's are. */
static void give_back(mca_coll_adapt2_behind_t *b, bool wait)
{
    while (b->used > 0) {
        behind_slot_t *oldest = &b->slot[b->oldest];
        while (wait && oldest->in_flight > 0) {
            opal_progress();
        }
        if (oldest->in_flight > 0) {
            return;
        }
        opal_atomic_rmb();
        wait = false;
        b->oldest = (b->oldest + 1) % b->slots;
        --b->used;
    }
}

/* The slot a call would take, with its copy made: NULL when the ring cannot
 * hold `bytes` (*rc OMPI_SUCCESS) or an earlier send failed (*rc, reported). */
static behind_slot_t *take(mca_coll_adapt2_module_t *module, ompi_communicator_t *comm, size_t bytes, int *rc)
{
    *rc = OMPI_SUCCESS;
    mca_coll_adapt2_behind_t *b = ring_of(module);
    if (NULL == b || bytes > b->slot_bytes) {
        return NULL;
    }
    if (b->used >= kReclaimFrom) {
        opal_progress();
    }
    give_back(b, false);
    b->waited = b->used == b->slots;
    if (b->waited) { /* full: the oldest call's peers must take theirs */
        give_back(b, true);
    }
    if (0 != b->failed) {
        *rc = report_failed_send(comm, b->failed);
        b->failed = 0;
        return NULL;
    }
    behind_slot_t *slot = &b->slot[(b->oldest + b->used) % b->slots];
    if (NULL == slot->copy) { /* once per slot: a ring that never runs ahead keeps one or two */
        slot->copy = malloc(b->slot_bytes);
    }
    return slot->copy ? slot : NULL; /* no memory: the caller sends as usual */
}

/* Packs the message into the copy: a memcpy where it is contiguous. */
static int fill(char *copy, const void *buf, int count, ompi_datatype_t *dtype, size_t bytes)
{
    if (ompi_datatype_is_contiguous_memory_layout(dtype, count)) { /* the common case: no convertor (~0.3 us) */
        ptrdiff_t lb, extent;
        ompi_datatype_get_true_extent(dtype, &lb, &extent);
        memcpy(copy, (const char *) buf + lb, bytes);
        return OMPI_SUCCESS;
    }
    return mca_coll_adapt2_convert_whole((void *) buf, count, dtype, copy, bytes, true);
}

/* The slot holds the call if its sends are in flight; counted either way. */
static void keep(mca_coll_adapt2_behind_t *b, const behind_slot_t *slot, size_t bytes)
{
    /* peers already in the call may have taken the data: then the slot is
     * free again at once */
    const bool in_flight = slot->in_flight > 0;
    if (in_flight) {
        ++b->used;
    }
    mca_coll_adapt2_engine_direct_left_behind(bytes, in_flight, b->waited);
}

int mca_coll_adapt2_behind_post(mca_coll_adapt2_module_t *module, ompi_communicator_t *comm, const void *buf, int count,
                                ompi_datatype_t *dtype, size_t bytes, const int *peers, int npeers, int tag,
                                int *failed)
{
    int rc;
    behind_slot_t *slot = take(module, comm, bytes, &rc);
    *failed = -1;
    if (NULL == slot) {
        return OMPI_SUCCESS == rc ? MCA_COLL_ADAPT2_NOT_HELD : rc;
    }
    if (OMPI_SUCCESS != (rc = fill(slot->copy, buf, count, dtype, bytes))) {
        return rc; /* nothing posted: the slot stays free */
    }
    for (int i = 0; i < npeers && OMPI_SUCCESS == rc; ++i) {
        (void) opal_atomic_add_fetch_32(&slot->in_flight, 1);
        rc = mca_coll_adapt2_pml_isend_then(comm, slot->copy, bytes, peers[i], tag, send_over, slot);
        if (OMPI_SUCCESS != rc) {
            (void) opal_atomic_add_fetch_32(&slot->in_flight, -1);
            *failed = i;
        }
    }
    keep(module->behind, slot, bytes); /* even after a failure: the sends posted read the copy */
    return rc;
}

bool mca_coll_adapt2_behind_peers_late(mca_coll_adapt2_module_t *module)
{
    mca_coll_adapt2_behind_t *b = ring_of(module);
    if (NULL == b || !b->peers_late) {
        return false;
    }
    if (b->used > 0) { /* their completions come only as the PML progresses */
        opal_progress();
        give_back(b, false);
    }
    b->in_step = 0 == b->used ? b->in_step + 1 : 0;
    b->peers_late = b->in_step < kInStepCalls;
    return b->peers_late;
}

void mca_coll_adapt2_behind_came_late(mca_coll_adapt2_module_t *module)
{
    mca_coll_adapt2_behind_t *b = ring_of(module);
    if (NULL != b) {
        b->peers_late = true;
        b->in_step = 0;
    }
}

void mca_coll_adapt2_behind_free(mca_coll_adapt2_module_t *module)
{
    mca_coll_adapt2_behind_t *b = module->behind;
    if (NULL == b) {
        return;
    }
    /* Nothing is in flight here: each send holds the communicator, whose end
     * comes only after every send has counted itself off (send_over). This
     * may run inside that callback, so it must not wait: should the
     * invariant break, it says so and leaves the ring to the sends. */
    int in_flight = 0;
    for (int i = 0; i < b->slots; ++i) {
        in_flight += b->slot[i].in_flight;
    }
    if (in_flight > 0) {
        opal_output(0,
                    "coll:adapt2: internal error: %d send(s) left behind by broadcasts or reduces on the direct "
                    "path still in flight when their communicator ended; their copies are kept",
                    in_flight);
        module->behind = NULL;
        return;
    }
    for (int i = 0; i < b->slots; ++i) {
        free(b->slot[i].copy);
    }
    free(b->slot);
    free(b);
    module->behind = NULL;
}
