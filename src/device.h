/* The device record shared by core and backends: the public
 * gpuopt_device_info plus what the core needs to route work to a backend.
 * A physical device seen by several backends is one record with several
 * routes (routes[0] is the primary, the native backend when there is one). */
#ifndef GPO_DEVICE_H
#define GPO_DEVICE_H

#include <cjson/cJSON.h>

#include "arch/peaks.h"
#include "gpuopt/gpuopt.h"

struct gpo_backend;
struct gpuopt_context;

#define GPO_MAX_ROUTES 4

/* One backend's way to reach a device. */
typedef struct gpo_route {
    const struct gpo_backend *backend;
    void *backend_state; /* the backend's loaded state (set by the core) */
    int32_t index;       /* native index within that backend */
    void *priv;          /* the backend's per-device data (cl_device_id, ordinal, ...) */
    void (*priv_free)(void *priv);
    gpuopt_device_info info; /* what this backend saw (kept for merging and details) */
} gpo_route;

struct gpuopt_device {
    gpuopt_device_info info; /* the merged, public record */
    gpo_route routes[GPO_MAX_ROUTES];
    int n_routes;
    /* Backend-specific facts, shown under "details" in JSON
     * ({"opencl": {"platform": ..., ...}, "cuda": {...}}). Owned. */
    cJSON *details;
    /* Estimates from the architecture tables, 0 when unknown: peak fp32
     * vector GFLOP/s; dense matrix-unit GFLOP/s by gpo_precision
     * ([GPO_PREC_FP32] unused); peak memory bandwidth in GB/s. Only
     * ranking (src/select.c) and the JSON use them. They are the primary
     * backend's own and never filled from another route, so a device ranks
     * the same whether or not OpenCL has been probed. */
    double est_gflops;
    double est_matrix_gflops[GPO_PREC_COUNT];
    double est_bandwidth_gbs;
    /* Copy engines that move data between host and device while kernels
     * run (CUDA's CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT, the KFD's
     * num_sdma_engines); 0 none, -1 unknown. The latency advice reads it
     * (src/latency.c: whether overlapping transfers pays). */
    int32_t copy_engines;
    /* Where the device sits (src/locality.c, from PCI sysfs): its NUMA
     * node, -1 unknown (the kernel's own -1 included), and the CPUs the
     * kernel calls local to it ("0-55,112-167"), "" unknown. */
    int32_t numa_node;
    char local_cpus[1024];
    /* The same CPUs as logical core indices (src/locality.h), "" unknown. */
    char local_cores[1024];
    /* The /dev node a job needs opened to use the device ("/dev/nvidia0",
     * "/dev/dri/renderD128"), "" when unknown or none: the backend fills it
     * from the driver's own numbering, and Slurm's gres.conf File= names it. */
    char device_file[64];
    struct gpuopt_context *ctx;
};

/* A new record with every fact "unknown" (-1, 0, "") and struct_size set.
 * NULL on allocation failure. */
gpuopt_device *gpo_device_new(void);

/* Frees the record, its details and every route's priv. NULL is fine. */
void gpo_device_free(gpuopt_device *dev);

/* The details object for `backend` ("opencl"), created on first use. NULL
 * on allocation failure. */
cJSON *gpo_device_details(gpuopt_device *dev, const char *backend);

/* Growable list of records; the list owns what is pushed. */
typedef struct gpo_device_list {
    gpuopt_device **items;
    size_t n;
    size_t cap;
} gpo_device_list;

/* Makes room for `more` further devices, so that that many pushes cannot
 * fail. GPUOPT_ERR_NO_MEMORY leaves the list as it was. */
gpuopt_status gpo_device_list_reserve(gpo_device_list *list, size_t more);

/* Appends `dev`; on allocation failure frees dev and returns
 * GPUOPT_ERR_NO_MEMORY. */
gpuopt_status gpo_device_list_push(gpo_device_list *list, gpuopt_device *dev);
void gpo_device_list_free(gpo_device_list *list);

/* 1 when a and b are the same physical device: equal UUIDs when both have
 * one (compared without the "GPU-" prefix, case-insensitively), else equal
 * PCI bus ids (normalised to dddd:bb:dd.f). */
int gpo_device_same_physical(const gpuopt_device_info *a, const gpuopt_device_info *b);

/* Merges `extra` (found by a secondary backend such as OpenCL) into `into`
 * as an extra route: the primary's facts win; empty facts are filled from
 * the extra's; details are combined. `extra` is consumed (freed). Returns
 * GPUOPT_ERR_OUT_OF_RANGE (and keeps extra intact) when `into` has no route
 * left. */
gpuopt_status gpo_device_merge(gpuopt_device *into, gpuopt_device *extra);

/* Normalises a PCI bus id ("3B:00.0", "0000:3b:00.0", "00000000:3B:00.0")
 * to "0000:3b:00.0". Returns -1 when it is not one. */
int gpo_pci_normalise(const char *in, char *out, size_t cap);

/* Rebuilds info.routes ("cuda,opencl") from the routes. */
void gpo_device_update_routes(gpuopt_device *dev);

/* 1 when a route's compiler no longer targets the device (the backends'
 * toolchain_dropped, src/backend.h): `why` (cap > 0) gets "<backend>: the
 * reason" of each route that says so, "; "-joined. 0 when none does or
 * none can tell. */
int gpo_device_toolchain_dropped(const gpuopt_device *dev, char *why, size_t cap);

#endif
