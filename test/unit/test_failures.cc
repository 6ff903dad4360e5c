// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Failures are never anonymous: a call that fails reports once, with an
// error status and a reason naming the rank, the call and what went wrong
// (Schedule::fail), readable while its done function runs. An operation
// budget overrun (a flow's max_ops() under-counting) fails the call with a
// message instead of overrunning memory.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cmocka_cxx.h"
#include "collectives.h"
#include "fake_transport.h"
#include "flow.h"
#include "schedule.h"
#include "test_support.h"

using namespace adapt2;
using namespace adapt2::test;

namespace {

// `done` that also keeps the reason the engine gives while it reports.
struct Report {
    int calls = 0;
    int status = 0;
    std::string why;
};
void on_report(void *ctx, int status) {
    auto *r = static_cast<Report *>(ctx);
    ++r->calls;
    r->status = status;
    r->why = mca_coll_adapt2_engine_call_failure();
}

bool contains(const std::string &s, const char *part) { return s.find(part) != std::string::npos; }

int failing_pack(void *, size_t offset, size_t, void *) { return offset >= 128 ? -7 : 0; }
int failing_unpack(void *, size_t, size_t, const void *) { return -9; }

adapt2_bcast_settings_t binomial_segments(size_t segment) {
    adapt2_bcast_settings_t s{};
    s.algorithm = ADAPT2_ALG_BINOMIAL;
    s.segment_size = segment;
    s.recv_window = 4;
    s.send_window = 2;
    return s;
}

// The root's second segment cannot be packed: the root's call fails once
// (when its first segment's send is over), saying which rank, which call and
// which bytes. (Its child takes only the first segment, so no call is left
// waiting: in MPI the job would be aborted.)
void test_pack_failure_names_rank_call_and_bytes(void **) {
    FakeNetwork net(2, {});
    Comm root(net.endpoint(0), 0, 2, 1 << 20), leaf(net.endpoint(1), 1, 2, 1 << 20);
    std::vector<char> mem(512, 1), out(128, 0);
    adapt2_buffer_t buf{nullptr, 256, mem.data(), failing_pack, strided_unpack, 0, 0};
    Report r, at_leaf;
    auto s = binomial_segments(128);
    s.send_window = 1;
    assert_int_equal(start_bcast(root, buf, 0, 1, s, on_report, &r), 0);
    assert_int_equal(start_bcast(leaf, contiguous_buffer(out.data(), 128), 0, 1, s, on_report, &at_leaf), 0);
    net.run();
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.status, -7);
    assert_true(contains(r.why, "rank 0 of 2"));
    assert_true(contains(r.why, "bcast #0 of 256 bytes (root 0)"));
    assert_true(contains(r.why, "packing into a staging buffer of packed bytes [128, 256)"));
    assert_string_equal(mca_coll_adapt2_engine_call_failure(), "");  // only while reporting
}

// A receiver that cannot unpack fails its own call and says so.
void test_unpack_failure_on_receiver(void **) {
    FakeNetwork net(2, {});
    Comm root(net.endpoint(0), 0, 2, 1 << 20), leaf(net.endpoint(1), 1, 2, 1 << 20);
    std::vector<char> src(64, 3), mem(128, 0);
    adapt2_buffer_t data = contiguous_buffer(src.data(), 64);
    adapt2_buffer_t staged{nullptr, 64, mem.data(), strided_pack, failing_unpack, 0, 0};
    Report at_root, at_leaf;
    auto s = binomial_segments(0);
    assert_int_equal(start_bcast(root, data, 0, 1, s, on_report, &at_root), 0);
    assert_int_equal(start_bcast(leaf, staged, 0, 1, s, on_report, &at_leaf), 0);
    net.run();
    assert_int_equal(at_root.status, 0);
    assert_int_equal(at_leaf.calls, 1);
    assert_int_equal(at_leaf.status, -9);
    assert_true(contains(at_leaf.why, "rank 1 of 2"));
    assert_true(contains(at_leaf.why, "unpacking from a staging buffer of packed bytes [0, 64)"));
}

// A transport that refuses a post, and one whose operation completes with an
// error: both named, with the peer and the size.
class RefusingTransport final : public Transport {
public:
    int send(const void *, size_t, int, int, Op *) override { return -12; }
    int recv(void *, size_t, int, int, Op *op) override {
        op->owner->complete(op, -15);
        return 0;
    }
};

void test_transport_errors_named(void **) {
    Comm root(std::make_unique<RefusingTransport>(), 0, 2, 1 << 20);
    std::vector<char> mem(100, 5);
    Report r;
    assert_int_equal(start_bcast(root, contiguous_buffer(mem.data(), 100), 0, 1, binomial_segments(0), on_report, &r),
                     0);
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.status, -12);
    assert_true(contains(r.why, "posting a send of 100 bytes (peer 1, segment 0) failed with error -12"));

    Comm leaf(std::make_unique<RefusingTransport>(), 1, 2, 1 << 20);
    Report l;
    assert_int_equal(start_bcast(leaf, contiguous_buffer(mem.data(), 100), 0, 1, binomial_segments(0), on_report, &l),
                     0);
    assert_int_equal(l.calls, 1);
    assert_int_equal(l.status, -15);
    assert_true(contains(l.why, "a receive of 100 bytes (peer 0, segment 0) completed with error -15"));
}

