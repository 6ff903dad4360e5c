#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# The Debian package (contrib/adapt2-deb): built from this build tree, its
# control fields (the exact Open MPI library version it was built against),
# its files (the component in Open MPI's component directory, README,
# copyright, adapt2(7)), lintian, and the component as dpkg installs it into a
# clean root (dpkg --root), alone on the component path, running broadcasts
# and reductions (every element checked), then that removing it leaves
# nothing behind.
. "$(dirname "$0")/lib.sh"
command -v dpkg-deb >/dev/null || { echo "no dpkg-deb: skipped"; exit 77; }
# the package depends on Debian's Open MPI: not for one built elsewhere (ADAPT2_OMPI=5)
dpkg -S "$OMPI_PKGLIBDIR" >/dev/null 2>&1 || { echo "Open MPI at $OMPI_PKGLIBDIR is not Debian's: skipped"; exit 77; }
SRC=${ADAPT2_SRCDIR:-$(dirname "$0")/../..}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT" "$LOG" "$RANKS"' EXIT

deb=$(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL "$SRC/contrib/adapt2-deb" "$ADAPT2_BUILDDIR" "$OUT" 2>"$OUT/err" | tail -n 1)
if [ ! -f "$deb" ]; then
    failed=$((failed + 1)); echo "FAIL contrib/adapt2-deb made no package:"; sed 's/^/    /' "$OUT/err"
    finish
fi
passed=$((passed + 1)); echo "ok   built $(basename "$deb")"

# field NAME: the control field's value
field() { dpkg-deb -f "$deb" "$1"; }
ompi_version=$(dpkg-query -W -f='${Version}' libopenmpi3 2>/dev/null || true)
want_dep="libopenmpi3 (= $ompi_version)"
# a tree configured --with-cuda makes the CUDA flavour (contrib/adapt2-deb)
pkg=openmpi-coll-adapt2
grep -q '^S\["ADAPT2_HAVE_CUDA_TRUE"\]=""' "$ADAPT2_BUILDDIR/config.status" && pkg=openmpi-coll-adapt2-cuda
if [ "$(field Package)" = $pkg ] && field Depends | grep -qF "$want_dep" &&
    ! field Depends | grep -q -- '-dev'; then
    passed=$((passed + 1)); echo "ok   control: $pkg, depends on $want_dep, on no -dev package"
else
    failed=$((failed + 1)); echo "FAIL control: Package '$(field Package)', Depends '$(field Depends)' (want $pkg, $want_dep, no -dev)"
fi

files=$(dpkg-deb -c "$deb" | awk '{ print $NF }' | sed 's|^\./|/|')
for want in "$OMPI_PKGLIBDIR/mca_coll_adapt2.so" /usr/share/doc/$pkg/README.md \
    /usr/share/doc/$pkg/copyright /usr/share/man/man7/adapt2.7.gz; do
    if echo "$files" | grep -qxF "$want"; then
        passed=$((passed + 1)); echo "ok   ships $want"
    else
        failed=$((failed + 1)); echo "FAIL does not ship $want; it ships:"; echo "$files" | sed 's/^/    /'
    fi
done
# lintian: no error or warning (the overrides the package ships explain the
# two it has; its I: and P: tags are listed in docs/testing.md)
if command -v lintian >/dev/null; then
    lintian "$deb" >"$OUT/lintian" 2>&1 || true
    if grep -q "^[EW]: " "$OUT/lintian"; then
        failed=$((failed + 1)); echo "FAIL lintian:"; grep "^[EW]: " "$OUT/lintian" | sed 's/^/    /'
    else
        passed=$((passed + 1)); echo "ok   lintian: no errors or warnings"
    fi
else
    echo "     (no lintian: its check skipped)"
fi
# installed into a clean root by dpkg itself (no maintainer scripts to run;
# the Open MPI and UCX it depends on are this machine's, not the root's)
root="$OUT/root"
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
touch "$root/var/lib/dpkg/status" "$root/var/lib/dpkg/available"
if dpkg --root="$root" --force-depends --log=/dev/null -i "$deb" >"$OUT/dpkg" 2>&1 &&
    [ -f "$root$OMPI_PKGLIBDIR/mca_coll_adapt2.so" ]; then
    passed=$((passed + 1)); echo "ok   dpkg --root installs it"
else
    failed=$((failed + 1)); echo "FAIL dpkg --root -i:"; sed 's/^/    /' "$OUT/dpkg"
fi
# every parameter is in the manual page
n_params=$(grep -c "^ADAPT2_PARAM(" "$SRC/ompi/mca/coll/adapt2/params.def")
n_man=$(gzip -dc "$OUT/root/usr/share/man/man7/adapt2.7.gz" | grep -c '^\.B coll_adapt2_')
if [ "$n_man" -eq "$n_params" ]; then
    passed=$((passed + 1)); echo "ok   adapt2(7) names all $n_params parameters"
else
    failed=$((failed + 1)); echo "FAIL adapt2(7) names $n_man parameters, params.def has $n_params"
fi

# the installed component alone (not the build tree's) on the component path
export OMPI_MCA_mca_base_component_path="$root$OMPI_PKGLIBDIR:$OMPI_PKGLIBDIR"
check "the packaged component, np 3, bcast of derived types, every root" 3 -- \
    "$BIN/bcast_check" -t int,struct -s 1,1000,100000 -r all
check "the packaged component, np 3, reduce and allreduce" 3 -- \
    "$BIN/reduce_check" --coll reduce,allreduce,iallreduce --types int,double --ops sum,max --counts 1,1000,100000
# removing it leaves nothing behind (dpkg's own database aside)
dpkg --root="$root" --log=/dev/null -r $pkg >"$OUT/dpkg" 2>&1 || true
left=$(find "$root" -mindepth 1 -not -path "$root/var*" | head -5)
if [ -z "$left" ] && ! dpkg --root="$root" -s $pkg >/dev/null 2>&1; then
    passed=$((passed + 1)); echo "ok   dpkg --root -r leaves nothing behind"
else
    failed=$((failed + 1)); echo "FAIL after dpkg -r: ${left:-the package is still installed}"; sed 's/^/    /' "$OUT/dpkg"
fi
finish
