#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# The emulated cluster end to end: 4 nodes x 2 slots; every rank lands on the
# node its mapping says (block and round-robin), as seen by every other rank
# and by Open MPI's locality; adapt2's broadcast is correct across the nodes
# (both mappings); bad input is refused clearly; `down`, and also the EXIT
# trap after a failing script, leave no process, namespace or mount behind.
# SKIP (77) where namespaces cannot be created.
. "$ADAPT2_SRCDIR/test/mpi/lib.sh"
. "$ADAPT2_SRCDIR/test/cluster/lib.sh"
# test/mpi/lib.sh's `check` runs $MPIRUN: make it the cluster's drop-in mpirun.
MPIRUN=$ADAPT2_SRCDIR/contrib/cluster/mpirun
TIMEOUT=${ADAPT2_TEST_TIMEOUT:-90}
WHERE=$ADAPT2_BUILDDIR/test/cluster/where
NODES=4 SLOTS=2 NP=8

# ok/bad NAME: count a check that needs no mpirun.
ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() { failed=$((failed + 1)); echo "FAIL $1"; }

# expect_fail NAME PATTERN CMD...: CMD must exit non-zero and say PATTERN.
expect_fail() {
    local name=$1 pattern=$2 out rc=0
    shift 2
    out=$("$@" 2>&1) || rc=$?
    if [ $rc -ne 0 ] && grep -qE -- "$pattern" <<<"$out"; then ok "$name"; else
        bad "$name (exit $rc, wanted /$pattern/): $out"
    fi
}

# expect_placement NAME NODE_OF_RANK_EXPR: after a `check` of where, every
# rank printed exactly one line with the node the expression (of r) gives.
expect_placement() {
    local name=$1 expr=$2 r node wrong=0
    for ((r = 0; r < NP; r++)); do
        node=$((expr))
        if [ "$(grep -cx "rank $r of $NP on node$node" "$LOG")" -ne 1 ]; then
            echo "    rank $r: expected one line 'rank $r of $NP on node$node'"
            wrong=1
        fi
    done
    grep -qx "where: OK, $NP ranks on $NODES nodes" "$LOG" || { echo "    no 'where: OK' line"; wrong=1; }
    if [ $wrong -eq 0 ]; then ok "$name"; else bad "$name"; sed 's/^/    /' "$LOG" | head -20; fi
}

# ---- bad input ------------------------------------------------------------
expect_fail "up 0 is refused" "N must be an integer" "$CLUSTER" up 0
expect_fail "a bad rate is refused" "bad --rate" "$CLUSTER" up 2 --rate 1gbt
expect_fail "an unknown subcommand is refused" "unknown subcommand" "$CLUSTER" frobnicate
expect_fail "mpirun without a cluster is refused" "no cluster is up" \
    env ADAPT2_CLUSTER_STATE=/nonexistent/adapt2-cluster "$CLUSTER" mpirun -np 1 true

# ---- up ---------------------------------------------------------------------
ip netns list >"$LOG.netns-before" 2>&1 || true
t0=$(date +%s%N)
cluster_up $NODES
echo "     (up: $(( ($(date +%s%N) - t0) / 1000000 )) ms)"
expect_fail "up twice is refused" "already up" "$CLUSTER" up 2
"$CLUSTER" status >"$LOG" 2>&1 && grep -q "processes in the cluster: 0" "$LOG" && ok "status" ||
    { bad "status"; sed 's/^/    /' "$LOG"; }

# ---- where every rank runs -------------------------------------------------------
# where_case NAME EXPR [mpirun flags...] -- where args: the run passes and
# every rank's line names the node EXPR (of r) gives.
where_case() {
    local name=$1 expr=$2 before=$failed
    shift 2
    check "$name" $NP "$@"
    [ $failed -ne $before ] || expect_placement "$name: placement" "$expr"
}
where_case "where, block mapping" 'r / SLOTS' -- "$WHERE" --nodes $NODES --slots $SLOTS --map slot
where_case "where, --map-by node" 'r % NODES' --map-by node -- \
    "$WHERE" --nodes $NODES --slots $SLOTS --map node
