/* The backend's view of PoCL equals clinfo's: compute units, memory, the
 * work-group limits, the preferred multiple and every version string, read
 * from `clinfo --json` on the same machine in the same run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ocl_test.h"
#include "cl_device.h"
#include "util/strutil.h"

static cJSON *run_clinfo(void)
{
    FILE *p = popen(GPO_CLINFO " --json", "r");
    assert_non_null(p);
    gpo_sbuf b;
    gpo_sbuf_init(&b);
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk - 1, p)) > 0) {
        chunk[n] = '\0';
        gpo_sbuf_append(&b, chunk);
    }
    assert_int_equal(pclose(p), 0);
    char *text = gpo_sbuf_take(&b);
    assert_non_null(text);
    cJSON *j = cJSON_Parse(text);
    free(text);
    assert_non_null(j);
    return j;
}

static const cJSON *item(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v)
        fail_msg("clinfo gives no %s", key);
    return v;
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = item(o, key);
    if (cJSON_IsBool(v))
        return cJSON_IsTrue(v) ? 1 : 0;
    assert_true(cJSON_IsNumber(v));
    return v->valuedouble;
}

/* clinfo prints strings as the driver returns them; the backend trims. */
static void assert_same_text(const cJSON *o, const char *key, const char *ours)
{
    const cJSON *v = item(o, key);
    assert_true(cJSON_IsString(v));
    char *t = gpo_strdup(v->valuestring);
    assert_non_null(ours);
    if (strcmp(gpo_trim(t), ours) != 0)
        fail_msg("%s: clinfo says \"%s\", the backend \"%s\"", key, t, ours);
    free(t);
}

static const char *ours_str(const gpuopt_device *d, const char *key)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(d->details, "opencl");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double ours_num(const gpuopt_device *d, const char *key)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(d->details, "opencl");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (cJSON_IsBool(v))
        return cJSON_IsTrue(v) ? 1 : 0;
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static void pocl_device_matches_clinfo(void **state)
{
    (void)state;
    ocl_fx fx;
    ocl_fx_init(&fx, NULL);
    assert_int_equal(ocl_fx_open(&fx), GPUOPT_OK);
    cJSON *ci = run_clinfo();
    const cJSON *plats = item(ci, "platforms"), *devs = item(ci, "devices");
    int checked = 0;
    for (int p = 0; p < cJSON_GetArraySize(plats); p++) {
        const cJSON *cp = cJSON_GetArrayItem(plats, p);
        const cJSON *online = item(cJSON_GetArrayItem(devs, p), "online");
        if (!strstr(item(cp, "CL_PLATFORM_NAME")->valuestring, "Portable Computing Language"))
            continue;
        for (int d = 0; d < cJSON_GetArraySize(online); d++) {
            const cJSON *cd = cJSON_GetArrayItem(online, d);
            const char *name = item(cd, "CL_DEVICE_NAME")->valuestring;
            const gpuopt_device *dev = NULL;
            for (size_t i = 0; i < fx.list.n; i++) {
                const char *n = ours_str(fx.list.items[i], "device_name");
                const char *pn = ours_str(fx.list.items[i], "platform_name");
                if (n && pn && strcmp(n, name) == 0 && strstr(pn, "Portable Computing"))
                    dev = fx.list.items[i];
            }
            if (!dev)
                fail_msg("the backend does not list clinfo's PoCL device \"%s\"", name);
            const gpuopt_device_info *in = &dev->info;
            assert_int_equal(in->compute_units, (int32_t)num(cd, "CL_DEVICE_MAX_COMPUTE_UNITS"));
            assert_int_equal(in->clock_mhz, (int32_t)num(cd, "CL_DEVICE_MAX_CLOCK_FREQUENCY"));
            assert_int_equal(in->memory_bytes, (uint64_t)num(cd, "CL_DEVICE_GLOBAL_MEM_SIZE"));
            assert_int_equal(in->shared_mem_per_block,
                             (uint64_t)num(cd, "CL_DEVICE_LOCAL_MEM_SIZE"));
            assert_int_equal(in->l2_bytes, (uint64_t)num(cd, "CL_DEVICE_GLOBAL_MEM_CACHE_SIZE"));
            assert_int_equal(in->max_threads_per_block,
                             (int32_t)num(cd, "CL_DEVICE_MAX_WORK_GROUP_SIZE"));
            assert_int_equal(in->ecc, (int32_t)num(cd, "CL_DEVICE_ERROR_CORRECTION_SUPPORT"));
            assert_int_equal(in->integrated, (int32_t)num(cd, "CL_DEVICE_HOST_UNIFIED_MEMORY"));
            assert_int_equal((uint64_t)ours_num(dev, "max_mem_alloc_bytes"),
                             (uint64_t)num(cd, "CL_DEVICE_MAX_MEM_ALLOC_SIZE"));
            assert_int_equal((int64_t)ours_num(dev, "vendor_id"),
                             (int64_t)num(cd, "CL_DEVICE_VENDOR_ID"));
            const cJSON *sizes = item(cd, "CL_DEVICE_MAX_WORK_ITEM_SIZES");
            const cJSON *o = cJSON_GetObjectItemCaseSensitive(dev->details, "opencl");
            const cJSON *mine = cJSON_GetObjectItemCaseSensitive(o, "max_work_item_sizes");
            assert_int_equal(cJSON_GetArraySize(mine), cJSON_GetArraySize(sizes));
            for (int k = 0; k < cJSON_GetArraySize(sizes); k++)
                assert_int_equal(cJSON_GetArrayItem(mine, k)->valuedouble,
                                 cJSON_GetArrayItem(sizes, k)->valuedouble);
            /* The device's own property where clinfo has it (OpenCL 3.0),
             * else what clinfo's kernel says. */
            const char *pk =
                cJSON_GetObjectItemCaseSensitive(cd, "CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE")
                    ? "CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE"
                    : "CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE";
            ocl_facts *f = &((ocl_dev_priv *)dev->routes[0].priv)->facts;
            if (f->pref_source == OCL_PREF_UNKNOWN)
                assert_int_equal(gpo_ocl_probe_preferred_multiple(&((ocl_state *)fx.state)->api, f),
                                 GPUOPT_OK);
            assert_int_equal(f->pref_multiple, (int64_t)num(cd, pk));
            assert_same_text(cd, "CL_DEVICE_VERSION", ours_str(dev, "device_version"));
            assert_same_text(cd, "CL_DEVICE_OPENCL_C_VERSION", ours_str(dev, "opencl_c_version"));
            assert_same_text(cd, "CL_DRIVER_VERSION", ours_str(dev, "driver_version"));
            assert_same_text(cd, "CL_DEVICE_VENDOR", ours_str(dev, "device_vendor"));
            assert_same_text(cd, "CL_DEVICE_PROFILE", ours_str(dev, "profile"));
            assert_same_text(cp, "CL_PLATFORM_NAME", ours_str(dev, "platform_name"));
            assert_same_text(cp, "CL_PLATFORM_VENDOR", ours_str(dev, "platform_vendor"));
            assert_same_text(cp, "CL_PLATFORM_VERSION", ours_str(dev, "platform_version"));
            assert_same_text(cd, "CL_DRIVER_VERSION", in->driver_version);
            checked++;
        }
    }
    if (checked == 0)
        fail_msg("clinfo shows no PoCL device (is pocl-opencl-icd installed?)");
    cJSON_Delete(ci);
    ocl_fx_free(&fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pocl_device_matches_clinfo),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
