#!/bin/sh
# Regenerate the autotools build system (configure, Makefile.in, libtool).
set -e
cd "$(dirname "$0")"
mkdir -p config/m4
autoreconf -fi
