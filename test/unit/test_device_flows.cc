// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// Broadcast, reduce and allreduce on GPU buffers, over the fake network and
// the mock device backend (host memory posing as device memory; copies run
// only when their events pass, so data read too early is stale): every rank's
// data checked, on all-device, mixed host/device and managed buffers, device
// operations completing at once, late or out of order, a pinned pool smaller
// than one slot per segment, and backend errors, which must complete the
// failing rank's call with an error, never hang it.
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cmocka_cxx.h"
#include "collectives.h"
#include "counters.h"
#include "device/device_registry.h"
#include "device/mock_backend.h"
#include "fake_transport.h"
#include "test_support.h"

using namespace adapt2;
using namespace adapt2::test;

namespace {

enum class Memory { device, host, managed };

// Which ranks hold which memory.
struct Layout {
    const char *name;
    Memory (*of)(int rank);
};
const Layout kLayouts[] = {
    {"all device", [](int) { return Memory::device; }},
    {"mixed", [](int r) { return r % 2 ? Memory::host : Memory::device; }},
    {"managed", [](int r) { return r % 3 == 1 ? Memory::device : Memory::managed; }},
};

MockBackend::Config mock_config(MockBackend::Policy policy, uint32_t seed) {
    MockBackend::Config c;
    c.policy = policy;
    c.seed = seed;
    c.late_polls = 2;
    return c;
}

// p ranks over one fake network and one mock device. Buffers are allocated
// from the mock (device or managed) or the host.
class World {
public:
    World(int p, const NetworkOptions &net, const MockBackend::Config &dev, size_t pinned_max = 1 << 20)
        : mock_(dev), net_(p, net) {
        set_device_backend(&mock_);
        DeviceLimits limits;
        limits.streams = 3;
        limits.pinned_max_bytes = pinned_max;
        set_device_limits(limits);
        for (int r = 0; r < p; ++r) comms_.push_back(std::make_unique<Comm>(net_.endpoint(r), r, p, 1 << 20));
    }
    ~World() {
        comms_.clear();  // device states first: they use the mock
        for (void *b : device_bufs_) mock_.free_device(b);
        set_device_backend(nullptr);
    }

    Comm &comm(int r) { return *comms_[r]; }
    MockBackend &backend() { return mock_; }

    // A buffer of `bytes` in memory `m`; *on_device says how to describe it.
    char *alloc(Memory m, size_t bytes, bool *on_device) {
        *on_device = m != Memory::host;
        if (m == Memory::host) {
            host_bufs_.emplace_back(bytes + 1, 0);
            return host_bufs_.back().data();
        }
        void *p = nullptr;
        int rc = m == Memory::device ? mock_.alloc_device(bytes + 1, &p) : mock_.alloc_managed(bytes + 1, &p);
        if (rc != 0) fail_msg("mock allocation failed");
        std::memset(p, 0, bytes + 1);
        device_bufs_.push_back(p);
        return static_cast<char *>(p);
    }

    // Network and device completions until both are quiet; false on a hang.
    bool run() {
        for (int round = 0; round < 100000; ++round) {
            long n = net_.run();
            int d = device_progress();
            if (n == 0 && d == 0 && devices_idle()) return true;
        }
        return false;
    }

private:
    bool devices_idle() {
        for (auto &c : comms_) {
            int error = 0;
            if (c->device(&error) && !c->device(&error)->queue().idle()) return false;
        }
        return true;
    }

