// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// The decision table a user gives in a file (coll_adapt2_rules; the format
// in docs/rules.md): lines that map a collective, communicator size, node
// count and message size to an algorithm and its settings, or to
// `previous` (the component adapt2 was installed over). The first line that
// matches a call decides; a call no line matches is planned by the built-in
// rules (decision.cc). A collective whose algorithm parameter is not `auto`
// keeps it: a parameter the user set wins over the table.
//
//   adapt2-rules 1
//   # collective  ranks  nodes  bytes     settings
//   allreduce     2-8    1      0-4K      algorithm=recursive_doubling
//   bcast         *      *      64K-      algorithm=chain chains=2 segment_size=65536
//   reduce        *      2-     0-1K      previous
#ifndef ADAPT2_ENGINE_RULES_H
#define ADAPT2_ENGINE_RULES_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../adapt2_bridge.h"

namespace adapt2 {

struct CallShape;

// A closed range of a call's facts; `*` in the file is everything.
struct Range {
    uint64_t lo = 0;
    uint64_t hi = UINT64_MAX;
    bool contains(uint64_t v) const { return lo <= v && v <= hi; }
};

struct Rule {
    int collective = -1;  // ADAPT2_COLL_*, -1: every collective
    Range ranks, nodes, bytes;
    bool previous = false;
    // What the line sets; -1: as the parameters say.
    int algorithm = -1;  // the position of its name in the collective's enum (params.def)
    long segment_size = -1, recv_window = -1, send_window = -1, fanout = -1, radix = -1, chains = -1;
    long detach_max_message = -1;  // bcast and reduce: the latency or the absorption (0: never detach)
    std::string where;             // "FILE:LINE: the line", for coll_adapt2_verbose 20
};

class RuleTable {
public:
    // The table in `text` (from `origin`, a file name, for messages), or
    // false with `error` saying which line and why.
    static bool parse(const std::string &text, const std::string &origin, RuleTable *out, std::string *error);

    // The first rule for this call, or nullptr. `bytes`: message_bytes(call).
    const Rule *match(int collective, const CallShape &shape, uint64_t bytes) const;
    size_t size() const { return rules_.size(); }
    const Rule &operator[](size_t i) const { return rules_[i]; }
    // Of the rules' words (not of comments, spacing or the file's name):
    // equal on two ranks iff their tables decide alike. Never 0 (0: no table).
    uint64_t fingerprint() const { return fingerprint_; }
    const std::string &origin() const { return origin_; }

private:
    std::vector<Rule> rules_;
    uint64_t fingerprint_ = 0;
    std::string origin_;
};

// The size a rule's `bytes` range is about: the whole message (allgather and
// reduce_scatter_block: all p blocks).
uint64_t message_bytes(const adapt2_call_t &call);

// The process's table (set once at start-up, before any communicator; the
// unit tests set and clear it). Empty by default.
void set_rule_table(std::shared_ptr<const RuleTable> table);
const RuleTable *rule_table();

// Whether the table may decide a call: its collective's algorithm
// parameter is `auto` (a parameter the user set wins).
bool table_decides(int collective, const adapt2_call_settings_t &settings);
// What a matched rule (not `previous`) sets, into a call's settings.
void apply_rule(const Rule &rule, int collective, adapt2_call_settings_t *settings);

}  // namespace adapt2

#endif
