#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# Regenerate the autotools build system (configure, Makefile.in, libtool).
set -e
cd "$(dirname "$0")"
mkdir -p config/m4
autoreconf -fi
