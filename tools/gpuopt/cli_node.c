/* The node's GPUs as the commands that describe a node to a scheduler
 * (labels, gres) see them: the device list of gpuopt_context_to_json,
 * GPUs only, in the library's order. */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

int cli_node_read(const char *cmd, const char *backends, cli_node *node)
{
    memset(node, 0, sizeof *node);
    char *text = NULL;
    /* Every GPU of the node, whichever a selector would pick. */
    int rc = cli_context_json(cmd, backends, 0, gpuopt_context_to_json, "cannot list devices", 1,
                              &node->ctx, &text, &node->root);
    gpuopt_free(text);
    if (rc)
        return rc;
    const cJSON *d;
    cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(node->root, "devices"))
    {
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(d, "type");
        if (cJSON_IsString(type) && strcmp(type->valuestring, "gpu") == 0 &&
            node->n < CLI_NODE_MAX_GPUS)
            node->gpus[node->n++] = d;
    }
    return CLI_OK;
}

void cli_node_free(cli_node *node)
{
    cJSON_Delete(node->root);
    gpuopt_context_destroy(node->ctx);
    memset(node, 0, sizeof *node);
}

const char *cli_str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

const char *cli_json_str(const cJSON *o, const char *key)
{
    const char *s = cli_str(o, key);
    return s && *s ? s : NULL;
}

double cli_num(const cJSON *o, const char *key, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

const char *cli_vendor_word(const cJSON *dev)
{
    static const struct {
        const char *contains, *word;
    } vendors[] = {
        /* The driver's vendor strings: CUDA and NVML "NVIDIA", KFD/HIP "AMD",
         * OpenCL "NVIDIA Corporation", "Advanced Micro Devices, Inc.",
         * "Intel(R) Corporation". */
        {"nvidia", "nvidia"},
        {"advanced micro devices", "amd"},
        {"amd", "amd"},
        {"intel", "intel"},
    };
    const char *v = cli_json_str(dev, "vendor");
    char lower[128] = "";
    for (size_t i = 0; v && v[i] && i + 1 < sizeof lower; i++) {
        lower[i] = (char)tolower((unsigned char)v[i]);
        lower[i + 1] = '\0';
    }
    for (size_t i = 0; i < sizeof vendors / sizeof vendors[0]; i++)
        if (strstr(lower, vendors[i].contains))
            return vendors[i].word;
    return "other";
}
