#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# One entry point for a fresh Debian 12 machine (run as root, or with sudo
# available):
#   contrib/adapt2.sh            install Debian packages, build, install the
#                                component, run the benchmark comparison
#   contrib/adapt2.sh --test     install packages, build, run the whole test suite,
#                                then the sanitizer build's (ASan + UBSan) subset
#   contrib/adapt2.sh --smoke    install packages, build, run the MPI smoke subset
#                                (make check-smoke; CI's run against Open MPI 5.0)
#   contrib/adapt2.sh --build    install packages and build only
#   contrib/adapt2.sh --deb      build the Debian package openmpi-coll-adapt2
#                                (contrib/adapt2-deb); prints the .deb's path last
# Environment: BUILD_DIR (default ./build), JOBS (default: number of cores),
# ADAPT2_CONFIGURE_FLAGS (extra flags for configure), ADAPT2_OMPI=5 (--test, --smoke,
# --build against Open MPI 5.0: contrib/ompi5.sh builds it once into
# /opt/ompi5; BUILD_DIR defaults to ./build-ompi5; no sanitizer build).
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD
. contrib/packages.sh
OMPI_SERIES=${ADAPT2_OMPI:-4}
case $OMPI_SERIES in
    4) BUILD_DIR=${BUILD_DIR:-$SRC/build} ;;
    5) BUILD_DIR=${BUILD_DIR:-$SRC/build-ompi5} ;;
    *) echo "contrib/adapt2.sh: ADAPT2_OMPI must be 4 (Debian 12's 4.1.4, the default) or 5, not '$OMPI_SERIES'" >&2
       exit 2 ;;
esac
SANITIZE_DIR=${SANITIZE_DIR:-$BUILD_DIR-sanitize}
JOBS=${JOBS:-$(nproc)}
mode=${1:-run}

PACKAGES="build-essential autoconf automake libtool pkg-config libopenmpi-dev openmpi-bin clang-format
libucx-dev libhwloc-dev libcmocka-dev python3 gnuplot-nox iproute2 lintian"


# build [DIR [configure flags...]]
build() {
    local dir=${1:-$BUILD_DIR}
    shift || true
    echo "== building in $dir"
    if [ ! -x "$SRC/configure" ] || [ "$SRC/configure.ac" -nt "$SRC/configure" ]; then
        "$SRC/autogen.sh" >/dev/null
    fi
    mkdir -p "$dir"
    cd "$dir"
    if [ ! -f Makefile ] || [ "$SRC/configure" -nt Makefile ]; then
        "$SRC/configure" -q ${ADAPT2_CONFIGURE_FLAGS:-} "$@"
    fi
    make -s -j"$JOBS" ${BUILD_TARGETS:-}
    cd "$SRC"
}

# Sums the individual checks of every suite (both builds) into one closing line.
summarize() {
    local passed=0 failed=0 n
    for log in "$BUILD_DIR"/test/unit/*.log "$BUILD_DIR"/test/mpi/*.log \
               "$SANITIZE_DIR"/test/unit/*.log "$SANITIZE_DIR"/test/mpi/*.log; do
        [ -f "$log" ] || continue
        case "$log" in *test-suite.log) continue ;; esac
        n=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test(s)\./\1/p' "$log" | tail -1)
        passed=$((passed + ${n:-0}))
        n=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test(s), listed below:/\1/p' "$log" | tail -1)
        failed=$((failed + ${n:-0}))
        n=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$log" | tail -1)
        if [ -n "$n" ]; then
            passed=$((passed + ${n% *}))
            failed=$((failed + ${n#* }))
        fi
        # a suite that died without its own summary still counts as a failure
        grep -q "^:test-result: FAIL" "${log%.log}.trs" 2>/dev/null && [ -z "$n" ] && failed=$((failed + 1))
    done
    echo "adapt2: $passed passed, $failed failed"
}

# check_in DIR TARGET: runs one make check target, lists the results and
# shows each failing check of a failing suite and the suite's end.
check_in() {
    local dir=$1 target=$2 rc=0
    make -C "$dir" -s -j"$JOBS" "$target" >"$dir/check.out" 2>&1 || rc=$?
    grep -E "^(PASS|FAIL|SKIP|ERROR|XPASS):" "$dir/check.out" || true
    if [ $rc -ne 0 ]; then
        echo "== failures:"
        for trs in "$dir"/test/*/*.trs; do
            grep -q ":test-result: \(FAIL\|ERROR\)" "$trs" || continue
            # each failing check with what it printed (a suite's tail alone
            # hides a failure early in a long suite), then the suite's end
            echo "  ${trs%.trs}:"
            grep -E -A 24 "^(FAIL|TIMEOUT)" "${trs%.trs}.log" | head -150 | sed 's/^/    /'
            echo "    ..."
            tail -n 8 "${trs%.trs}.log" | sed 's/^/    /'
        done
    fi
    return $rc
}

