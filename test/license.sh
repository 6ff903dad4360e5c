#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# Every source file carries the license header (contrib/license-headers).
src="${ADAPT2_SRCDIR:-$(dirname "$0")/..}"
git -C "$src" rev-parse --git-dir >/dev/null 2>&1 || { echo "not a git checkout: skipped"; exit 77; }
exec python3 "$src/contrib/license-headers" --check
