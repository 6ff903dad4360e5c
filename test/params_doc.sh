#!/bin/bash
# The README's parameter table is the one params.def generates (names,
# defaults and help live in params.def only).
exec python3 "${ADAPT2_SRCDIR:-$(dirname "$0")/..}/contrib/adapt2-params" --check \
    "${ADAPT2_SRCDIR:-$(dirname "$0")/..}/README.md"
