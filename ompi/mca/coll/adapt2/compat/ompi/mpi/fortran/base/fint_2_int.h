/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * Stand-in for Open MPI's fint_2_int.h, which Debian's libopenmpi-dev does not
 * ship although ompi/op/op.h includes it. The build finds this file through
 * -idirafter, i.e. only when the real header is absent. op.h uses just these
 * two conversions; MPI_Fint is a C int on every platform Open MPI 4.1 builds
 * on with default Fortran integers.
 */
#ifndef ADAPT2_COMPAT_FINT_2_INT_H
#define ADAPT2_COMPAT_FINT_2_INT_H

#define OMPI_INT_2_FINT(a) ((MPI_Fint)(a))
#define OMPI_FINT_2_INT(a) ((int)(a))

#endif
