/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026, the adapt2 authors. See LICENSE. */
/*
 * The component: what Open MPI's MCA loader finds in mca_coll_adapt2.so (the
 * only exported symbol), plus the parameters shared by all collectives.
 */
#include "coll_adapt2.h"

#include "opal/util/output.h"

static int adapt2_register(void);
static int adapt2_open(void);
static int adapt2_close(void);

mca_coll_adapt2_component_t mca_coll_adapt2_component = {
    .super =
        {
            .collm_version =
                {
                    ADAPT2_COLL_BASE_VERSION,
                    .mca_component_name = "adapt2",
                    MCA_BASE_MAKE_VERSION(component, 0, 1, 0),
                    .mca_open_component = adapt2_open,
                    .mca_close_component = adapt2_close,
                    .mca_register_component_params = adapt2_register,
                },
            .collm_data = {MCA_BASE_METADATA_PARAM_CHECKPOINT},
            .collm_init_query = mca_coll_adapt2_init_query,
            .collm_comm_query = mca_coll_adapt2_comm_query,
        },
    .output = -1,
};

static int adapt2_register(void)
{
    int rc = mca_coll_adapt2_register_params();
    if (rc < 0) {
        return rc;
    }
    return mca_coll_adapt2_register_pvars();
}

static int adapt2_open(void)
{
    mca_coll_adapt2_component_t *c = &mca_coll_adapt2_component;
    c->output = opal_output_open(NULL);
    opal_output_set_verbosity(c->output, c->values.verbose);
    return mca_coll_adapt2_requests_open();
}

static int adapt2_close(void)
{
    mca_coll_adapt2_device_close();
    mca_coll_adapt2_pml_close();
    mca_coll_adapt2_rules_check_close();
    mca_coll_adapt2_requests_close();
    if (mca_coll_adapt2_component.output >= 0) {
        opal_output_close(mca_coll_adapt2_component.output);
        mca_coll_adapt2_component.output = -1;
    }
    return OMPI_SUCCESS;
}

void mca_coll_adapt2_c_log(int level, const char *message)
{
    ADAPT2_VERBOSE(level, "%s", message);
}
