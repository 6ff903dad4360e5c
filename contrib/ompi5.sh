#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# Builds Open MPI 5 (the openmpi source package of Debian 13 "trixie", 5.0.7)
# on a Debian 12 machine (run as root, or with sudo available), to build and
# test adapt2 against it next to the system's Open MPI 4.1.4:
#   contrib/ompi5.sh        fetch, configure, build and install; prints the
#                           prefix as its last line
# The source is fetched with a private apt configuration (its own sources
# list, lists, cache and state under the work directory); /etc/apt and the
# system's apt state are left alone. Only the build dependencies below are
# installed with the system's apt. Cached: when $PREFIX already holds this
# version (stamp file $PREFIX/.adapt2-ompi5-$VERSION), it exits at once.
# The upstream tree (Debian's .orig tarball) is built as is, without Debian's
# patches, with its bundled PMIx, PRRTE, hwloc and libevent, with the devel
# headers (--with-devel-headers: a coll component needs them) and every
# component as a DSO (--enable-mca-dso), without Fortran.
# Environment: OMPI5_PREFIX (default /opt/ompi5), OMPI5_WORK (work directory,
# default /var/tmp/adapt2-ompi5), JOBS (default 2; make runs under nice -n 19),
# OMPI5_CONFIGURE_FLAGS (extra flags for configure).
set -euo pipefail
. "$(dirname "$0")/packages.sh"

VERSION=5.0.7
PREFIX=${OMPI5_PREFIX:-/opt/ompi5}
WORK=${OMPI5_WORK:-/var/tmp/adapt2-ompi5}
JOBS=${JOBS:-2}
STAMP=$PREFIX/.adapt2-ompi5-$VERSION
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

# build dependencies (Debian 12): compilers, the autotools the tarball's
# Makefiles may rerun, flex (the bundled PRRTE's and Open MPI's lexers),
# dpkg-dev (dpkg-source, for apt-get source), the archive keyring (trixie keys)
PACKAGES="build-essential autoconf automake libtool flex perl python3 pkg-config
zlib1g-dev dpkg-dev xz-utils bzip2 debian-archive-keyring"

installed_version() {
    [ -x "$PREFIX/bin/ompi_info" ] || return 0
    "$PREFIX/bin/ompi_info" --version 2>/dev/null | sed -n 's/^Open MPI v\([0-9.]*\).*/\1/p' | head -1
}

if [ -f "$STAMP" ] && [ "$(installed_version)" = "$VERSION" ]; then
    echo "$PREFIX"
    exit 0
fi


# the private apt configuration: trixie's deb-src only, its own lists, cache
# and state; the trixie keys of debian-archive-keyring sign its Release file
APT_DIR=$WORK/apt
# apt_private apt-get|apt-cache ARGS...
apt_private() {
    local tool=$1
    shift
    "$tool" \
        -o Dir::Etc::SourceList="$APT_DIR/sources.list" \
        -o Dir::Etc::SourceParts="$APT_DIR/sources.list.d" \
        -o Dir::Etc::Preferences="$APT_DIR/preferences" \
        -o Dir::Etc::PreferencesParts="$APT_DIR/preferences.d" \
        -o Dir::State="$APT_DIR/state" \
        -o Dir::State::Lists="$APT_DIR/lists" \
        -o Dir::State::status="$APT_DIR/state/status" \
        -o Dir::Cache="$APT_DIR/cache" \
        -o APT::Sandbox::User=root \
        "$@"
}

