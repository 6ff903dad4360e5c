# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# Sourced by the emulated cluster's test scripts (after test/mpi/lib.sh when
# they also want its `check`/`finish` and the build-tree component):
#   cluster_up N [RATE]   N nodes (CLUSTER_SLOTS slots each, default 2), optionally
#                         shaped (tc rate, e.g. 1gbit); exits 77 (SKIP) with the
#                         reason where namespaces cannot be created
#   cluster_mpirun ARGS   adapt2-cluster mpirun under `timeout -k 10`
#                         ($CLUSTER_TIMEOUT s, default 120), so a hang fails loudly
#   cluster_down          tears the cluster down; also runs at exit (trap), so a
#                         failed or interrupted test leaves nothing behind
# Each test gets a cluster of its own (private state directory), so tests run
# in parallel, or by other users of the machine, do not collide: every name a
# cluster uses lives inside its own namespaces.
: "${ADAPT2_SRCDIR:?run through make check}"
CLUSTER=$ADAPT2_SRCDIR/contrib/adapt2-cluster
CLUSTER_SLOTS=${CLUSTER_SLOTS:-2}
CLUSTER_TIMEOUT=${CLUSTER_TIMEOUT:-120}
# The real mpirun (the configured one) for adapt2-cluster to run on node0;
# scripts may then point test/mpi/lib.sh's MPIRUN at contrib/cluster/mpirun.
export ADAPT2_CLUSTER_MPIRUN=${ADAPT2_CLUSTER_MPIRUN:-${MPIRUN:-mpirun}}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
_cluster_state=""

cluster_up() {
    local n=$1 rate=${2:-} why
    if ! why=$("$CLUSTER" check 2>&1); then
        echo "SKIP: the emulated cluster needs network namespaces: $why"
        exit 77
    fi
    _cluster_state=$(mktemp -d "${TMPDIR:-/tmp}/adapt2-cluster.XXXXXX")
    export ADAPT2_CLUSTER_STATE=$_cluster_state
    # Namespaces work here, so a failure to start is the test's failure.
    "$CLUSTER" up "$n" --slots "$CLUSTER_SLOTS" ${rate:+--rate "$rate"} ||
        { echo "FAIL: adapt2-cluster up $n ${rate:+--rate $rate} failed"; exit 1; }
}

cluster_mpirun() {
    timeout -k 10 "$CLUSTER_TIMEOUT" "$CLUSTER" mpirun "$@"
}

cluster_down() {
    [ -n "$_cluster_state" ] || return 0
    ADAPT2_CLUSTER_STATE=$_cluster_state "$CLUSTER" down
    _cluster_state=""
}

# Run cluster_down at exit, then whatever EXIT trap was there before (e.g.
# test/mpi/lib.sh's removal of its log). `trap -p` prints
# "trap -- 'COMMAND' EXIT", quoted for eval: let eval hand COMMAND over.
_cluster_prev_exit=""
_cluster_grab() { _cluster_prev_exit=$2; }
_cluster_t=$(trap -p EXIT)
[ -z "$_cluster_t" ] || eval "_cluster_grab ${_cluster_t#trap }"
trap 'cluster_down; eval "$_cluster_prev_exit"' EXIT
# A signal ends the script through the EXIT trap too.
trap 'exit 130' INT
trap 'exit 143' TERM
