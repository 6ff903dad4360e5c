// SPDX-License-Identifier: BSD-3-Clause
// Copyright (c) 2026, the adapt2 authors. See LICENSE.
// The MCA parameters' defaults (params.def) for code that runs the engine
// without Open MPI: the simulator and the unit tests. defaults::name is the
// default of coll_adapt2_<name>.
#ifndef ADAPT2_ENGINE_PARAM_DEFAULTS_H
#define ADAPT2_ENGINE_PARAM_DEFAULTS_H

#include <climits>
#include <cstddef>

#include "../adapt2_bridge.h"

namespace adapt2::defaults {

// An ENUM's valid names come too, as defaults::<name>_names.
#define ADAPT2_DEFAULT_INT(name, value, min) constexpr long name = value;
#define ADAPT2_DEFAULT_LONG(name, value, min) constexpr long name = value;
#define ADAPT2_DEFAULT_STRING(name, value, min) constexpr const char *name = value;
#define ADAPT2_DEFAULT_ENUM(name, value, names) \
    constexpr const char *name = value;         \
    constexpr const char *name##_names = names;
#define ADAPT2_PARAM(TYPE, name, deflt, min, max, help) ADAPT2_DEFAULT_##TYPE(name, deflt, min)
#include "../params.def"
#undef ADAPT2_PARAM
#undef ADAPT2_DEFAULT_INT
#undef ADAPT2_DEFAULT_LONG
#undef ADAPT2_DEFAULT_STRING
#undef ADAPT2_DEFAULT_ENUM

// A tree's settings as a user gets them by default (mca_coll_adapt2_tree_settings
// with no MCA variable set), with the collective's `segment_size`: a
// non-blocking call (plan_call sets blocking), one level (the caller sets
// topology), awaiting off (the component's auto turns it on only when
// oversubscribed).
inline adapt2_tree_settings_t tree_settings(size_t segment_size) {
    adapt2_tree_settings_t t{};
    t.algorithm = ADAPT2_ALG_AUTO;
    t.fanout = bcast_fanout;
    t.radix = bcast_radix;
    t.chains = bcast_chains;
    t.segment_size = segment_size;
    t.recv_window = recv_window;
    t.send_window = send_window;
    t.detach_min_message = detach_min_message;
    t.detach_max_message = detach_max_message;
    t.direct_detach_max = direct_detach_max;
    t.direct_watch_max = direct_watch_max;
    t.await_min_bytes = 0;
    t.watch_min_bytes = detach_watch_min_bytes;
    t.node_algorithm = t.numa_algorithm = ADAPT2_ALG_AUTO;
    t.topology_segment_size = topology_segment_size;
    t.node_segment_size = node_segment_size;
    t.numa_segment_size = numa_segment_size;
    t.node_message_cost = node_message_cost;
    t.single_copy = 1;  // coll_adapt2_single_copy auto: yes
    t.core_message_cost = core_message_cost;
    return t;
}

}  // namespace adapt2::defaults

#endif
