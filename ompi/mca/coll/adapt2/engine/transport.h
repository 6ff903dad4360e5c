// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// What a collective schedule asks of the network: "move these bytes to/from
// that rank with this tag, and tell me when done". The PML transport is the
// real one; tests use a fake that completes in adversarial orders, and the
// simulator a discrete-event network. Later: direct UCX and GPU staging.
#ifndef ADAPT2_ENGINE_TRANSPORT_H
#define ADAPT2_ENGINE_TRANSPORT_H

#include <cstddef>
#include <cstdint>

namespace adapt2 {

class Schedule;

// One posted send or receive. Owned by its schedule (preallocated, reused);
// the transport only holds it between post and completion.
struct Op {
    // kTimer: a Grace period ended (schedule.h); kCopy: a device copy (Schedule::post_copy)
    enum Kind : uint8_t { kSend, kRecv, kTimer, kCopy };
    // What a send or receive carries: data (a segment or message), or a
    // hello (detach.h: the peer has entered the call).
    enum Carries : uint8_t { kData, kHello };

    Op *next = nullptr;  // link in the schedule's completion inbox
    Schedule *owner = nullptr;
    int status = 0;
    Kind kind = kSend;
    Carries carries = kData;
    uint8_t step = 0;  // kCopy: which of its flow's copies it is (the flow's own enum)
    int32_t flow = 0;  // which flow of the schedule posted it (its index)
    int32_t segment = 0;
    int32_t peer_index = 0;  // which child/parent slot of the schedule
    int32_t peer = 0;        // the communicator rank it talks to
    size_t bytes = 0;
};

class Transport {
public:
    virtual ~Transport() = default;

    // Both calls may complete the operation before returning, on the calling
    // thread, by calling op->owner->complete(op, status). They return 0 or an
    // error, in which case the operation was not posted and will not complete.
    // Messages between one pair of ranks with one tag match in posting order.
    virtual int send(const void *buf, size_t len, int peer, int tag, Op *op) = 0;
    virtual int recv(void *buf, size_t len, int peer, int tag, Op *op) = 0;
};

}  // namespace adapt2

#endif
