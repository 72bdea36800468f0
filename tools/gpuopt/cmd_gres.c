/* gpuopt gres: Slurm's gres.conf lines for this node's GPUs, and the Gres=
 * count its slurm.conf NodeName line needs, from the same detection as
 * `gpuopt devices` (docs/fleet.md).
 *
 * Syntax: gres.conf(5) and slurm.conf(5) of Slurm 22.05 (Debian 12) to
 * 26.11 (SchedMD/slurm doc/man/man5): per GPU `NodeName= Name=gpu Type=
 * File= Cores=`; `Gres=gpu:TYPE:COUNT[,...]` on the node's slurm.conf line
 * with `GresTypes=gpu`. Type is the product name as Slurm's NVML plugin
 * writes it (lower case, spaces to '_': src/plugins/gpu/common/
 * gpu_common.c, gpu_common_underscorify_tolower), so the lines agree with
 * AutoDetect=nvml where both run. File is the device node the driver
 * numbers (/dev/nvidiaN, /dev/dri/renderDN), which Slurm's cgroup device
 * constraint opens for the job. Cores are logical core numbers (gres.conf
 * Cores: "Core 0 will be the first core on the first socket"), the GPU's
 * NUMA node's. tests/cli/test_fleet.sh checks the output with Debian's
 * slurmd -G. */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* Type=: lower case, spaces to '_' (Slurm's own rule); a character that
 * would end the Gres= field or the line (',', ':', '=', '#') or is not
 * printable becomes '_' too. */
static void slurm_type(const char *name, char *out, size_t cap)
{
    size_t n = 0;
    for (; name && *name && n + 1 < cap; name++) {
        unsigned char c = (unsigned char)*name;
        out[n++] =
            isalnum(c) || c == '-' || c == '.' || c == '_' || c == '+' || c == '(' || c == ')'
                ? (char)tolower(c)
                : '_';
    }
    out[n] = '\0';
    if (!n)
        snprintf(out, cap, "gpu");
}

/* Slurm's NodeName: the short host name (slurmd compares it with
 * gethostname() cut at the first '.'). */
static void short_hostname(char *out, size_t cap)
{
    if (gethostname(out, cap) != 0 || !*out)
        snprintf(out, cap, "localhost");
    out[cap - 1] = '\0';
    char *dot = strchr(out, '.');
    if (dot)
        *dot = '\0';
}

static int name_ok(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_' && *s != '.')
            return 0;
    return 1;
}

static int run(int argc, char **argv)
{
    const char *backends = NULL, *node_name = NULL;
    const cli_option options[] = {
        {"node", 'n', "NAME", &node_name},
        {"backend", 'b', "LIST", &backends},
        {"help", 'h', NULL, NULL},
        {0},
    };
    int rc = cli_parse(&cli_gres, options, argc, argv);
    if (rc != CLI_OPTS_END)
        return rc;
    char host[256];
    if (!node_name) {
        short_hostname(host, sizeof host);
        node_name = host;
    }
    if (!name_ok(node_name))
        return cli_usage_error("gres",
                               "--node %s: a Slurm node name is letters, digits, '-', "
                               "'_' and '.'",
                               node_name);
    cli_node node;
    rc = cli_node_read("gres", backends, &node);
    if (rc) {
        cli_node_free(&node);
        return rc;
    }
    /* The counts per Type, for slurm.conf, in the order first seen. */
    char types[CLI_NODE_MAX_GPUS][128];
    int counts[CLI_NODE_MAX_GPUS], n_types = 0, listed = 0;
    printf("# gres.conf lines for Slurm node %s, written by gpuopt %s (docs/fleet.md)\n", node_name,
           gpuopt_version());
    for (int i = 0; i < node.n; i++) {
        const cJSON *d = node.gpus[i];
        const char *file = cli_json_str(d, "device_file"), *cores = cli_json_str(d, "local_cores");
        const char *id = cli_json_str(d, "id"), *name = cli_json_str(d, "name");
        if (!file) {
            printf("# %s (%s): left out, its device file is unknown\n", id ? id : "?",
                   name ? name : "unnamed");
            continue;
        }
        char type[128];
        slurm_type(name, type, sizeof type);
        printf("NodeName=%s Name=gpu Type=%s File=%s", node_name, type, file);
        if (cores)
            printf(" Cores=%s", cores);
        printf("\n");
        if (!cores)
            printf("# %s: Cores= left out, which CPUs are next to it is unknown\n", id ? id : "?");
        int t = 0;
        while (t < n_types && strcmp(types[t], type) != 0)
            t++;
        if (t == n_types) {
            snprintf(types[t], sizeof types[t], "%s", type);
            counts[t] = 0;
            n_types++;
        }
        counts[t]++;
        listed++;
    }
    if (!listed) {
        printf("# no GPU with a device file here: nothing for gres.conf\n");
    } else {
        printf("# slurm.conf: GresTypes=gpu, and on this node's line:\n# NodeName=%s Gres=",
               node_name);
        for (int t = 0; t < n_types; t++)
            printf("%sgpu:%s:%d", t ? "," : "", types[t], counts[t]);
        printf("\n");
    }
    cli_node_free(&node);
    return CLI_OK;
}

const cli_command cli_gres = {
    "gres", "Slurm gres.conf lines (and the slurm.conf Gres= count) for this node's GPUs",
    "usage: gpuopt gres [-n|--node NAME] [-b|--backend LIST]\n\n"
    "Prints one gres.conf line per GPU, NVIDIA and AMD alike, from the same detection\n"
    "as 'gpuopt devices': Name=gpu, Type from the product (as Slurm's NVML plugin\n"
    "names it), File the device node, Cores the logical cores of its NUMA node; then,\n"
    "as a comment, the Gres= count slurm.conf's NodeName line needs. docs/fleet.md\n"
    "shows a cluster generating gres.conf per node.\n\n"
    "  -n, --node NAME      the Slurm node name (default: the short host name, as slurmd)\n"
    "  -b, --backend LIST   only these backends, like GPUOPT_BACKEND\n",
    run};