// A flow that reserves one operation and takes three: the call fails with
// the budget named, and nothing is posted past it.
class GreedyFlow final : public Flow {
public:
    GreedyFlow(Schedule &s, int id) : Flow(s, id) {}
    int max_ops() const override { return 1; }
    void start() override {
        for (int i = 0; i < 3; ++i) {
            int rc = schedule_.post_recv(buf_, 1, 7, schedule_.take_op(id_, Op::kRecv, i, 0, 1));
            if (rc == 0) ++posted_;
        }
    }
    void on_complete(Op &op) override { schedule_.return_op(&op); }
    bool has_pending_work() const override { return false; }
    static int posted_;

private:
    char buf_[1];
};
int GreedyFlow::posted_ = 0;

void test_operation_budget_overrun_fails_the_call(void **) {
    FakeNetwork net(2, {});
    Comm comm(net.endpoint(0), 0, 2, 1 << 20);
    Report r;
    Schedule *schedule = new_schedule(comm, on_report, &r).release();
    schedule->set_trace(TraceColl::reduce, 0, 5, 1, 0);
    schedule->add_flow<GreedyFlow>();
    schedule->start();
    assert_int_equal(GreedyFlow::posted_, 1);  // the second take found none and posted nothing
    // reported at once, though the posted receive is still in flight
    assert_int_equal(r.calls, 1);
    assert_int_equal(r.status, ADAPT2_STATUS_INTERNAL_ERROR);
    assert_true(contains(r.why, "reduce #5"));
    assert_true(contains(r.why, "more than the 1 operations it reserved (max_ops() under-counts)"));
    Comm peer(net.endpoint(1), 1, 2, 1 << 20);
    std::vector<char> one(1, 1);
    Report p;
    assert_int_equal(start_bcast(peer, contiguous_buffer(one.data(), 1), 1, 7, binomial_segments(0), on_report, &p), 0);
    net.run();
    assert_int_equal(r.calls, 1);  // not again when the receive completes
}

int failing_combine(void *, const void *, void *, size_t) { return -5; }

// A reduction operation that fails in Rabenseifner's allreduce: each rank's
// call fails once, at once, naming the rank, the call and the operation,
// though receives it posted ahead (the doubling's, from a peer that failed
// too) will never complete: it must not wait for them.
void test_combine_failure_in_rabenseifner(void **) {
    const int p = 4;
    const size_t bytes = 4096;
    FakeNetwork net(p, {});
    std::vector<std::unique_ptr<Comm>> comms;
    std::vector<std::vector<char>> in(p, std::vector<char>(bytes, 1)), out(p, std::vector<char>(bytes, 0));
    std::vector<Report> reports(p);
    adapt2_allreduce_settings_t s{};
    s.algorithm = ADAPT2_ALLREDUCE_RABENSEIFNER;
    const adapt2_reduction_t op{4, 1, nullptr, failing_combine, nullptr, 0, 0};
    for (int r = 0; r < p; ++r) {
        comms.push_back(std::make_unique<Comm>(net.endpoint(r), r, p, 1 << 20));
        assert_int_equal(
            start_allreduce(*comms[r], contiguous_buffer(in[r].data(), bytes), contiguous_buffer(out[r].data(), bytes),
                            false, op, 9, s, on_report, &reports[r]),
            0);
    }
    net.run();
    for (int r = 0; r < p; ++r) {
        const std::string rank = "rank " + std::to_string(r) + " of 4";
        assert_int_equal(reports[r].calls, 1);
        assert_int_equal(reports[r].status, -5);
        assert_true(contains(reports[r].why, rank.c_str()));
        assert_true(contains(reports[r].why, "allreduce #0 of 4096 bytes"));
        assert_true(contains(reports[r].why, "the reduction operation failed on 512 elements"));  // half of 1024
    }
    // The receives left end (as an abort would end them): each call then
    // finishes, without a second report, and gives its buffers back.
    assert_true(net.fail_unmatched_receives(-1) > 0);
    for (int r = 0; r < p; ++r) {
        assert_int_equal(reports[r].calls, 1);
        assert_int_equal(comms[r]->pool().bytes_lent(), 0);
    }
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pack_failure_names_rank_call_and_bytes),
        cmocka_unit_test(test_unpack_failure_on_receiver),
        cmocka_unit_test(test_transport_errors_named),
        cmocka_unit_test(test_operation_budget_overrun_fails_the_call),
        cmocka_unit_test(test_combine_failure_in_rabenseifner),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
