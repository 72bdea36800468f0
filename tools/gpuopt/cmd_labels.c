/* gpuopt labels: the node's GPUs as Kubernetes node labels, in the format
 * of Node Feature Discovery's local feature files (or JSON for other
 * tools), from the same detection as `gpuopt devices` (docs/fleet.md).
 *
 * The feature-file format is NFD's (kubernetes-sigs/node-feature-discovery
 * docs/usage/customization-guide.md, "Feature files"; parser
 * source/local/local.go): one `name=value` per line, `#` starts a comment,
 * `# +` starts a directive (ours never do), files whose names start with
 * '.' are skipped, so --output writes ".NAME.tmp" and renames it.
 *
 * Label syntax is Kubernetes' (kubernetes/kubernetes
 * staging/src/k8s.io/apimachinery/pkg/util/validation, IsQualifiedName and
 * IsValidLabelValue): a name part and a value of at most 63 characters,
 * [A-Za-z0-9] at both ends, '-', '_', '.' and alphanumerics between; the
 * prefix a DNS subdomain of at most 253. Every value is made to fit here,
 * and tests/cli/test_fleet.sh checks the output against those rules. */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* NFD allows sub-namespaces of feature.node.kubernetes.io in every version
 * without -extra-label-ns (before v0.13 it allowed nothing else by default),
 * and no other labeller writes this one. */
#define DEFAULT_PREFIX "gpuopt.feature.node.kubernetes.io"
#define MAX_LABELS 128
#define K8S_MAX 63

typedef struct label {
    char key[K8S_MAX + 1]; /* the name part, without the prefix */
    char value[K8S_MAX + 1];
} label;

typedef struct labels {
    label items[MAX_LABELS];
    int n;
} labels;

/* What the labels are made from: the device list and the tuning cache's
 * listing (NULL when it could not be read). */
typedef struct sources {
    const cJSON *devices_doc;
    const cJSON *cache_doc;
} sources;

/* Makes `in` a valid label value (or name part): as GPU Feature Discovery
 * writes products (NVIDIA k8s-device-plugin internal/lm/resource.go: spaces
 * become '-', characters outside [A-Za-z0-9-_.] go), then ends trimmed to
 * alphanumerics and the whole cut to `max`. "" when nothing is left. */
static void k8s_clean(const char *in, char *out, size_t max)
{
    size_t n = 0;
    for (; in && *in && n < max; in++) {
        unsigned char c = (unsigned char)*in;
        if (c == ' ')
            out[n++] = '-';
        else if (isalnum(c) && c < 0x80)
            out[n++] = (char)c;
        else if (c == '-' || c == '_' || c == '.')
            out[n++] = (char)c;
    }
    out[n] = '\0';
    while (n > 0 && !isalnum((unsigned char)out[n - 1]))
        out[--n] = '\0';
    size_t skip = 0;
    while (out[skip] && !isalnum((unsigned char)out[skip]))
        skip++;
    memmove(out, out + skip, n - skip + 1);
}

static void add(labels *l, const char *key, const char *value)
{
    if (l->n == MAX_LABELS)
        return;
    label *e = &l->items[l->n];
    k8s_clean(key, e->key, K8S_MAX);
    k8s_clean(value, e->value, K8S_MAX);
    if (e->key[0])
        l->n++;
}

static void addf(labels *l, const char *key, const char *fmt, double v)
{
    char text[64];
    snprintf(text, sizeof text, fmt, v);
    add(l, key, text);
}

typedef const char *(*getter)(const cJSON *dev, const sources *src, char *buf);

/* A label every GPU gives the same value: from `get`, else the device's
 * (or its `object`'s) `member`, a string, or a positive number in `unit`s. */
typedef struct common_label {
    const char *key;
    getter get;
    const char *object, *member;
    double unit;
} common_label;

static const char *label_value(const cJSON *d, const sources *src, const common_label *l, char *buf)
{
    if (l->get)
        return l->get(d, src, buf);
    const cJSON *o = l->object ? cJSON_GetObjectItemCaseSensitive(d, l->object) : d;
    if (!l->unit)
        return cli_json_str(o, l->member);
    double x = cli_num(o, l->member, 0);
    if (!(x > 0))
        return NULL;
    snprintf(buf, 64, "%.0f", x / l->unit);
    return buf;
}

/* The value every GPU gives, or NULL when they differ or one has none: a
 * node-wide label says what is true of each of its GPUs. */
static const char *common(const cli_node *node, const sources *src, const common_label *l,
                          char *buf, char *tmp)
{
    const char *first = NULL;
    for (int i = 0; i < node->n; i++) {
        const char *v = label_value(node->gpus[i], src, l, i ? tmp : buf);
        if (!v || (first && strcmp(first, v) != 0))
            return NULL;
        if (!i)
            first = v;
    }
    return first;
}

