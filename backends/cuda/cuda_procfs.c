/* The NVIDIA kernel module's own description of its GPUs, for when
 * libcuda.so.1 cannot be used: /proc/driver/nvidia/gpus/<bus id>/information
 * and /proc/driver/nvidia/version. The format is what the module prints
 * (NVIDIA open-gpu-kernel-modules, kernel-open/nvidia/nv-procfs.c:
 * nv_procfs_read_gpu_info and nv_procfs_read_version): "Key: \t value", one
 * per line. All reads go through gpo_fs (GPUOPT_SYSFS_ROOT). */
#include <ctype.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"
#include "util/strutil.h"

#define GPUS_DIR "/proc/driver/nvidia/gpus"

gpuopt_status gpo_cuda_procfs_scan(const gpo_fs *fs, gpo_cuda_state *s)
{
    char **names = NULL, path[GPO_PATH_MAX];
    size_t n = 0, kept = 0;
    gpo_fs_list_free(s->kernel_gpus, s->n_kernel_gpus);
    s->kernel_gpus = NULL;
    s->n_kernel_gpus = 0;
    if (gpo_fs_list(fs, GPUS_DIR, &names, &n) != GPUOPT_OK)
        return GPUOPT_ERR_NOT_FOUND;
    /* Keep the entries that are GPUs (hold an information file). The list
     * is sorted by name, which for bus ids is PCI order. */
    for (size_t i = 0; i < n; i++) {
        gpo_snprintf(path, sizeof path, GPUS_DIR "/%s/information", names[i]);
        if (gpo_fs_exists(fs, path))
            names[kept++] = names[i];
        else
            free(names[i]);
    }
    if (!kept) {
        gpo_fs_list_free(names, 0);
        return GPUOPT_ERR_NOT_FOUND;
    }
    s->kernel_gpus = names;
    s->n_kernel_gpus = kept;
    return GPUOPT_OK;
}

void gpo_cuda_procfs_version(const gpo_fs *fs, char *out, size_t cap)
{
    char text[1024];
    gpo_strlcpy(out, "", cap);
    if (gpo_fs_read(fs, "/proc/driver/nvidia/version", text, sizeof text) != GPUOPT_OK)
        return;
    /* "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug ..."
     * or "... Open Kernel Module for x86_64  580.65.06  Release Build ...":
     * the version is the first word made of digits and at least one dot. */
    char *line_end = strchr(text, '\n');
    if (line_end)
        *line_end = '\0';
    const char *p = strstr(text, "NVRM version:");
    if (!p)
        return;
    for (p += 13; *p; p++) {
        if (!isdigit((unsigned char)*p) || (p[-1] != ' ' && p[-1] != '\t'))
            continue;
        size_t len = strspn(p, "0123456789.");
        if (memchr(p, '.', len) && (p[len] == '\0' || isspace((unsigned char)p[len]))) {
            gpo_snprintf(out, cap, "%.*s", (int)len, p);
            return;
        }
    }
}

/* The fields of an information file the record uses. */
typedef struct gpu_info {
    char model[256];
    char uuid[64];
    char bus[32];
    char vbios[64];
    char bus_type[16];
    char irq[16];
    char minor[16];
    char firmware[64];
    char excluded[8];
} gpu_info;

static const struct info_key {
    const char *key;
    size_t offset, size;
} info_keys[] = {
#define KEY_(k, f)                                                                                 \
    {                                                                                              \
        k, offsetof(gpu_info, f), sizeof(((gpu_info *)0)->f)                                       \
    }
    KEY_("Model", model),        KEY_("GPU UUID", uuid),         KEY_("Bus Location", bus),
    KEY_("Video BIOS", vbios),   KEY_("Bus Type", bus_type),     KEY_("IRQ", irq),
    KEY_("Device Minor", minor), KEY_("GPU Firmware", firmware), KEY_("GPU Excluded", excluded),
#undef KEY_
};

static void parse_info(char *text, gpu_info *gi)
{
    char *save = NULL;
    memset(gi, 0, sizeof *gi);
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        *colon = '\0';
        char *key = gpo_trim(line), *value = gpo_trim(colon + 1);
        for (size_t i = 0; i < sizeof info_keys / sizeof info_keys[0]; i++)
            if (strcmp(key, info_keys[i].key) == 0)
                gpo_strlcpy((char *)gi + info_keys[i].offset, value, info_keys[i].size);
    }
}

