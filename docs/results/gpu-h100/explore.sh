#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# The exploratory GPU runs of docs/measurements.md ("GPU buffers on a real GPU", run 3):
# on the GPU machine, contrib/adapt2-gpu exec bash docs/results/gpu-h100/explore.sh OUT
out=$1; B=$ADAPT2_BUILDDIR/perf/device_bench
M="$MPIRUN_FLAGS"
g() { grep -E '^(bcast|reduce|allreduce|#)'; }
{
echo "== np 4, device_segment_size 4M, 16M"; timeout 60 $M -np 4 --mca coll_adapt2_device_segment_size 4194304 $B -s 16M:16M -i 3 2>&1 | g
echo "== np 2, bcast 256M, pinned cap 512M"; timeout 60 $M -np 2 --mca coll_adapt2_device_pinned_max_bytes 536870912 $B -c bcast -s 64M:256M -i 3 2>&1 | g
echo "== np 2, mock device (host memory), small"; timeout 60 $M -np 2 --mca coll_adapt2_device_mock 1 $B -m -s 4K:64K -i 5 2>&1 | g
echo "== np 2, adapt2 off (tuned), host staged column only, small"; timeout 60 ${M/--mca coll_adapt2_priority 100/--mca coll_adapt2_priority 0} -np 2 $B -m -s 4K:64K -i 5 2>&1 | g
if command -v nvidia-cuda-mps-control >/dev/null; then
  export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps CUDA_MPS_LOG_DIRECTORY=/tmp/mpslog; mkdir -p /tmp/mps /tmp/mpslog
  nvidia-cuda-mps-control -d && sleep 1
  echo "== MPS np 4"; timeout 90 $M -np 4 $B -s 4K:256M -i 3 2>&1 | g
  echo quit | nvidia-cuda-mps-control
fi
} 2>&1 | tee $out/explore.txt
