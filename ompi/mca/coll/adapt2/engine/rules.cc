// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
#include "rules.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <sstream>

#include "param_defaults.h"
#include "plan_call.h"

namespace adapt2 {
namespace {

std::shared_ptr<const RuleTable> g_rules;

constexpr const char *kHeader = "adapt2-rules";
constexpr int kVersion = 1;

struct CollectiveNames {
    const char *name;
    int id;
    const char *algorithms;  // the names of its algorithm parameter's values (params.def)
};
const CollectiveNames kCollectives[] = {
#define ADAPT2_COLLECTIVE(name, NAME) {#name, ADAPT2_COLL_##NAME, defaults::name##_algorithm_names},
#include "../collectives.def"
#undef ADAPT2_COLLECTIVE
};

bool tree_collective(int c) { return c == ADAPT2_COLL_BCAST || c == ADAPT2_COLL_REDUCE; }

// The position of `name` in a comma list, or -1.
int position_in(const char *list, const std::string &name) {
    std::stringstream all(list);
    std::string item;
    for (int i = 0; std::getline(all, item, ','); ++i) {
        if (item == name) return i;
    }
    return -1;
}

// A byte or count with an optional binary K, M or G suffix.
bool parse_number(const std::string &s, uint64_t *out) {
    if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0]))) return false;
    char *end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(s.c_str(), &end, 10);
    if (errno != 0) return false;
    const std::string unit(end);
    int shift = unit.empty() ? 0 : unit == "K" ? 10 : unit == "M" ? 20 : unit == "G" ? 30 : -1;
    if (shift < 0 || (shift > 0 && v > (UINT64_MAX >> shift))) return false;
    *out = static_cast<uint64_t>(v) << shift;
    return true;
}

// `*`, `N`, `A-B` (both included) or `A-` (A and up).
bool parse_range(const std::string &s, Range *r) {
    if (s == "*") return true;
    const size_t dash = s.find('-');
    if (dash == std::string::npos) {
        if (!parse_number(s, &r->lo)) return false;
        r->hi = r->lo;
        return true;
    }
    if (!parse_number(s.substr(0, dash), &r->lo)) return false;
    const std::string hi = s.substr(dash + 1);
    if (!hi.empty() && !parse_number(hi, &r->hi)) return false;
    return r->lo <= r->hi;
}

struct LineParser {
    std::vector<std::string> words;
    Rule rule;
    std::string error;

    bool fail(const std::string &why) {
        error = why;
        return false;
    }
    bool collective();
    bool ranges();
    bool setting(const std::string &word);
    bool number_setting(const std::string &key, const std::string &value);
    bool run();
};

bool LineParser::collective() {
    if (words[0] == "*") return true;
    for (const CollectiveNames &c : kCollectives) {
        if (words[0] == c.name) {
            rule.collective = c.id;
            return true;
        }
    }
    return fail("unknown collective '" + words[0] + "' (known: the names in collectives.def, or *)");
}

bool LineParser::ranges() {
    const char *what[] = {"ranks", "nodes", "bytes"};
    Range *into[] = {&rule.ranks, &rule.nodes, &rule.bytes};
    for (int i = 0; i < 3; ++i) {
        if (!parse_range(words[1 + i], into[i]))
            return fail(std::string("bad ") + what[i] + " range '" + words[1 + i] +
                        "' (*, N, A-B or A-; K, M, G suffixes)");
    }
    return true;
}

bool LineParser::number_setting(const std::string &key, const std::string &value) {
    struct Key {
        const char *name;
        long Rule::*field;
        uint64_t min, max;
    };
    static const Key keys[] = {
        {"segment_size", &Rule::segment_size, 0, 1u << 30},
        {"recv_window", &Rule::recv_window, 1, 64},
        {"send_window", &Rule::send_window, 1, 64},
        {"fanout", &Rule::fanout, 1, 1u << 20},
        {"radix", &Rule::radix, 2, 1u << 20},
        {"chains", &Rule::chains, 1, 1u << 20},
        {"detach_max_message", &Rule::detach_max_message, 0, uint64_t{1} << 40},
    };
    for (const Key &k : keys) {
        if (key != k.name) continue;
        uint64_t v;
        if (!parse_number(value, &v) || v < k.min || v > k.max)
            return fail(key + "=" + value + ": not a number in [" + std::to_string(k.min) + ", " +
                        std::to_string(k.max) + "]");
        rule.*k.field = static_cast<long>(v);
        return true;
    }
    return fail("unknown setting '" + key +
                "' (known: algorithm, segment_size, recv_window, send_window, "
                "fanout, radix, chains, detach_max_message, or previous alone)");
}