# Open MPI 5.0 (ADAPT2_OMPI=5): built or reused by contrib/ompi5.sh, first on
# the PATH (mpirun, ompi_info) and the one configure finds.
use_ompi5() {
    local prefix
    echo "== Open MPI 5.0 (contrib/ompi5.sh: built once, then reused)"
    # its output to our stderr (the same file descriptor: `tee /dev/stderr`
    # would reopen a log file and overwrite what it had), its last line kept
    prefix=$("$SRC/contrib/ompi5.sh" | tee >(cat >&2) | tail -n 1)
    export PATH="$prefix/bin:$PATH"
    ADAPT2_CONFIGURE_FLAGS="MPICC=$prefix/bin/mpicc OMPI_INFO=$prefix/bin/ompi_info MPIRUN=$prefix/bin/mpirun ${ADAPT2_CONFIGURE_FLAGS:-}"
}

run_smoke() {
    echo "== the MPI smoke subset (make check-smoke) against Open MPI $(ompi_info --parsable | sed -n 's/^ompi:version:full://p')"
    local rc=0
    rm -f "$BUILD_DIR"/test/*/*.log "$BUILD_DIR"/test/*/*.trs   # the summary counts this run's suites only
    check_in "$BUILD_DIR" check-smoke || rc=$?
    summarize
    return $rc
}

run_tests() {
    local rc=0
    echo "== running the test suite (make check) against Open MPI $(ompi_info --parsable | sed -n 's/^ompi:version:full://p')"
    check_in "$BUILD_DIR" check || rc=$?
    if [ "$OMPI_SERIES" = 5 ]; then
        summarize
        return $rc
    fi
    echo "== AddressSanitizer + UBSan build: unit tests and an MPI subset (make check-sanitizers)"
    # configured and built only as far as check-sanitizers needs
    (BUILD_TARGETS=mca_coll_adapt2.la build "$SANITIZE_DIR" --enable-sanitizers) &&
        check_in "$SANITIZE_DIR" check-sanitizers || rc=1
    summarize
    return $rc
}

install_component() {
    echo "== installing mca_coll_adapt2.so"
    as_root make -C "$BUILD_DIR" -s install
    ompi_info --param coll adapt2 --level 9 | head -1
}

run_benchmark() {
    echo "== latency: adapt2 vs tuned vs upstream adapt (np 4; bcast, reduce, allreduce)"
    python3 "$SRC/perf/compare.py" --bench "$BUILD_DIR/perf/adapt2_bench" \
        --collective bcast,reduce,allreduce --iters 200:20 --warmup 20:2 "${@}"
    echo "== noise absorption: 2 ms compute + 10% chance of 5 ms noise per iteration, then MPI_Bcast"
    python3 "$SRC/perf/compare.py" noise --bench "$BUILD_DIR/perf/noise_bench" \
        --components adapt2,tuned --collective bcast --sizes 1M --np 4 --noise p=0.1,d=5ms \
        --seeds 1,2 --iters 100 "${@}"
}

[ "$OMPI_SERIES" = 5 ] && case "$mode" in
    --test | --smoke | --build) install_packages $PACKAGES; use_ompi5 ;;
    -h | --help) ;;
    *) echo "contrib/adapt2.sh: ADAPT2_OMPI=5 goes with --test, --smoke or --build" >&2; exit 2 ;;
esac
case "$mode" in
    --test) install_packages $PACKAGES; build; run_tests ;;
    --smoke) install_packages $PACKAGES; build; run_smoke ;;
    --build) install_packages $PACKAGES; build ;;
    --deb) install_packages $PACKAGES; build; "$SRC/contrib/adapt2-deb" "$BUILD_DIR" ;;
    run|--run) shift || true; install_packages $PACKAGES; build; install_component; run_benchmark "$@" ;;
    -h|--help) sed -n '4,18p' "$0" ;;
    *) echo "usage: contrib/adapt2.sh [--test|--smoke|--build|--deb|--run [compare.py options]]" >&2; exit 2 ;;
esac
