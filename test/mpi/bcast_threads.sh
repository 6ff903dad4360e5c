#!/bin/bash
# MPI_THREAD_MULTIPLE: 4 threads per rank, each on its own communicator.
. "$(dirname "$0")/lib.sh"

check "np 2, 4 threads" 2 -- "$BIN/bcast_threads" 4 60
check "np 4, 4 threads" 4 -- "$BIN/bcast_threads" 4 40
finish
