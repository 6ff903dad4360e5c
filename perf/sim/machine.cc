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
    return nullptr;
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
        double *field = nullptr;
        if (key.rfind("intra.", 0) == 0) field = link_field(m.intra, key.substr(6));
        if (key.rfind("inter.", 0) == 0) field = link_field(m.inter, key.substr(6));
        if (field) {
            *field = v;
        } else if (key == "k") {
            m.ranks_per_node = static_cast<int>(v);
        } else if (key == "cores") {
            m.cores_per_node = static_cast<int>(v);
        } else if (key == "eager") {
            m.eager_limit = static_cast<size_t>(v);
        } else if (key == "gamma") {
            m.combine_us_per_byte = v;
        } else {
            return "unknown machine key '" + key + "'";
        }
        if (v < 0) return "negative value in '" + item + "'";
    }
    if (m.ranks_per_node < 1 || m.cores_per_node < 1) return "k and cores must be at least 1";
    return "";
}

std::string Machine::describe() const {
    char b[400];
    std::snprintf(b, sizeof b,
                  "intra.L=%g,intra.o=%g,intra.g=%g,intra.G=%g,inter.L=%g,inter.o=%g,inter.g=%g,inter.G=%g,"
                  "k=%d,cores=%d,eager=%zu,gamma=%g",
                  intra.L, intra.o, intra.g, intra.G, inter.L, inter.o, inter.g, inter.G, ranks_per_node,
                  cores_per_node, eager_limit, combine_us_per_byte);
    return b;
}

}  // namespace adapt2::sim
