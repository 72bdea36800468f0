/* OpenCL devices as normalised records (cl_device.c): one record per
 * physical device, whatever number of platforms expose it. */
#ifndef GPO_CL_DEVICE_H
#define GPO_CL_DEVICE_H

#include "cl_probe.h"

/* What a device record's route carries (route->priv). */
typedef struct ocl_dev_priv {
    ocl_facts facts;
    char platform_name[256];
    char platform_vendor[256];
    char platform_version[256];
    char other_platforms[512]; /* platforms that also expose this device, "; "-joined */
} ocl_dev_priv;

/* gpo_backend.enumerate; each record's routes[0].priv is an ocl_dev_priv
 * freed by gpo_ocl_priv_free (NULL is fine). */
gpuopt_status gpo_ocl_enumerate(void *state, const gpo_backend_env *env, gpo_device_list *out);
void gpo_ocl_priv_free(void *priv);

/* The vendor's short name for a PCI vendor id ("NVIDIA"), NULL when unknown. */
const char *gpo_ocl_vendor_short(cl_uint vendor_id);

#endif