    MockBackend mock_;
    FakeNetwork net_;
    std::vector<std::unique_ptr<Comm>> comms_;
    std::vector<std::vector<char>> host_bufs_;
    std::vector<void *> device_bufs_;
};

adapt2_bcast_settings_t tree_settings(int algorithm) {
    adapt2_bcast_settings_t s{};
    s.algorithm = algorithm;
    s.radix = 3, s.fanout = 2, s.chains = 2;
    s.segment_size = 96;  // several segments, and a short last one
    s.recv_window = 3, s.send_window = 2;
    s.detach_max_message = 1 << 20;  // device data must not detach, host data may
    return s;
}

char pattern(size_t i, int root) { return static_cast<char>(i * 7 + root * 13 + 1); }

struct Case {
    std::string name;
    int p;
    int root;
    size_t bytes;
    const Layout *layout;
    NetworkOptions net;
    MockBackend::Config dev;
};

void bcast_case(const Case &c, int algorithm) {
    World w(c.p, c.net, c.dev);
    std::vector<char *> buf(c.p);
    std::vector<Done> done(c.p);
    const auto s = tree_settings(algorithm);
    for (int r = 0; r < c.p; ++r) {
        bool dev = false;
        buf[r] = w.alloc(c.layout->of(r), c.bytes, &dev);
        for (size_t i = 0; r == c.root && i < c.bytes; ++i) buf[r][i] = pattern(i, c.root);
        adapt2_buffer_t b{buf[r], c.bytes, nullptr, nullptr, nullptr, dev ? 1 : 0, 0};
        if (start_bcast(w.comm(r), b, c.root, 50, s, on_done, &done[r]) != 0) fail_msg("%s: start", c.name.c_str());
    }
    if (!w.run()) fail_msg("%s: hang", c.name.c_str());
    for (int r = 0; r < c.p; ++r) {
        if (done[r].calls != 1 || done[r].status != 0)
            fail_msg("%s: rank %d done %d times, status %d", c.name.c_str(), r, done[r].calls, done[r].status);
        for (size_t i = 0; i < c.bytes; ++i)
            if (buf[r][i] != pattern(i, c.root)) fail_msg("%s: rank %d byte %zu wrong", c.name.c_str(), r, i);
        if (buf[r][c.bytes] != 0) fail_msg("%s: rank %d wrote past the end", c.name.c_str(), r);
    }
    if (w.backend().queued_ops() != 0) fail_msg("%s: device work left queued", c.name.c_str());
}

int32_t contribution(int r, size_t e) { return static_cast<int32_t>(r * 100 + e % 37 + 1); }

// The serial result x0 op (x1 op (... op x_{p-1})) of element e (an int32
// for sums; for maps, int32 2k and 2k+1 are map k's a and b).
int32_t serial_result(int p, size_t e, bool commutative) {
    if (commutative) {
        int32_t want = 0;
        for (int q = 0; q < p; ++q) want += contribution(q, e);
        return want;
    }
    const size_t map = e / 2;
    uint32_t a = 1, b = 0;  // identity; compose from the right
    for (int q = p - 1; q >= 0; --q) {
        const uint32_t qa = static_cast<uint32_t>(contribution(q, 2 * map)),
                       qb = static_cast<uint32_t>(contribution(q, 2 * map + 1));
        b = qa * b + qb;
        a = qa * a;
    }
    return static_cast<int32_t>(e % 2 ? b : a);
}

// gpu_kernel: the sum names its GPU kernel (int32 sum), so ranks with device
// data and children combine on the (mock) GPU unless the mock has no kernels.
void reduction_case(const Case &c, bool all, bool commutative, bool in_place, bool gpu_kernel = false) {
    World w(c.p, c.net, c.dev);
    const uint64_t gpu_combines_before = counter_value(Counter::device_combines);
    const size_t n = c.bytes / 8 * 2, bytes = n * 4;  // whole maps
    std::vector<int32_t *> own(c.p), res(c.p);
    std::vector<Done> done(c.p);
    adapt2_reduction_t op = commutative ? adapt2_reduction_t{4, 1, nullptr, sum_i32, nullptr, 0, 0}
                                        : adapt2_reduction_t{8, 0, nullptr, compose_affine, nullptr, 0, 0};
    if (gpu_kernel && commutative) op.device_op = ADAPT2_DEVICE_OP_SUM, op.device_type = ADAPT2_DEVICE_TYPE_INT32;
    for (int r = 0; r < c.p; ++r) {
        bool dev_own = false, dev_res = false;
        own[r] = reinterpret_cast<int32_t *>(w.alloc(c.layout->of(r), bytes, &dev_own));
        res[r] = reinterpret_cast<int32_t *>(w.alloc(c.layout->of(r), bytes, &dev_res));
        const bool here_in_place = in_place && (all || r == c.root);
        for (size_t e = 0; e < n; ++e) (here_in_place ? res[r] : own[r])[e] = contribution(r, e);
        adapt2_buffer_t in{reinterpret_cast<char *>(own[r]), bytes, nullptr, nullptr, nullptr, dev_own ? 1 : 0, 0};
        adapt2_buffer_t out{reinterpret_cast<char *>(res[r]), bytes, nullptr, nullptr, nullptr, dev_res ? 1 : 0, 0};
        int rc;
        if (all) {
            adapt2_allreduce_settings_t s{};
            s.tree = tree_settings(ADAPT2_ALG_BINOMIAL);
            s.algorithm = ADAPT2_ALLREDUCE_TREE;
            rc = start_allreduce(w.comm(r), here_in_place ? out : in, out, here_in_place, op, 80, s, on_done, &done[r]);
        } else {
            adapt2_reduce_settings_t s{tree_settings(ADAPT2_ALG_BINOMIAL), 0};
            rc = start_reduce(w.comm(r), here_in_place ? out : in, out, here_in_place, op, c.root, 80, s, on_done,
                              &done[r]);
        }
        if (rc != 0) fail_msg("%s: start", c.name.c_str());
    }
    if (!w.run()) fail_msg("%s: hang", c.name.c_str());
    for (int r = 0; r < c.p; ++r) {
        if (done[r].calls != 1 || done[r].status != 0)
            fail_msg("%s: rank %d done %d times, status %d", c.name.c_str(), r, done[r].calls, done[r].status);
        if (!all && r != c.root) continue;
        for (size_t e = 0; e < n; ++e) {
            const int32_t want = serial_result(c.p, e, commutative);
            if (res[r][e] != want)
                fail_msg("%s: rank %d element %zu is %d, expected %d", c.name.c_str(), r, e, res[r][e], want);
        }
    }
    if (w.backend().queued_ops() != 0) fail_msg("%s: device work left queued", c.name.c_str());
    // The GPU combines wherever a rank with device data has children.
    auto tree = w.comm(0).trees().get(TreeSpec{TreeShape::binomial, 0}, all ? 0 : c.root);
    bool device_parent = false;
    for (int r = 0; r < c.p; ++r) device_parent |= c.layout->of(r) != Memory::host && tree->children(r).size() > 0;
    const bool want_gpu = gpu_kernel && commutative && c.dev.kernels && device_parent;
    const bool got_gpu = counter_value(Counter::device_combines) > gpu_combines_before;
    if (want_gpu && !got_gpu) fail_msg("%s: nothing was combined on the GPU", c.name.c_str());
    if (!(gpu_kernel && commutative && c.dev.kernels) && got_gpu)
        fail_msg("%s: combined on the GPU without a kernel", c.name.c_str());
}

// Every layout x device policy x network order, a few sizes and roots.
void for_all_cases(const std::function<void(const Case &)> &run) {
    const MockBackend::Policy policies[] = {MockBackend::Policy::immediate, MockBackend::Policy::late,
                                            MockBackend::Policy::random};
    for (const Layout &layout : kLayouts) {
        for (auto policy : policies) {
            for (const NetworkOptions &net : completion_orders(2)) {
                for (int p : {2, 5}) {
                    for (size_t bytes : {size_t{8}, size_t{400}, size_t{1000}}) {
                        const int root = static_cast<int>(bytes % p);
                        Case c{std::string(layout.name) + " policy " + std::to_string(int(policy)) +
                                   " p=" + std::to_string(p) + " bytes=" + std::to_string(bytes),
                               p,
                               root,
                               bytes,
                               &layout,
                               net,
                               mock_config(policy, static_cast<uint32_t>(net.seed))};
                        run(c);
                    }
                }
            }
        }
    }
}

void test_bcast(void **) {
    long runs = 0;
    for_all_cases([&](const Case &c) {
        bcast_case(c, ADAPT2_ALG_BINOMIAL);
        bcast_case(c, ADAPT2_ALG_CHAIN);
        runs += 2;
    });
    std::printf("# %ld device broadcasts checked\n", runs);
}

void test_reduce_and_allreduce(void **) {
    long runs = 0;
    for_all_cases([&](const Case &c) {
        reduction_case(c, false, true, false);
        reduction_case(c, false, false, false);
        reduction_case(c, false, true, true);
        reduction_case(c, true, true, false);
        reduction_case(c, true, true, true);
        reduction_case(c, false, true, false, true);
        reduction_case(c, false, true, true, true);
        reduction_case(c, true, true, false, true);
        reduction_case(c, true, true, true, true);
        Case no_kernels = c;
        no_kernels.dev.kernels = false;
        reduction_case(no_kernels, true, true, false, true);
        runs += 10;
    });
    std::printf("# %ld device reductions checked\n", runs);
}

// A pinned pool smaller than one buffer per slot: flows get one buffer (the
// pool's overdraft) and still finish, with data intact.
void test_tiny_pinned_pool(void **) {
    for (int p : {3, 6}) {
        Case c{"tiny pool p=" + std::to_string(p),         p, 1, 2000, &kLayouts[0], completion_orders(1)[0],
               mock_config(MockBackend::Policy::random, 7)};
        World w(c.p, c.net, c.dev, 1);  // 1 byte: below any segment
        (void)w;
        bcast_case(c, ADAPT2_ALG_BINOMIAL);  // its own World, same limits
        reduction_case(c, false, true, false);
        reduction_case(c, true, true, false);
    }
}

// The k-th device post or query fails (odd k: reductions combine on the
// GPU, even k: on the host): that rank's call completes once with
// the device error, and no device work is left behind. (Its peers may then
// wait for messages it will not send, as with any failed MPI call.)
void test_backend_errors(void **) {
    long runs = 0;
    for (int which = 0; which < 2; ++which) {
        for (long k = 1; k <= 12; ++k) {
            for (bool reduce : {false, true}) {
                MockBackend::Config dev = mock_config(MockBackend::Policy::random, static_cast<uint32_t>(k));
                (which == 0 ? dev.fail_post : dev.fail_query) = k;
                const int p = 4;
                World w(p, completion_orders(1)[0], dev);
                std::vector<Done> done(p);
                std::vector<char *> buf(p), res(p);
                const size_t bytes = 960;
                const auto s = tree_settings(ADAPT2_ALG_BINOMIAL);
                adapt2_reduction_t op{4, 1, nullptr, sum_i32, nullptr, 0, 0};
                if (k % 2)
                    op.device_op = ADAPT2_DEVICE_OP_SUM, op.device_type = ADAPT2_DEVICE_TYPE_INT32;  // GPU combine
                for (int r = 0; r < p; ++r) {
                    bool dev_mem = false;
                    buf[r] = w.alloc(Memory::device, bytes, &dev_mem);
                    res[r] = w.alloc(Memory::device, bytes, &dev_mem);
                    adapt2_buffer_t b{buf[r], bytes, nullptr, nullptr, nullptr, 1, 0};
                    adapt2_buffer_t o{res[r], bytes, nullptr, nullptr, nullptr, 1, 0};
                    adapt2_reduce_settings_t rs{s, 0};
                    int rc = reduce ? start_reduce(w.comm(r), b, o, false, op, 0, 80, rs, on_done, &done[r])
                                    : start_bcast(w.comm(r), b, 0, 50, s, on_done, &done[r]);
                    if (rc != 0) fail_msg("start");
                }
                w.run();  // peers of the failing rank may be left waiting: no hang check
                int errors = 0;
                for (int r = 0; r < p; ++r) {
                    if (done[r].calls > 1) fail_msg("rank %d done twice", r);
                    if (done[r].calls == 1 && done[r].status != 0) {
                        if (done[r].status != ADAPT2_STATUS_DEVICE_ERROR) fail_msg("status %d", done[r].status);
                        ++errors;
                    }
                }
                if (errors != 1)
                    fail_msg("%s k=%ld %s: %d ranks failed, expected exactly 1", which ? "query" : "post", k,
                             reduce ? "reduce" : "bcast", errors);
                if (last_device_error() != MockBackend::kInjectedError) fail_msg("error code not kept");
                ++runs;
            }
        }
    }
    std::printf("# %ld injected device errors completed with an error\n", runs);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bcast),
        cmocka_unit_test(test_reduce_and_allreduce),
        cmocka_unit_test(test_tiny_pinned_pool),
        cmocka_unit_test(test_backend_errors),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
