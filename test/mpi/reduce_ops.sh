#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026, the adapt2 authors. See LICENSE.
# Every predefined op with a representative datatype of each class (int,
# unsigned, long long, float, double, long double, float/double complex, C
# bool, byte, every MINLOC/MAXLOC pair type), reduce, ireduce, allreduce and
# iallreduce, every root, counts around the segment size in force (4096
# bytes, set through MPI_T) and the number of ranks; np 2, 3, 4, 5 and 8.
# Then all C integer types, 8-bit sums, and messages up to 16 MiB. Floating
# values are small multiples of powers of two: every sum and product is exact
# in any order and is compared exactly.
. "$(dirname "$0")/lib.sh"

for np in 2 3 4 8; do
    # knomial forced: the tree auto takes, but segmented (auto sends small messages whole)
    check "np $np, every op x type class, every root, around 4 KiB segments" $np \
        --mca coll_adapt2_reduce_algorithm knomial -- \
        "$BIN/reduce_check" --segsizes 4096
done
# Open MPI's op/avx saturates 8-bit integer sums from 16 elements on
# (open-mpi/ompi#8045; these values wrap): 8-bit types run without it.
NOAVX="--mca op ^avx"
check "np 3, 8-bit integer types, every op (op/avx off)" 3 $NOAVX -- \
    "$BIN/reduce_check" --types schar,uchar,int8,uint8 --segsizes 4096
check "np 8, 8-bit integer types, every op (op/avx off)" 8 $NOAVX -- \
    "$BIN/reduce_check" --types int8,uint8 --segsizes 4096 --roots 0,7
# Open MPI 4.1.4 compares MPI_UNSIGNED_LONG as signed in MAX and MIN
# (open-mpi/ompi#10525, fixed after 4.1.4): unsigned long runs the other ops.
INTS=schar,uchar,int8,uint8,short,ushort,int,unsigned,long,llong,ullong,int16,uint16,int32,uint32,int64,uint64
check "np 4, every C integer type, every op (op/avx off)" 4 $NOAVX -- \
    "$BIN/reduce_check" --types $INTS --ops max,min,sum,prod,land,lor,lxor,band,bor,bxor --segsizes 4096 --roots 1
check "np 4, unsigned long, every op but max and min" 4 -- \
    "$BIN/reduce_check" --types ulong --ops sum,prod,land,lor,lxor,band,bor,bxor --segsizes 4096 --roots 2
check "np 5, long double complex, larger segments" 5 -- \
    "$BIN/reduce_check" --types ldcomplex,ldouble,ldouble_int --segsizes 65536
# Up to 16 MiB, as users get it (default segment size).
check "np 4, 16 MiB sums" 4 -- "$BIN/reduce_check" --types double,int --ops sum --sizes 16777216 --roots 0,3
check "np 8, 16 MiB, 4 MiB + 1 element" 8 -- "$BIN/reduce_check" --types float --ops sum --sizes 16777216 \
    --roots 7 --coll ireduce,iallreduce --allreduce-algorithms tree,ring
check "np 3, 4 MiB + 1 element, maxloc and prod" 3 -- "$BIN/reduce_check" --types double_int,dcomplex \
    --ops maxloc,prod --sizes 4194305 --roots 2
finish