static const char *get_vendor(const cJSON *d, const sources *src, char *buf)
{
    (void)src;
    (void)buf;
    return cli_vendor_word(d);
}

static const char *get_product(const cJSON *d, const sources *src, char *buf)
{
    (void)src;
    k8s_clean(cli_json_str(d, "name"), buf, K8S_MAX);
    return buf[0] ? buf : NULL;
}

/* The major of the kernel driver's version where a backend read it (the
 * NVIDIA module's "580.65.06": details.cuda.kernel_driver_version), else
 * of the driver version the device's backend reports. */
static const char *get_driver_major(const cJSON *d, const sources *src, char *buf)
{
    const char *v = NULL;
    const cJSON *per_backend;
    cJSON_ArrayForEach(per_backend, cJSON_GetObjectItemCaseSensitive(d, "details"))
    {
        if (!v)
            v = cli_json_str(per_backend, "kernel_driver_version");
    }
    if (!v)
        v = cli_json_str(d, "driver_version");
    if (!v) {
        const cJSON *b;
        const char *backend = cli_json_str(d, "backend");
        cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(src->devices_doc, "backends"))
        {
            const char *name = cli_json_str(b, "name");
            if (backend && name && strcmp(name, backend) == 0)
                v = cli_json_str(b, "driver_version");
        }
    }
    if (!v || !isdigit((unsigned char)*v))
        return NULL;
    snprintf(buf, 64, "%ld", strtol(v, NULL, 10));
    return buf;
}

/* Measured memory bandwidth from the tuning cache (tier 2's
 * bench.memory_bandwidth record of this device, docs/tuning.md), as a
 * class: GB/s rounded down to a power of two, so that identical nodes
 * whose measurements differ by a few percent get the same label. */
static const char *get_bandwidth(const cJSON *d, const sources *src, char *buf)
{
    const char *uuid = cli_json_str(d, "uuid"), *pci = cli_json_str(d, "pci_bus_id");
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(src->cache_doc, "files"))
    {
        const cJSON *fp = cJSON_GetObjectItemCaseSensitive(f, "device");
        const char *fu = cli_json_str(fp, "uuid"), *fpci = cli_json_str(fp, "pci");
        if (!((uuid && fu && strcmp(uuid, fu) == 0) || (!fu && pci && fpci && !strcmp(pci, fpci))))
            continue;
        const cJSON *e;
        cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(f, "entries"))
        {
            const char *kind = cli_json_str(cJSON_GetObjectItemCaseSensitive(e, "hard"), "kind");
            if (!kind || strcmp(kind, "bench.memory_bandwidth") != 0)
                continue;
            const cJSON *k;
            cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(
                                      cJSON_GetObjectItemCaseSensitive(e, "payload"), "knobs"))
            {
                const char *name = cli_json_str(k, "name");
                double bps = cli_num(k, "value", 0);
                if (!name || strcmp(name, "measured.memory_bandwidth") != 0 || !(bps >= 1e9))
                    continue;
                double cls = 1;
                while (cls * 2 <= bps / 1e9)
                    cls *= 2;
                snprintf(buf, 64, "%.0f", cls);
                return buf;
            }
        }
    }
    return NULL;
}

/* A feature every GPU has (true), one some GPU lacks (false), or unknown
 * for one of them (no label). */
static void feature(labels *l, const cli_node *node, const char *key, const char *label_key)
{
    int all = 1;
    for (int i = 0; i < node->n; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(node->gpus[i], "features"), key);
        if (!cJSON_IsBool(v))
            return;
        all &= cJSON_IsTrue(v);
    }
    add(l, label_key, all ? "true" : "false");
}

