// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// The tracer: events are kept up to the cap (the rest counted as dropped),
// written as CSV with one header, and concurrent recording loses nothing.
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cmocka_cxx.h"
#include "trace.h"

using namespace adapt2;

namespace {

std::vector<std::string> lines_of(const std::string &path) {
    std::ifstream f(path);
    std::vector<std::string> out;
    for (std::string l; std::getline(f, l);) out.push_back(l);
    return out;
}

void test_record_cap_and_file(void **) {
    assert_null(Tracer::get());  // off until enabled
    Tracer::enable(1000, 3);
    Tracer *t = Tracer::get();
    assert_non_null(t);
    Tracer::enable(5, 9);  // the first enable wins
    assert_ptr_equal(Tracer::get(), t);

    // 4 threads x 300 events: 1000 kept, 200 dropped, none lost or torn.
    std::vector<std::thread> threads;
    for (int k = 0; k < 4; ++k) {
        threads.emplace_back([t, k] {
            for (int i = 0; i < 300; ++i) {
                TraceEvent e{};
                e.t_ns = Tracer::now_ns();
                e.call = static_cast<uint32_t>(k);
                e.segment = i;
                e.peer = k;
                e.kind = TraceKind::arrived;
                t->record(e);
            }
        });
    }
    for (auto &th : threads) th.join();
    assert_int_equal(t->recorded(), 1000);
    assert_int_equal(t->dropped(), 200);

    char dir[] = "/tmp/adapt2-trace-test-XXXXXX";
    assert_non_null(mkdtemp(dir));
    std::string prefix = std::string(dir) + "/t";
    assert_int_equal(t->write(prefix), 0);
    auto lines = lines_of(prefix + ".3.csv");
    assert_int_equal(lines.size(), 2 + 1000);
    assert_true(lines[0].find("world rank 3, 1000 events, 200 dropped") != std::string::npos);
    assert_string_equal(lines[1].c_str(), "t_ns,rank,call,coll,comm,event,flow,segment,peer,bytes");
    for (size_t i = 2; i < lines.size(); ++i) {
        if (lines[i].find(",3,") == std::string::npos || lines[i].find(",arrived,") == std::string::npos)
            fail_msg("bad line %zu: %s", i, lines[i].c_str());
    }
    std::remove((prefix + ".3.csv").c_str());
    std::remove(dir);
    assert_int_not_equal(t->write("/nonexistent-dir/x"), 0);  // errors are reported
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_record_cap_and_file)};
    return cmocka_run_group_tests_name("trace", tests, nullptr, nullptr);
}
