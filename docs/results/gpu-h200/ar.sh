#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# allreduce 256 KiB-1 MiB on host buffers: GPU support on (CUDA), off, on with a mock (no CUDA), and the plan lines
for v in "dev1 --mca coll_adapt2_device 1" "dev0 --mca coll_adapt2_device 0" "mock2 --mca coll_adapt2_device_mock 2" "dev1b --mca coll_adapt2_device 1" "dev0b --mca coll_adapt2_device 0"; do
  set -- $v; n=$1; shift
  echo "== $n"; timeout 60 $MPIRUN_FLAGS -np 4 "$@" .gpu/build/perf/adapt2_bench -k allreduce -m 262144:1048576 -i 500 -x 50 2>&1 | grep -E "^ *[0-9]+ " | awk '{print $1, $2}'
done
for d in 1 0; do echo "== plan dev$d"; timeout 60 $MPIRUN_FLAGS -np 4 --mca coll_adapt2_device $d --mca coll_adapt2_verbose 20 .gpu/build/perf/adapt2_bench -k allreduce -m 524288:524288 -i 2 -x 0 2>&1 | grep "allreduce of 524288" | sort | uniq -c | head -5; done
