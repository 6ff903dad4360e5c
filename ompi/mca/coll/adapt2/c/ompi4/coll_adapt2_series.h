/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * What the C layer needs of Open MPI that differs between release series:
 * here Open MPI 4.1's names (ompi5/coll_adapt2_series.h has 5.0's). configure
 * puts the directory of the series it finds on the include path; nothing
 * else in the component depends on the series. Included by coll_adapt2.h,
 * after Open MPI's headers.
 */
#ifndef MCA_COLL_ADAPT2_SERIES_H
#define MCA_COLL_ADAPT2_SERIES_H

#include "ompi/proc/proc.h"
#include "opal/mca/pmix/pmix.h"
#include "opal/threads/mutex.h"

#define ADAPT2_OMPI_SERIES "4.1"

/* The coll component struct and its version (coll API 2.0.0). */
typedef mca_coll_base_component_2_0_0_t adapt2_coll_component_t;
#define ADAPT2_COLL_BASE_VERSION MCA_COLL_BASE_VERSION_2_0_0

/* How a component's symbol is exported. */
#define ADAPT2_COMPONENT_EXPORT OMPI_MODULE_DECLSPEC

/* The communicator's local context id (an int here). */
static inline uint32_t adapt2_comm_cid(const ompi_communicator_t *comm)
{
    return (uint32_t) comm->c_contextid;
}

/* A reused request forgets what Open MPI's datatype retention left in it
 * (the datatypes and ops of its last MPI_Ibcast & co.). */
static inline void adapt2_nbc_forget_retained(ompi_coll_base_nbc_request_t *nbc)
{
    nbc->data.objs.objs[0] = nbc->data.objs.objs[1] = NULL;
}

/* A peer's locality string (hwloc's, "SK0:L3...:NM0:..." ) from the modex:
 * OPAL_SUCCESS and *loc (to free) or an error. */
static inline int adapt2_locality_string(ompi_proc_t *proc, char **loc)
{
    int rc = OPAL_ERR_NOT_FOUND;
    OPAL_MODEX_RECV_VALUE_OPTIONAL(rc, OPAL_PMIX_LOCALITY_STRING, &proc->super.proc_name, loc, OPAL_STRING);
    return rc;
}

/* Whether the PML moves any datatype correctly (4.1.4's does; 5.0.7's does
 * not: ompi5/coll_adapt2_series.h). */
#define ADAPT2_PML_MOVES_DERIVED_TYPES 1

#endif
