/* The NVIDIA kernel module's files, read (see cuda_procfs.h). */
#include "cuda_procfs.h"

#include <ctype.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"

gpuopt_status gpo_cuda_procfs_gpus(const gpo_fs *fs, char ***bus_ids, size_t *n_out)
{
    char **names = NULL, path[GPO_PATH_MAX];
    size_t n = 0, kept = 0;
    *bus_ids = NULL;
    *n_out = 0;
    if (gpo_fs_list(fs, GPO_CUDA_PROCFS_GPUS, &names, &n) != GPUOPT_OK)
        return GPUOPT_ERR_NOT_FOUND;
    /* Keep the entries that are GPUs (hold an information file). The list
     * is sorted by name, which for bus ids is PCI order. */
    for (size_t i = 0; i < n; i++) {
        gpo_snprintf(path, sizeof path, GPO_CUDA_PROCFS_GPUS "/%s/information", names[i]);
        if (gpo_fs_exists(fs, path))
            names[kept++] = names[i];
        else
            free(names[i]);
    }
    if (!kept) {
        gpo_fs_list_free(names, 0);
        return GPUOPT_ERR_NOT_FOUND;
    }
    *bus_ids = names;
    *n_out = kept;
    return GPUOPT_OK;
}

int gpo_cuda_procfs_version_line(const gpo_fs *fs, char *line, size_t cap)
{
    char text[1024];
    gpo_strlcpy(line, "", cap);
    if (gpo_fs_read(fs, GPO_CUDA_PROCFS_VERSION, text, sizeof text) != GPUOPT_OK)
        return -1;
    char *end = strchr(text, '\n');
    if (end)
        *end = '\0';
    gpo_strlcpy(line, text, cap);
    return 0;
}

void gpo_cuda_procfs_parse_version(const char *line, char *out, size_t cap)
{
    gpo_strlcpy(out, "", cap);
    /* "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug ..."
     * or "... Open Kernel Module for x86_64  580.65.06  Release Build ...":
     * the version is the first word made of digits and at least one dot. */
    const char *p = strstr(line, "NVRM version:");
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

void gpo_cuda_procfs_version(const gpo_fs *fs, char *out, size_t cap)
{
    char line[1024];
    gpo_cuda_procfs_version_line(fs, line, sizeof line);
    gpo_cuda_procfs_parse_version(line, out, cap);
}

static const struct info_key {
    const char *key;
    size_t offset, size;
} info_keys[] = {
#define KEY_(k, f)                                                                                 \
    {                                                                                              \
        k, offsetof(gpo_cuda_gpu_info, f), sizeof(((gpo_cuda_gpu_info *)0)->f)                     \
    }
    KEY_("Model", model),           KEY_("GPU UUID", uuid),         KEY_("Bus Location", bus),
    KEY_("Video BIOS", vbios),      KEY_("Bus Type", bus_type),     KEY_("Device Minor", minor),
    KEY_("GPU Firmware", firmware), KEY_("GPU Excluded", excluded),
#undef KEY_
};

int gpo_cuda_procfs_gpu(const gpo_fs *fs, const char *bus_id, gpo_cuda_gpu_info *gi)
{
    char path[GPO_PATH_MAX], *text = NULL, *save = NULL;
    memset(gi, 0, sizeof *gi);
    gpo_snprintf(path, sizeof path, GPO_CUDA_PROCFS_GPUS "/%s/information", bus_id);
    if (gpo_fs_read_alloc(fs, path, &text, NULL) != GPUOPT_OK)
        return -1;
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
    free(text);
    return 0;
}

void gpo_cuda_procfs_device_file(const gpo_fs *fs, const char *bus_id, char *out, size_t cap)
{
    gpo_cuda_gpu_info gi;
    out[0] = '\0';
    if (!bus_id[0] || gpo_cuda_procfs_gpu(fs, bus_id, &gi) != 0 || !gi.minor[0])
        return;
    for (const char *p = gi.minor; *p; p++)
        if (!isdigit((unsigned char)*p))
            return;
    gpo_snprintf(out, cap, "/dev/nvidia%s", gi.minor);
}

int gpo_cuda_procfs_uuid_known(const char *u)
{
    if (strncmp(u, "GPU-", 4) != 0 || strlen(u) < 8)
        return 0;
    for (const char *p = u + 4; *p; p++)
        if (!isxdigit((unsigned char)*p) && *p != '-')
            return 0;
    return 1;
}
