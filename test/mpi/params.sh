#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# Invalid parameter values are reported once per process with the parameter's
# name and the value used instead, and the broadcasts still run (and are
# checked) with that value.
. "$(dirname "$0")/lib.sh"

# the reason (range, or the known names) sits between the value and 'using'
msg() { echo "invalid value '$2' for MCA parameter coll_adapt2_$1 \(.*\); using $3"; }
# 2 ranks, several calls each: exactly one report per rank.
expect_output "negative segment size" "$(msg bcast_segment_size -5 1048576)" 2 \
    2 --mca coll_adapt2_bcast_segment_size -5 -- "$BIN/bcast_check" -t int -s 1,70000
expect_output "unknown algorithm" "$(msg bcast_algorithm binomail auto)" 2 \
    2 --mca coll_adapt2_bcast_algorithm binomail -- "$BIN/bcast_check" -t int -s 1,70000
expect_output "receive window 0" "$(msg recv_window 0 4)" 2 \
    2 --mca coll_adapt2_recv_window 0 -- "$BIN/bcast_check" -t int -s 70000
expect_output "receive window above 64" "$(msg recv_window 65 4)" 2 \
    2 --mca coll_adapt2_recv_window 65 -- "$BIN/bcast_check" -t int -s 70000
expect_output "send window 0" "$(msg send_window 0 2)" 2 \
    2 --mca coll_adapt2_send_window 0 -- "$BIN/bcast_check" -t int -s 70000
expect_output "send window above 64" "$(msg send_window 65 2)" 2 \
    2 --mca coll_adapt2_send_window 65 -- "$BIN/bcast_check" -t int -s 70000
expect_output "radix 1" "$(msg bcast_radix 1 8)" 2 \
    2 --mca coll_adapt2_bcast_algorithm knomial --mca coll_adapt2_bcast_radix 1 -- "$BIN/bcast_check" -t int -s 70000
expect_output "negative pool cap" "$(msg pool_max_bytes -1 33554432)" 2 \
    2 --mca coll_adapt2_pool_max_bytes -1 -- "$BIN/bcast_check" -t vector -s 70000
expect_output "valid values are silent" "invalid value" 0 \
    2 --mca coll_adapt2_bcast_segment_size 0 --mca coll_adapt2_recv_window 64 -- "$BIN/bcast_check" -t int -s 70000
finish
