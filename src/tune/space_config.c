/* Configurations: one value index per parameter, read by name. */
#include <stdlib.h>
#include <string.h>

#include "util/detail.h"
#include "util/strutil.h"
#include "tune/space_impl.h"

gpuopt_status gpo_config_create(const gpuopt_space *space, const uint32_t *idx, gpuopt_config **out)
{
    if (out)
        *out = NULL;
    if (!space || !idx || !out)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "config: NULL argument");
    for (int32_t p = 0; p < space->nparams; p++)
        if (idx[p] >= (uint32_t)space->params[p].count)
            return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE,
                            "config: index %u of parameter %s is past its %d values", idx[p],
                            space->params[p].name, (int)space->params[p].count);
    gpuopt_config *c = calloc(1, sizeof *c);
    uint32_t *copy = calloc((size_t)space->nparams + 1, sizeof *copy);
    if (!c || !copy) {
        free(c);
        free(copy);
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory creating a configuration");
    }
    memcpy(copy, idx, (size_t)space->nparams * sizeof *copy);
    gpo_space_ref(space);
    c->space = space;
    c->idx = copy;
    c->owned = 1;
    *out = c;
    return GPUOPT_OK;
}

void gpo_config_destroy(gpuopt_config *c)
{
    if (!c || !c->owned)
        return;
    free((void *)c->idx);
    gpo_space_unref(c->space);
    free(c);
}

void gpo_config_borrow(gpuopt_config *c, const gpuopt_space *space, const uint32_t *idx)
{
    if (!c)
        return;
    c->space = space;
    c->idx = idx;
    c->owned = 0;
}

const gpuopt_space *gpo_config_space(const gpuopt_config *c)
{
    return c ? c->space : NULL;
}

const uint32_t *gpo_config_indices(const gpuopt_config *c)
{
    return c ? c->idx : NULL;
}

/* Finds the parameter for a public read; sets the detail on failure. */
static gpuopt_status lookup(const gpuopt_config *c, const char *name, const void *value, int32_t *p)
{
    if (!c || !c->space || !name || !value)
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "config read: NULL argument");
    *p = gpo_space_find_param(c->space, name);
    if (*p < 0)
        return gpo_fail(GPUOPT_ERR_NOT_FOUND, "the configuration has no parameter '%.80s'", name);
    if (!c->idx || c->idx[*p] >= (uint32_t)c->space->params[*p].count)
        return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "configuration value of %s is out of range", name);
    return GPUOPT_OK;
}

GPUOPT_API gpuopt_status gpuopt_config_get_int(const gpuopt_config *config, const char *name,
                                               int64_t *value)
{
    gpo_detail_clear();
    int32_t p;
    gpuopt_status st = lookup(config, name, value, &p);
    if (st == GPUOPT_OK)
        *value = config->space->params[p].values[config->idx[p]];
    return st;
}

GPUOPT_API gpuopt_status gpuopt_config_get_text(const gpuopt_config *config, const char *name,
                                                const char **value)
{
    gpo_detail_clear();
    int32_t p;
    gpuopt_status st = lookup(config, name, value, &p);
    if (st == GPUOPT_OK)
        *value = config->space->params[p].text[config->idx[p]];
    return st;
}

GPUOPT_API gpuopt_status gpuopt_config_to_string(const gpuopt_config *config, char **text)
{
    gpo_detail_clear();
    if (text)
        *text = NULL;
    if (!config || !config->space || !text || (!config->idx && config->space->nparams))
        return gpo_fail(GPUOPT_ERR_INVALID_ARGUMENT, "gpuopt_config_to_string: NULL argument");
    const gpuopt_space *s = config->space;
    gpo_sbuf b;
    gpo_sbuf_init(&b);
    for (int32_t p = 0; p < s->nparams; p++) {
        if (config->idx[p] >= (uint32_t)s->params[p].count) {
            gpo_sbuf_free(&b);
            return gpo_fail(GPUOPT_ERR_OUT_OF_RANGE, "configuration value of %s is out of range",
                            s->params[p].name);
        }
        gpo_sbuf_appendf(&b, "%s%s=%s", p ? " " : "", s->params[p].name,
                         s->params[p].text[config->idx[p]]);
    }
    *text = gpo_sbuf_take(&b);
    if (!*text)
        return gpo_fail(GPUOPT_ERR_NO_MEMORY, "out of memory formatting a configuration");
    return GPUOPT_OK;
}