export ADAPT2_CLUSTER_MAP=node
where_case "where, ADAPT2_CLUSTER_MAP=node" 'r % NODES' -- \
    "$WHERE" --nodes $NODES --slots $SLOTS --map node
unset ADAPT2_CLUSTER_MAP
# where itself must be able to fail: the wrong expectation is a failure.
rc=0
cluster_mpirun -np $NP "$WHERE" --nodes $NODES --slots $SLOTS --map node >"$LOG" 2>&1 || rc=$?
[ $rc -ne 0 ] && grep -q MISMATCH "$LOG" && ok "where fails on a wrong mapping" ||
    { bad "where did not fail on a wrong mapping (exit $rc)"; tail -5 "$LOG" | sed 's/^/    /'; }

# ---- adapt2's broadcast across the nodes --------------------------------------------
# Sizes around the 1 MiB segment and a multi-segment one; a deep tree (radix
# 2) so that segments cross nodes on several levels.
BC="-s 1,65537,1048575,1048577,4194305 -t byte,int,vector,mixed -r 0,3,6"
check "bcast_check np 8, block mapping" $NP -- "$BIN/bcast_check" $BC
check "bcast_check np 8, --map-by node, deep tree" $NP --map-by node \
    --mca coll_adapt2_bcast_radix 2 -- "$BIN/bcast_check" $BC

# ---- down leaves nothing -----------------------------------------------------------
state=$ADAPT2_CLUSTER_STATE
holders=() inodes=()
for f in "$state"/*.pid; do read -r pid _ <"$f"; holders+=("$pid"); done
for f in "$state"/*.ns; do inodes+=("$(cat "$f")"); done
t0=$(date +%s%N)
cluster_down
echo "     (down: $(( ($(date +%s%N) - t0) / 1000000 )) ms)"

# holder_alive PID: a namespace holder (sleep) runs as PID; a zombie does not
# count (it has left its namespaces; our PID 1 reaps it a little later).
holder_alive() {
    [ -e "/proc/$1" ] && [ "$(cat "/proc/$1/comm" 2>/dev/null)" = sleep ] &&
        ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null
}

# leftovers: what of ours still exists (holders, processes or open files in
# our namespaces, mounts of our hosts file, the state directory, /run/netns names)
leftovers() {
    local pid ino
    [ ! -e "$state" ] || echo "state directory $state"
    for pid in "${holders[@]}"; do
        ! holder_alive "$pid" || echo "holder $pid"
    done
    for ino in "${inodes[@]}"; do
        find /proc/[0-9]*/ns -maxdepth 1 -name net -lname "net:\[$ino\]" 2>/dev/null |
            sed "s/^/process in namespace $ino: /"
        find /proc/[0-9]*/fd -lname "net:\[$ino\]" 2>/dev/null | sed "s/^/open namespace $ino: /"
    done
    grep -F "$state" /proc/self/mountinfo | sed 's/^/mount: /'
    ip netns list 2>&1 | diff "$LOG.netns-before" - | sed -n 's/^> /named netns: /p'
}
left=$(leftovers)
[ -z "$left" ] && ok "down leaves nothing" || { bad "down left:"; echo "$left" | sed 's/^/    /'; }

# ---- the EXIT trap tears down after a failed script ---------------------------------
out=$(bash -c '. "$ADAPT2_SRCDIR/test/cluster/lib.sh"; cluster_up 2 >/dev/null
               echo "$ADAPT2_CLUSTER_STATE"; read -r pid _ <"$ADAPT2_CLUSTER_STATE/node1.pid"
               echo "$pid"; false' 2>&1) && bad "the failing script succeeded" || true
tstate=$(sed -n 1p <<<"$out") tpid=$(sed -n 2p <<<"$out")
if [ -n "$tstate" ] && [ ! -e "$tstate" ] && [ -n "$tpid" ] &&
   ! holder_alive "$tpid"; then
    ok "a failed script's EXIT trap tears its cluster down"
else
    bad "after a failed script: state '$tstate', node1 holder '$tpid' still there:"; echo "$out" | sed 's/^/    /'
fi
rm -f "$LOG.netns-before"
finish