fetch_source() {
    mkdir -p "$APT_DIR"/{sources.list.d,preferences.d,state,lists/partial,cache/archives/partial} "$WORK/src"
    : >"$APT_DIR/state/status"
    : >"$APT_DIR/preferences"
    echo "deb-src [signed-by=$KEYRING] http://deb.debian.org/debian trixie main" >"$APT_DIR/sources.list"
    echo "== fetching the openmpi source package of Debian 13 (trixie)"
    apt_private apt-get -qq update
    local debver
    debver=$(apt_private apt-cache showsrc openmpi | sed -n "s/^Version: \($VERSION-.*\)/\1/p" | head -1)
    [ -n "$debver" ] || { echo "ompi5: trixie has no openmpi $VERSION source package" >&2; exit 1; }
    # only download (checksums verified against the signed Sources index):
    # the upstream tarball is built without Debian's patches
    (cd "$WORK/src" && apt_private apt-get -q source --download-only "openmpi=$debver" >/dev/null)
}

unpack_source() {
    local tarballs=("$WORK"/src/openmpi_"$VERSION".orig.tar.*)
    local tarball=${tarballs[0]}
    [ -f "$tarball" ] || { echo "ompi5: no openmpi_$VERSION.orig.tar.* in $WORK/src" >&2; exit 1; }
    rm -rf "$WORK/openmpi-$VERSION"
    mkdir -p "$WORK/openmpi-$VERSION"
    echo "== unpacking $(basename "$tarball")"
    tar -xf "$tarball" -C "$WORK/openmpi-$VERSION" --strip-components=1
}

build_install() {
    local extra flags
    read -ra extra <<<"${OMPI5_CONFIGURE_FLAGS:-}"
    flags=(--prefix="$PREFIX" --enable-mca-dso --with-devel-headers
           --with-pmix=internal --with-prrte=internal
           --with-hwloc=internal --with-libevent=internal
           --disable-mpi-fortran --disable-oshmem --disable-sphinx
           ${extra[@]+"${extra[@]}"})
    mkdir -p "$WORK/build"
    cd "$WORK/build"
    echo "== configure ${flags[*]}"
    nice -n 19 "$WORK/openmpi-$VERSION/configure" "${flags[@]}" >configure.out 2>&1 \
        || { tail -40 configure.out; exit 1; }
    echo "== make -j$JOBS"
    nice -n 19 make -j"$JOBS" >make.out 2>&1 || { tail -40 make.out; exit 1; }
    echo "== make install"
    # an earlier install of ours (any version) is replaced; anything else in
    # $PREFIX is left alone and installed over
    if compgen -G "$PREFIX/.adapt2-ompi5-*" >/dev/null; then
        as_root rm -rf "$PREFIX"
    fi
    as_root nice -n 19 make install >install.out 2>&1 || { tail -40 install.out; exit 1; }
}

# --with-devel-headers of 5.0.x installs no header of a noinst component, yet
# opal_config.h names the threads/pthreads and timer/linux ones
# (MCA_*_HEADER): any #include of it (ompi_config.h) fails. Copy those from
# the source tree, with the Open MPI headers they include in turn.
install_missing_headers() {
    local inc=$PREFIX/include/openmpi src=$WORK/openmpi-$VERSION h todo next
    mapfile -t todo < <(sed -n 's/^#define MCA_[A-Za-z_]*_HEADER "\(opal\/.*\.h\)"$/\1/p' "$inc/opal_config.h")
    while [ ${#todo[@]} -gt 0 ]; do
        next=()
        for h in "${todo[@]}"; do
            [ -f "$inc/$h" ] || [ ! -f "$src/$h" ] || {
                echo "== installing the missing devel header $h"
                as_root install -D -m 644 "$src/$h" "$inc/$h"
                mapfile -t -O ${#next[@]} next < <(sed -n 's/^#[[:space:]]*include[[:space:]]*"\(\(opal\|ompi\)\/[^"]*\)".*/\1/p' "$src/$h")
            }
        done
        todo=(${next[@]+"${next[@]}"})
    done
}

install_packages $PACKAGES
fetch_source
unpack_source
build_install
install_missing_headers
[ "$(installed_version)" = "$VERSION" ] || { echo "ompi5: $PREFIX/bin/ompi_info does not report $VERSION" >&2; exit 1; }
as_root touch "$STAMP"
echo "$PREFIX"