static void build(const cli_node *node, const sources *src, labels *l)
{
    char buf[64], tmp[64];
    const char *v;
    addf(l, "gpu.count", "%.0f", node->n);
    if (!node->n)
        return;
    static const common_label common_labels[] = {
        {"gpu.vendor", get_vendor, NULL, NULL, 0},
        {"gpu.product", get_product, NULL, NULL, 0},
        {"gpu.family", NULL, "arch", "family", 0},
        {"gpu.arch", NULL, "arch", "name", 0},
        {"gpu.compute-capability", NULL, "arch", "compute_capability", 0},
        {"gpu.memory-mib", NULL, NULL, "memory_bytes", 1024.0 * 1024.0},
        {"gpu.compute-units", NULL, NULL, "compute_units", 1},
        {"gpu.driver-major", get_driver_major, NULL, NULL, 0},
        {"gpu.memory-bandwidth-gbs-class", get_bandwidth, NULL, NULL, 0},
    };
    for (size_t i = 0; i < sizeof common_labels / sizeof common_labels[0]; i++)
        if ((v = common(node, src, &common_labels[i], buf, tmp)))
            add(l, common_labels[i].key, v);
    /* How many of each product, as GFD's gpu.count and AMD's
     * <name>.<value>=<count> for a node of mixed GPUs. */
    int products = 0;
    for (int i = 0; i < node->n; i++) {
        char name[K8S_MAX + 1], other[K8S_MAX + 1];
        if (!get_product(node->gpus[i], src, name))
            continue;
        int seen = 0, count = 0;
        for (int k = 0; k < node->n; k++)
            if (get_product(node->gpus[k], src, other) && strcmp(name, other) == 0) {
                seen |= k < i;
                count++;
            }
        if (seen)
            continue;
        char key[128];
        snprintf(key, sizeof key, "gpu.count.%s", name);
        addf(l, key, "%.0f", count);
        products++;
    }
    if (products > 1)
        add(l, "gpu.heterogeneous", "true");
    static const char *const features[][2] = {
        {"fp64", "gpu.fp64"},
        {"fp16", "gpu.fp16"},
        {"bf16", "gpu.bf16"},
        {"tf32", "gpu.tf32"},
        {"fp8", "gpu.fp8"},
        {"int8", "gpu.int8"},
        {"matrix_units", "gpu.matrix-units"},
    };
    for (size_t i = 0; i < sizeof features / sizeof features[0]; i++)
        feature(l, node, features[i][0], features[i][1]);
}

static char *render(const labels *l, const char *prefix, int json, int gpus)
{
    if (json) {
        cJSON *root = cJSON_CreateObject(), *obj = NULL;
        if (root && cJSON_AddStringToObject(root, "prefix", prefix) &&
            (obj = cJSON_AddObjectToObject(root, "labels"))) {
            char key[512];
            for (int i = 0; i < l->n; i++) {
                snprintf(key, sizeof key, "%s/%s", prefix, l->items[i].key);
                if (!cJSON_AddStringToObject(obj, key, l->items[i].value))
                    break;
            }
        }
        char *text = obj ? cJSON_Print(root) : NULL;
        cJSON_Delete(root);
        return text;
    }
    size_t cap = 256 + (size_t)l->n * (strlen(prefix) + 2 * K8S_MAX + 4);
    char *text = malloc(cap);
    if (!text)
        return NULL;
    size_t used = (size_t)snprintf(text, cap,
                                   "# Node Feature Discovery feature file written by gpuopt %s: "
                                   "%d GPU%s (docs/fleet.md)\n",
                                   gpuopt_version(), gpus, gpus == 1 ? "" : "s");
    for (int i = 0; i < l->n && used < cap; i++)
        used += (size_t)snprintf(text + used, cap - used, "%s/%s=%s\n", prefix, l->items[i].key,
                                 l->items[i].value);
    return text;
}

/* Writes `text` to `path` whole or not at all: a hidden temporary file in
 * the same directory (NFD skips names starting with '.'), fsync, rename. */
static int write_atomic(const char *path, const char *text)
{
    char tmp[4096];
    const char *slash = strrchr(path, '/');
    int dir_len = slash ? (int)(slash - path + 1) : 0;
    if (snprintf(tmp, sizeof tmp, "%.*s.%s.tmp", dir_len, path, slash ? slash + 1 : path) >=
        (int)sizeof tmp) {
        fprintf(stderr, "gpuopt labels: --output %s: the path is too long\n", path);
        return CLI_FAIL;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "gpuopt labels: cannot write %s: %s\n", tmp, strerror(errno));
        return CLI_FAIL;
    }
    size_t len = strlen(text), done = 0;
    while (done < len) {
        ssize_t w = write(fd, text + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    int err = done < len ? errno : 0;
    if (!err && fsync(fd) != 0)
        err = errno;
    if (close(fd) != 0 && !err)
        err = errno;
    if (!err && rename(tmp, path) != 0)
        err = errno;
    if (err) {
        unlink(tmp);
        fprintf(stderr, "gpuopt labels: cannot write %s: %s (nothing was changed)\n", path,
                strerror(err ? err : EIO));
        return CLI_FAIL;
    }
    return CLI_OK;
}

/* A prefix Kubernetes takes (a DNS-1123 subdomain of at most 253
 * characters) and NFD does not deny (kubernetes.io and k8s.io are
 * Kubernetes' own, except NFD's feature.node.kubernetes.io). */
static int prefix_ok(const char *p)
{
    size_t n = strlen(p);
    if (!n || n > 253)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        int alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (!alnum && c != '-' && c != '.')
            return 0;
        if (c != '-' && !alnum && (i == 0 || p[i - 1] == '.' || p[i - 1] == '-'))
            return 0; /* "..", ".-", a leading '.' */
        if (c == '-' && (i == 0 || p[i - 1] == '.'))
            return 0;
    }
    if (p[n - 1] == '-' || p[n - 1] == '.')
        return 0;
    static const char fnk[] = "feature.node.kubernetes.io";
    size_t f = sizeof fnk - 1;
    int under_fnk = n >= f && strcmp(p + n - f, fnk) == 0 && (n == f || p[n - f - 1] == '.');
    for (const char *const *r = (const char *const[]){"kubernetes.io", "k8s.io", NULL}; *r; r++) {
        size_t rn = strlen(*r);
        if (n >= rn && strcmp(p + n - rn, *r) == 0 && (n == rn || p[n - rn - 1] == '.') &&
            !under_fnk)
            return 0;
    }
    return 1;
}

