#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# The README's parameter table is the one params.def generates (names,
# defaults and help live in params.def only).
exec python3 "${ADAPT2_SRCDIR:-$(dirname "$0")/..}/contrib/adapt2-params" --check \
    "${ADAPT2_SRCDIR:-$(dirname "$0")/..}/README.md"
