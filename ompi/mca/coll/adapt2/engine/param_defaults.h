// The MCA parameters' defaults (params.def) for code that runs the engine
// without Open MPI: the simulator and the unit tests. defaults::name is the
// default of coll_adapt2_<name>.
#ifndef ADAPT2_ENGINE_PARAM_DEFAULTS_H
#define ADAPT2_ENGINE_PARAM_DEFAULTS_H

#include <climits>

namespace adapt2::defaults {

#define ADAPT2_DEFAULT_INT(name, value) constexpr long name = value;
#define ADAPT2_DEFAULT_LONG(name, value) constexpr long name = value;
#define ADAPT2_DEFAULT_STRING(name, value) constexpr const char *name = value;
#define ADAPT2_PARAM(TYPE, name, deflt, min, max, help) ADAPT2_DEFAULT_##TYPE(name, deflt)
#include "../params.def"
#undef ADAPT2_PARAM
#undef ADAPT2_DEFAULT_INT
#undef ADAPT2_DEFAULT_LONG
#undef ADAPT2_DEFAULT_STRING

}  // namespace adapt2::defaults

#endif