bool LineParser::setting(const std::string &word) {
    const size_t eq = word.find('=');
    if (eq == std::string::npos) return fail("'" + word + "' is not KEY=VALUE (or previous, alone)");
    const std::string key = word.substr(0, eq), value = word.substr(eq + 1);
    if (key != "algorithm") return number_setting(key, value);
    if (rule.collective < 0) return fail("algorithm= needs one collective (algorithm names differ)");
    const char *names = nullptr;
    for (const CollectiveNames &c : kCollectives) {
        if (c.id == rule.collective) names = c.algorithms;
    }
    const int at = position_in(names, value);
    if (at < 0) return fail("unknown algorithm '" + value + "' (known: " + names + ")");
    if (value == "previous") rule.previous = true;
    rule.algorithm = value == "previous" || value == "auto" ? -1 : at;
    return true;
}

bool LineParser::run() {
    if (words.size() < 5) return fail("expected: collective ranks nodes bytes settings...");
    if (!collective() || !ranges()) return false;
    if (words[4] == "previous") {
        if (words.size() > 5) return fail("previous takes no other setting");
        rule.previous = true;
        return true;
    }
    for (size_t i = 4; i < words.size(); ++i) {
        if (!setting(words[i])) return false;
    }
    return true;
}

// FNV-1a, 64 bits.
uint64_t hash_into(uint64_t h, const std::string &s) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    return h;
}

std::vector<std::string> words_of(const std::string &line) {
    std::vector<std::string> words;
    std::stringstream in(line.substr(0, line.find('#')));
    for (std::string w; in >> w;) words.push_back(w);
    return words;
}

}  // namespace

bool RuleTable::parse(const std::string &text, const std::string &origin, RuleTable *out, std::string *error) {
    std::stringstream in(text);
    std::string line;
    bool header = false;
    RuleTable table;
    uint64_t h = 14695981039346656037ull;
    for (int number = 1; std::getline(in, line); ++number) {
        const std::vector<std::string> words = words_of(line);
        if (words.empty()) continue;
        const std::string at = origin + ":" + std::to_string(number) + ": ";
        if (!header) {
            if (words.size() != 2 || words[0] != kHeader || words[1] != std::to_string(kVersion)) {
                *error = at + "the first line must be '" + kHeader + " " + std::to_string(kVersion) +
                         "' (the format and its version)";
                return false;
            }
            header = true;
            continue;
        }
        LineParser p{words, {}, {}};
        if (!p.run()) {
            *error = at + p.error;
            return false;
        }
        std::string canonical;
        for (size_t i = 0; i < words.size(); ++i) canonical += (i ? " " : "") + words[i];
        h = hash_into(h, canonical + "\n");
        p.rule.where = at + canonical;
        table.rules_.push_back(std::move(p.rule));
    }
    if (!header) {
        *error = origin + ": empty (the first line must be '" + kHeader + " " + std::to_string(kVersion) + "')";
        return false;
    }
    table.fingerprint_ = h ? h : 1;
    table.origin_ = origin;
    *out = std::move(table);
    return true;
}

const Rule *RuleTable::match(int collective, const CallShape &shape, uint64_t bytes) const {
    for (const Rule &r : rules_) {
        if ((r.collective < 0 || r.collective == collective) && r.ranks.contains(static_cast<uint64_t>(shape.size)) &&
            r.nodes.contains(static_cast<uint64_t>(shape.nodes)) && r.bytes.contains(bytes)) {
            return &r;
        }
    }
    return nullptr;
}

uint64_t message_bytes(const adapt2_call_t &call) {
    if (call.collective == ADAPT2_COLL_REDUCE || call.collective == ADAPT2_COLL_REDUCE_SCATTER_BLOCK) {
        return own_data(call).bytes;
    }
    return call.recv.bytes;
}

void set_rule_table(std::shared_ptr<const RuleTable> table) { g_rules = std::move(table); }
const RuleTable *rule_table() { return g_rules.get(); }

bool table_decides(int collective, const adapt2_call_settings_t &s) {
    return (tree_collective(collective) ? s.tree.algorithm : s.algorithm) == 0;  // auto, in every enum
}

void apply_rule(const Rule &r, int collective, adapt2_call_settings_t *s) {
    adapt2_tree_settings_t &t = s->tree;
    if (r.algorithm >= 0) (tree_collective(collective) ? t.algorithm : s->algorithm) = r.algorithm;
    if (r.segment_size >= 0) t.segment_size = static_cast<size_t>(r.segment_size);
    if (r.recv_window > 0) t.recv_window = static_cast<int>(r.recv_window);
    if (r.send_window > 0) t.send_window = static_cast<int>(r.send_window);
    if (r.fanout > 0) t.fanout = static_cast<int>(r.fanout);
    if (r.radix > 0) t.radix = static_cast<int>(r.radix);
    if (r.chains > 0) t.chains = static_cast<int>(r.chains);
    if (r.detach_max_message >= 0) t.detach_max_message = static_cast<size_t>(r.detach_max_message);
}

}  // namespace adapt2
