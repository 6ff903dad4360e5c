#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# Differential fuzzer (fuzz.c): random bcast/reduce/allreduce calls, blocking
# and non-blocking, on random communicators, datatypes, ops and adapt2
# parameters, each checked against a local reference and (a share) against
# the same call with algorithm=previous. np 2-9, flat and multi-level layouts
# (coll_adapt2_nodes block/cyclic/list), pml ob1, pml ucx and adapt2's UCX
# transport, one fixed seed per run.
#
# Each run stops after ADAPT2_FUZZ_CASES cases (default 400) or
# ADAPT2_FUZZ_SECONDS seconds (default 4; 0: no limit), whichever comes
# first; the whole script takes 2-4 minutes on 2 cores. A long mode, e.g.
#   ADAPT2_FUZZ_CASES=5000 ADAPT2_FUZZ_SECONDS=0 ADAPT2_TEST_TIMEOUT=3600 make check-fuzz
# A failure prints the case and the command that reruns it alone:
#   mpirun -np P <the same flags> fuzz --seed S --case K [--max-count N --max-bytes B ...]
# and `fuzz --seed S --cases N` reruns a whole run (--keep-going: past mismatches).
# ADAPT2_FUZZ_ARGS adds fuzz options to every run, e.g. to look past a known
# bug: ADAPT2_FUZZ_ARGS="--set node_segment_size=0 --allow-pair-padding".
# ADAPT2_FUZZ_SEED=N runs seeds N+1..N+9 instead of 101..109 (new cases).
#
# Predefined ops on derived datatypes need mpi_param_check 0 (Open MPI 4.1.4's
# argument checks reject them; MPI allows derived types of one predefined type).
. "$(dirname "$0")/lib.sh"
P="$BIN/fuzz"
CASES=${ADAPT2_FUZZ_CASES:-400}
SECONDS_EACH=${ADAPT2_FUZZ_SECONDS:-4}
OB1="--mca pml ob1 --mca mpi_param_check 0"
S=${ADAPT2_FUZZ_SEED:-100}

fuzz() { # NAME NP SEED [mpirun flags...]
    local name=$1 np=$2 seed=$3
    shift 3
    check "np $np, $name, seed $seed" $np "$@" -- "$P" --seed $seed --cases $CASES --time-budget $SECONDS_EACH \
        ${ADAPT2_FUZZ_ARGS:-}
    grep -h "^fuzz: [0-9]* cases" "$LOG" | sed 's/^/     /' || true  # how many ran
}

fuzz "flat" 2 $((S + 1)) $OB1
fuzz "flat" 3 $((S + 2)) $OB1
fuzz "nodes block:2" 4 $((S + 3)) $OB1 --mca coll_adapt2_nodes block:2
fuzz "nodes cyclic:3" 5 $((S + 4)) $OB1 --mca coll_adapt2_nodes cyclic:3
fuzz "nodes list:0,0,1,1,1,2,2 (uneven)" 7 $((S + 5)) $OB1 --mca coll_adapt2_nodes list:0,0,1,1,1,2,2
fuzz "nodes list:0,1,1,1,1,2,2,3,3 (uneven)" 9 $((S + 6)) $OB1 --mca coll_adapt2_nodes list:0,1,1,1,1,2,2,3,3
fuzz "pml ucx, nodes block:2" 4 $((S + 7)) $UCX_FLAGS --mca mpi_param_check 0 --mca coll_adapt2_nodes block:2
fuzz "adapt2's UCX transport, nodes cyclic:2" 5 $((S + 8)) $OB1 --mca coll_adapt2_transport ucx \
    --mca coll_adapt2_nodes cyclic:2
# 12 nodes of one rank: more than 2 x segments + 8 nodes, so auto's two trees between nodes
fuzz "nodes block:1 (12 nodes)" 12 $((S + 9)) $OB1 --mca coll_adapt2_nodes block:1
finish
