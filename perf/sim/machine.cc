// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
#include "machine.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace adapt2::sim {

namespace {

bool number(const std::string &text, double &out) {
    char *end = nullptr;
    out = std::strtod(text.c_str(), &end);
    return !text.empty() && end && *end == '\0';
}

double *link_field(LinkParams &l, const std::string &name) {
    if (name == "L") return &l.L;
    if (name == "o") return &l.o;
    if (name == "g") return &l.g;
    if (name == "G") return &l.G;
    if (name == "burst") return &l.burst;
    if (name == "G0") return &l.G0;
    return nullptr;
}

// Link fields that are not doubles: eager (bytes), get (0/1).
bool link_option(LinkParams &l, const std::string &name, double v) {
    if (name == "eager") return l.eager = long(v), true;
    if (name == "get") return l.get = v != 0, true;
    return false;
}

}  // namespace

std::string parse_machine(const std::string &spec, Machine &m) {
    std::stringstream items(spec);
    std::string item;
    while (std::getline(items, item, ',')) {
        if (item.empty()) continue;
        size_t eq = item.find('=');
        double v;
        if (eq == std::string::npos || !number(item.substr(eq + 1), v)) return "bad machine item '" + item + "'";
        std::string key = item.substr(0, eq);
        if (v < 0) return "negative value in '" + item + "'";
        double *field = nullptr;
        LinkParams *link = key.rfind("intra.", 0) == 0 ? &m.intra : key.rfind("inter.", 0) == 0 ? &m.inter : nullptr;
        if (link) field = link_field(*link, key.substr(6));
        if (field) {
            *field = v;
        } else if (link && link_option(*link, key.substr(6), v)) {
        } else if (key == "k") {
            m.ranks_per_node = static_cast<int>(v);
        } else if (key == "cores") {
            m.cores_per_node = static_cast<int>(v);
        } else if (key == "host_cores") {
            m.host_cores = static_cast<int>(v);
        } else if (key == "share") {
            m.share_busy = v != 0;
        } else if (key == "mem") {
            m.mem_G = v;
        } else if (key == "wake") {
            m.wake_us = v;
        } else if (key == "eager") {  // both link classes
            m.eager_limit = static_cast<size_t>(v);
            m.intra.eager = m.inter.eager = -1;
        } else if (key == "gamma") {
            m.combine_us_per_byte = v;
        } else if (key == "copy") {
            m.copy_us_per_byte = v;
        } else {
            return "unknown machine key '" + key + "'";
        }
    }
    if (m.ranks_per_node < 1 || m.cores_per_node < 1) return "k and cores must be at least 1";
    return "";
}

std::string Machine::describe() const {
    char b[800];
    std::snprintf(b, sizeof b,
                  "intra.L=%g,intra.o=%g,intra.g=%g,intra.G=%g,intra.eager=%zu,intra.get=%d,intra.burst=%g,intra.G0=%g,"
                  "inter.L=%g,inter.o=%g,inter.g=%g,inter.G=%g,inter.eager=%zu,inter.get=%d,inter.burst=%g,inter.G0=%g,"
                  "k=%d,cores=%d,host_cores=%d,share=%d,mem=%g,wake=%g,gamma=%g,copy=%g",
                  intra.L, intra.o, intra.g, intra.G, eager(intra), int(intra.get), intra.burst, intra.G0, inter.L,
                  inter.o, inter.g, inter.G, eager(inter), int(inter.get), inter.burst, inter.G0, ranks_per_node,
                  cores_per_node, host_cores, int(share_busy), mem_G, wake_us, combine_us_per_byte, copy_us_per_byte);
    return b;
}

}  // namespace adapt2::sim