static int run(int argc, char **argv)
{
    const char *backends = NULL, *output = NULL, *prefix = DEFAULT_PREFIX, *format = "nfd";
    const cli_option options[] = {
        {"format", 'f', "nfd|json", &format},
        {"output", 'o', "FILE", &output},
        {"prefix", 'p', "DOMAIN", &prefix},
        {"backend", 'b', "LIST", &backends},
        {"help", 'h', NULL, NULL},
        {0},
    };
    int rc = cli_parse(&cli_labels, options, argc, argv);
    if (rc != CLI_OPTS_END)
        return rc;
    int json = strcmp(format, "json") == 0;
    if (!json && strcmp(format, "nfd") != 0)
        return cli_usage_error("labels", "--format %s: accepted nfd (NFD feature file), json",
                               format);
    if (!prefix_ok(prefix))
        return cli_usage_error("labels",
                               "--prefix %s: not a label prefix Kubernetes and NFD accept (a "
                               "lower-case DNS subdomain of at most 253 characters, not under "
                               "kubernetes.io or k8s.io except feature.node.kubernetes.io)",
                               prefix);
    cli_node node;
    labels *l = NULL;
    char *text = NULL, *cache = NULL;
    rc = cli_node_read("labels", backends, &node);
    if (rc)
        goto out;
    /* The tuning cache, for measured labels; a cache that cannot be read
     * leaves them out and says why, the rest of the labels stand. */
    if (node.n && gpuopt_cache_list(node.ctx, &cache) != GPUOPT_OK)
        fprintf(stderr, "gpuopt labels: no measured labels: %s\n", gpuopt_last_error());
    cJSON *cache_root = cache ? cJSON_Parse(cache) : NULL;
    sources src = {node.root, cache_root};
    l = calloc(1, sizeof *l);
    if (l) {
        build(&node, &src, l);
        text = render(l, prefix, json, node.n);
    }
    cJSON_Delete(cache_root);
    if (!text) {
        fprintf(stderr, "gpuopt labels: out of memory\n");
        rc = CLI_FAIL;
        goto out;
    }
    if (output)
        rc = write_atomic(output, text);
    else
        printf("%s%s", text, json ? "\n" : "");
out:
    free(l);
    if (json)
        cJSON_free(text);
    else
        free(text);
    gpuopt_free(cache);
    cli_node_free(&node);
    return rc;
}

const cli_command cli_labels = {
    "labels", "node labels for Kubernetes (a Node Feature Discovery feature file)",
    "usage: gpuopt labels [-f|--format nfd|json] [-o|--output FILE] [-p|--prefix DOMAIN]\n"
    "                     [-b|--backend LIST]\n\n"
    "Prints labels describing this node's GPUs, from the same detection as 'gpuopt\n"
    "devices', as a Node Feature Discovery feature file: one PREFIX/NAME=VALUE a line,\n"
    "every name and value within Kubernetes' label syntax. A label of one GPU's fact\n"
    "(product, family, memory, ...) appears when every GPU of the node agrees on it;\n"
    "gpu.count and gpu.count.PRODUCT always. docs/fleet.md lists every label and how\n"
    "they map to NVIDIA GPU Feature Discovery's and AMD's node labeller's.\n\n"
    "  -f, --format nfd|json  nfd (default): the feature file; json: {prefix, labels}\n"
    "  -o, --output FILE      write FILE whole or not at all (a hidden temporary file,\n"
    "                         then rename), e.g. /etc/kubernetes/node-feature-discovery/\n"
    "                         features.d/gpuopt\n"
    "  -p, --prefix DOMAIN    label prefix (default " DEFAULT_PREFIX ")\n"
    "  -b, --backend LIST     only these backends, like GPUOPT_BACKEND\n",
    run};
