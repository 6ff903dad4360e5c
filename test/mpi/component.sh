#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# The component as Open MPI sees it: listed by ompi_info with every parameter,
# only its component symbol exported, every symbol it needs defined (a
# missing one fails only when first called: lazy binding), selected on
# request, declined when not,
# and falling back to the previous component when told.
. "$(dirname "$0")/lib.sh"

so="$ADAPT2_BUILDDIR/.libs/mca_coll_adapt2.so"
exports=$(nm -D --defined-only "$so" | awk '{print $3}')
if [ "$exports" = "mca_coll_adapt2_component" ]; then
    passed=$((passed + 1)); echo "ok   only mca_coll_adapt2_component is exported"
else
    failed=$((failed + 1)); echo "FAIL exported symbols: $exports"
fi
undefined=$(ldd -r "$so" 2>&1 | grep -i "undefined symbol")
if [ -z "$undefined" ]; then
    passed=$((passed + 1)); echo "ok   every symbol the component uses is defined (ldd -r)"
else
    failed=$((failed + 1)); echo "FAIL undefined symbols:"; echo "$undefined" | sed 's/^/    /'
fi

info=$(ompi_info --param coll adapt2 --level 9 2>&1)
for p in priority verbose recv_window send_window pool_max_bytes bcast_algorithm \
         bcast_segment_size bcast_fanout bcast_radix bcast_chains; do
    if echo "$info" | grep -q "parameter \"coll_adapt2_$p\""; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1)); echo "FAIL ompi_info does not list coll_adapt2_$p"
    fi
done
echo "ok   ompi_info lists the parameters"

expect_output "selected at priority 100" "coll:base:comm_select: selecting +adapt2, priority 100, Enabled" 2 \
    2 --mca coll_base_verbose 10 -- "$BIN/bcast_check" -t byte -s 1
expect_output "declined at priority 0" "priority 0; not selected" 2 \
    2 --mca coll_adapt2_priority 0 --mca coll_adapt2_verbose 10 -- "$BIN/bcast_check" -t byte -s 1 --expect none
expect_output "intercommunicators declined, corner cases" "intercommunicator; declining" 4 \
    4 --mca coll_adapt2_verbose 10 -- "$BIN/bcast_misc"
check "corner cases under pml ucx" 2 $UCX_FLAGS -- "$BIN/bcast_misc"
check "bcast_algorithm=previous falls back" 3 --mca coll_adapt2_bcast_algorithm previous -- \
    "$BIN/bcast_check" -t int,vector -s 1,70000 --expect previous
check "ibcast falls back too" 3 --mca coll_adapt2_bcast_algorithm previous -- \
    "$BIN/bcast_check" -t int -s 1,70000 --nonblocking --expect previous
finish
