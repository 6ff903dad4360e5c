/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * What the C layer needs of Open MPI that differs between release series:
 * here Open MPI 5.0's names (ompi4/coll_adapt2_series.h has 4.1's). configure
 * puts the directory of the series it finds on the include path; nothing
 * else in the component depends on the series. Included by coll_adapt2.h,
 * after Open MPI's headers.
 */
#ifndef MCA_COLL_ADAPT2_SERIES_H
#define MCA_COLL_ADAPT2_SERIES_H

#include "ompi/proc/proc.h"
#include "opal/mca/pmix/pmix-internal.h"
#include "opal/mca/threads/mutex.h"

#define ADAPT2_OMPI_SERIES "5.0"

/* The coll component struct and its version (coll API 2.4.0: the same
 * fields as 2.0.0). */
typedef mca_coll_base_component_2_4_0_t adapt2_coll_component_t;
#define ADAPT2_COLL_BASE_VERSION MCA_COLL_BASE_VERSION_2_4_0

/* How a component's symbol is exported (OMPI_MODULE_DECLSPEC is gone). */
#define ADAPT2_COMPONENT_EXPORT OMPI_DECLSPEC

/* The communicator's local context id (c_contextid is an extended,
 * 128-bit id in 5.0; the local index is what 4.1's was). */
static inline uint32_t adapt2_comm_cid(const ompi_communicator_t *comm)
{
    return ompi_comm_get_local_cid(comm);
}

/* A reused request forgets what Open MPI's datatype retention left in it
 * (the datatypes and ops of its last MPI_Ibcast & co., and the arrays it
 * converted from Fortran). */
static inline void adapt2_nbc_forget_retained(ompi_coll_base_nbc_request_t *nbc)
{
    nbc->data.refcounted.objs.objs[0] = nbc->data.refcounted.objs.objs[1] = NULL;
    nbc->data.release_arrays[0] = NULL;
}

/* A peer's locality string (hwloc's, "SK0:L3...:NM0:..." ) from the modex:
 * OPAL_SUCCESS and *loc (to free) or an error. */
static inline int adapt2_locality_string(ompi_proc_t *proc, char **loc)
{
    int rc = OPAL_ERR_NOT_FOUND;
    OPAL_MODEX_RECV_VALUE_OPTIONAL(rc, PMIX_LOCALITY_STRING, &proc->super.proc_name, loc, PMIX_STRING);
    return rc;
}

/* Whether the PML moves any datatype correctly. Open MPI 5.0.7's does not:
 * a message received into a buffer whose elements are misaligned (a struct
 * of long longs at byte 2, in a buffer at 6 mod 8) gets elements written
 * into its holes when the convertor resumes inside a datatype instance, with
 * MPI_Recv itself, pml ob1 and ucx (docs/measurements.md, "Open MPI 5.0.7's
 * datatype engine"; test/mpi/bcast_misaligned.sh). adapt2's direct path then
 * moves a derived datatype as packed bytes that it packs and unpacks itself,
 * one whole buffer at a time (which is correct). */
#define ADAPT2_PML_MOVES_DERIVED_TYPES 0

#endif
