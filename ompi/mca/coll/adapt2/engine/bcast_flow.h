// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Segmented, event-driven broadcast down a tree.
//
// A segment is forwarded to each child the moment it is here (in order) and
// that child's send window has room; children are served independently, so a
// slow child never holds back a fast one. Receives are posted up to a window
// ahead. Contiguous data moves straight from/into the user buffer; other data
// goes through a bounded ring of staging buffers.
//
// Windows span segment numbers, not counts: segment s goes to a child only
// once that child's sends below s - send_window have completed. Then the
// tags of messages in flight to one child never repeat (see Schedule).
//
// Levels (multi-level trees): the edges of each level may carry messages of
// several consecutive segments (`groups`, e.g. larger messages between
// nodes). Both ends of an edge use its level's group, and on each edge
// windows and tags count messages. A rank forwards whatever its children's
// messages need as soon as those segments are all here: a node leader sends
// the first segment of a large message inside its node as soon as the whole
// message is in. The staging ring holds whole messages (see StagingRing).
//
// The root normally has all its data; in an allreduce it is supplied segment
// by segment as the reduction finishes them (supply()).
//
// Detached (a private copy of the message was given, see detach.h): the root
// copies its data in, the others receive into the copy and copy out to the
// user; sends go from the copy, all posted at once. locally_done() once the
// user's buffer is no longer needed.
//
// Device data (on a GPU) goes through the staging ring too, with copies on
// the communicator's device queue instead of pack/unpack: the root copies
// segments out as slots free up and sends each once its copy is done (a
// supplied root copies what it is supplied); the others forward a segment
// from its slot the moment it arrives and copy it in meanwhile, and free the
// slot once both are done.
//
// Awaiting (a blocking call's root with a copy at hand): the root copies
// only for late children. A child that says hello (it has entered the call)
// within the grace period is served from the user's buffer, as if
// detaching were off; when the period ends the rest are served from a copy.
#ifndef ADAPT2_ENGINE_BCAST_FLOW_H
#define ADAPT2_ENGINE_BCAST_FLOW_H

#include <algorithm>
#include <memory>
#include <vector>

#include "staging_ring.h"
#include "topology.h"
#include "tree_flow.h"
#include "user_data.h"

namespace adapt2 {

// Everything one broadcast flow needs to know beyond TreeArgs (copy: the
// whole packed message; hello: the root's children say hello; await: the
// root copies only for children late past the grace).
struct BcastArgs : TreeArgs {
    adapt2_buffer_t data{};
    size_t unit = 1;                  // segments hold whole units (elements of a reduction)
    bool supplied = false;            // root: segments become available through supply()
    int groups[kLevels] = {1, 1, 1};  // segments per message on edges of each level
};

class BcastFlow final : public TreeFlow {
public:
    BcastFlow(Schedule &schedule, int id, const BcastArgs &args, std::shared_ptr<const Tree> tree, BufferPool &pool);

    int max_ops() const override;
    void start() override;
    void on_complete(Op &op) override;
    bool has_pending_work() const override;
    bool locally_done() const override;
    void finish() override;
    void expire() override;

    // Root of a supplied flow: segment s of the data is now in place.
    void supply(int segment);

private:
    // Where this rank keeps a message between its arrival (at the root: the
    // user's data) and its last send, and how the user's buffer gets it. One
    // per flow; landing(), landed(), send_source() and release_sent() are the
    // only places that look at it, so the handlers state the algorithm once.
    enum class Path : uint8_t {
        user,    // contiguous host data: received into and sent from the user's buffer
        copy,    // detached: received into and sent from the private copy, copied out to the user
        packed,  // other host data: staging slots, unpacked and packed by the convertor
        device,  // device data: staging slots, filled and emptied by device copies
    };
    static Path path_of(const BcastArgs &args);
    bool staged() const { return path_ == Path::packed || path_ == Path::device; }
    bool device() const { return path_ == Path::device; }
    char *landing(int first, int count);
    void landed(int first, int end);
    void release_sent(int first, int end);
    void on_received(int segment);
    void on_copied(int segment);
    void copy_from_device();
    void on_sent(int child, int segment);
    void post_receives();
    void feed(int child);
    void feed_all();
    const char *send_source(int child, int message, int group);
    void borrow_staging();
    void copy_in_all();
    void copy_out(int segment);
    void post_hellos();
    void on_hello(int child);
    // Messages of `group` segments: how many, and their segments [first, end).
    int messages(int group) const { return (segments_.count() + group - 1) / group; }
    int end_of(int message, int group) const { return std::min((message + 1) * group, segments_.count()); }
    size_t message_bytes(int message, int group) const {
        return segments_.span_bytes(message * group, end_of(message, group));
    }
    int group_of(int rank, const BcastArgs &args) const;

    // Where the root serves a child from (awaiting: decided per child).
    enum Source : uint8_t { undecided, user, copied };

    UserData data_;
    const Path path_;
    int recv_window_;
    StagingRing staging_;
    std::pmr::vector<Source> source_;          // root: per child
    CompletionWindow arrived_;                 // prefix: segments here, in order
    int in_group_;                             // segments per message from the parent
    std::pmr::vector<int> group_;              // per child: segments per message
    int next_recv_ = 0;                        // next message to receive
    std::pmr::vector<int> next_send_;          // per child: next message to send
    std::pmr::vector<CompletionWindow> sent_;  // per child: sends completed (messages)
    long long sends_done_ = 0;
    long long sends_total_ = 0;
    CompletionWindow supplied_;  // device root: segments in the user's buffer
    int next_copy_ = 0;          // device root: next segment to copy out
    int copies_done_ = 0;        // device: copies finished
};

}  // namespace adapt2

#endif