/* A UUID the module knows: "GPU-" and hex; drivers print question marks
 * for a GPU not yet initialised ("GPU-????????-????-...") . */
static int uuid_known(const char *u)
{
    if (strncmp(u, "GPU-", 4) != 0 || strlen(u) < 8)
        return 0;
    for (const char *p = u + 4; *p; p++)
        if (!isxdigit((unsigned char)*p) && *p != '-')
            return 0;
    return 1;
}

static int add_str(cJSON *d, const char *key, const char *value)
{
    if (!value[0])
        return 0;
    return cJSON_AddStringToObject(d, key, value) ? 0 : -1;
}

static gpuopt_status kernel_device(gpo_cuda_state *s, const gpo_fs *fs, size_t i,
                                   gpo_device_list *out)
{
    const char *busdir = s->kernel_gpus[i];
    gpuopt_device *dev = NULL;
    char *text = NULL, path[GPO_PATH_MAX], pci_id[32] = "";
    gpu_info gi;
    gpuopt_status st = gpo_cuda_device_new((int)i, &dev);
    if (st)
        goto out;
    gpuopt_device_info *in = &dev->info;

    gpo_snprintf(path, sizeof path, GPUS_DIR "/%s/information", busdir);
    if (gpo_fs_read_alloc(fs, path, &text, NULL) == GPUOPT_OK)
        parse_info(text, &gi);
    else
        memset(&gi, 0, sizeof gi);

    gpo_strlcpy(in->name, gi.model[0] ? gi.model : "NVIDIA GPU", sizeof in->name);
    if (uuid_known(gi.uuid))
        gpo_strlcpy(in->uuid, gi.uuid, sizeof in->uuid);
    /* The directory is named by the bus id; the file says it again. */
    if (gpo_pci_normalise(gi.bus, in->pci_bus_id, sizeof in->pci_bus_id) != 0 &&
        gpo_pci_normalise(busdir, in->pci_bus_id, sizeof in->pci_bus_id) != 0)
        in->pci_bus_id[0] = '\0';
    gpo_strlcpy(in->driver_version, s->kernel_version, sizeof in->driver_version);
    if (in->pci_bus_id[0])
        gpo_fs_readf(fs, pci_id, sizeof pci_id, "/sys/bus/pci/devices/%s/device", in->pci_bus_id);

    cJSON *d = gpo_device_details(dev, "cuda");
    int bad = !d;
    if (d) {
        bad |= !cJSON_AddStringToObject(d, "source", "kernel");
        bad |= !cJSON_AddBoolToObject(d, "usable", 0);
        bad |= !cJSON_AddStringToObject(d, "unusable_because", s->why_unusable);
        bad |= add_str(d, "kernel_driver_version", s->kernel_version);
        bad |= add_str(d, "video_bios", gi.vbios);
        bad |= add_str(d, "bus_type", gi.bus_type);
        bad |= add_str(d, "device_minor", gi.minor);
        bad |= add_str(d, "gpu_firmware", gi.firmware);
        bad |= add_str(d, "pci_device_id", pci_id);
        if (gi.excluded[0])
            bad |= !cJSON_AddBoolToObject(d, "excluded", strcmp(gi.excluded, "Yes") == 0);
    }
    if (bad) {
        st = gpo_fail(GPUOPT_ERR_NO_MEMORY, "cuda: out of memory describing GPU %s", busdir);
        goto out;
    }
    st = gpo_device_list_push(out, dev);
    dev = NULL;
    if (st)
        st = gpo_fail(st, "cuda: out of memory listing GPU %s", busdir);
out:
    free(text);
    gpo_device_free(dev);
    return st;
}

gpuopt_status gpo_cuda_enumerate_kernel(gpo_cuda_state *s, const gpo_backend_env *env,
                                        gpo_device_list *out)
{
    for (size_t i = 0; i < s->n_kernel_gpus; i++) {
        gpuopt_status st = kernel_device(s, gpo_env_fs(env), i, out);
        if (st)
            return st;
    }
    gpo_log_debug(gpo_env_log(env), "cuda: %zu GPU%s from the kernel module only", s->n_kernel_gpus,
                  s->n_kernel_gpus == 1 ? "" : "s");
    return GPUOPT_OK;
}
