/* The floor for `gpuopt devices --json` with only OpenCL: open the ICD
 * loader and list every platform's devices, nothing else. Whatever this
 * costs is the drivers' own start-up (PoCL starts LLVM in clGetPlatformIDs). */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef cl_int (*get_platforms_fn)(cl_uint, cl_platform_id *, cl_uint *);
typedef cl_int (*get_devices_fn)(cl_platform_id, cl_device_type, cl_uint, cl_device_id *,
                                 cl_uint *);

int main(void)
{
    void *lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return 1;
    get_platforms_fn get_platforms;
    get_devices_fn get_devices;
    void *p = dlsym(lib, "clGetPlatformIDs"), *d = dlsym(lib, "clGetDeviceIDs");
    if (!p || !d)
        return 1;
    memcpy(&get_platforms, &p, sizeof p);
    memcpy(&get_devices, &d, sizeof d);
    cl_platform_id plats[16];
    cl_uint n = 0, total = 0;
    if (get_platforms(16, plats, &n) != CL_SUCCESS)
        return 1;
    for (cl_uint i = 0; i < n && i < 16; i++) {
        cl_device_id devs[64];
        cl_uint k = 0;
        if (get_devices(plats[i], CL_DEVICE_TYPE_ALL, 64, devs, &k) == CL_SUCCESS)
            total += k;
    }
    printf("%u platforms, %u devices\n", n, total);
    return 0;
}
