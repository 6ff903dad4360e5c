#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# The sources follow .clang-format (contrib/format --check). Another major
# version of clang-format than Debian 12's 14 formats some lines differently:
# skipped there, as outside a git checkout.
src="${ADAPT2_SRCDIR:-$(dirname "$0")/..}"
git -C "$src" rev-parse --git-dir >/dev/null 2>&1 || { echo "not a git checkout: skipped"; exit 77; }
version=$(clang-format --version 2>/dev/null | sed -nE 's/.*version ([0-9]+)\..*/\1/p')
[ "$version" = 14 ] || { echo "clang-format 14 not found (${version:-none}): skipped"; exit 77; }
exec "$src/contrib/format" --check
