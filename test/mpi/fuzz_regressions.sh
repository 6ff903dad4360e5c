#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# The fuzzer cases that found adapt2's bugs (docs/testing.md, "How adapt2 is tested
# for trust"), each rerun alone so they stay fixed whatever budget fuzz.sh
# gets. Case numbers hold for this generator (fuzz_case.c, fuzz_types.c); a
# change that draws random numbers differently must re-find them (the long
# mode of fuzz.sh) or keep them as they are.
. "$(dirname "$0")/lib.sh"
P="$BIN/fuzz"
OB1="--mca pml ob1 --mca mpi_param_check 0"
ARGS="--max-count 1048576 --max-bytes 4194304 --depth 2"

case_of() { # NAME NP SEED CASE [mpirun flags...]
    local name=$1 np=$2 seed=$3 k=$4
    shift 4
    check "$name (seed $seed case $k)" $np "$@" -- "$P" --seed $seed --case $k $ARGS
}

case_of "convertor moved forward from a rounded-down position: SIGFPE" 2 101 0 $OB1
case_of "MAXLOC of MPI_SHORT_INT: padding written" 2 101 52 $OB1
case_of "MAXLOC of MPI_LONG_INT, np 4 block:2: padding written" 4 103 33 $OB1 --mca coll_adapt2_nodes block:2
case_of "numa messages larger than segments: hang" 5 104 5 $OB1 --mca coll_adapt2_nodes cyclic:3
case_of "own layouts per rank, grouped messages: MPI_ERR_TRUNCATE" 7 105 10 $OB1 \
    --mca coll_adapt2_nodes list:0,0,1,1,1,2,2
case_of "node messages smaller than segments: CMA read of a freed buffer" 9 106 4 $OB1 \
    --mca coll_adapt2_nodes list:0,1,1,1,1,2,2,3,3
case_of "user op handed on, communicator freed while pending (libnbc)" 4 107 83 $UCX_FLAGS \
    --mca mpi_param_check 0 --mca coll_adapt2_nodes block:2
# Open MPI 5.0.7's convertor, resumed inside a datatype instance with
# misaligned elements, writes into the holes (bcast_misaligned.sh); on 4.1.4
# these pass either way
case_of "5.0: segment edges inside misaligned instances: holes overwritten" 3 102 11 $OB1
case_of "5.0: a misaligned derived type handed to the PML (direct path): wrong values" 5 104 12 $OB1 \
    --mca coll_adapt2_nodes cyclic:3
finish
