/* Checked cJSON building (json.h). */
#include "json.h"

#include <math.h>

cJSON *gpo_json_add(gpo_json *b, cJSON *parent, const char *key, cJSON *item)
{
    if (b->failed || !parent || !item)
        goto fail;
    if (key ? !cJSON_AddItemToObject(parent, key, item) : !cJSON_AddItemToArray(parent, item))
        goto fail;
    return item;
fail:
    cJSON_Delete(item);
    b->failed = 1;
    return NULL;
}

/* The creators below are not called once the builder has failed, so a
 * failed build stops allocating. */
cJSON *gpo_json_object(gpo_json *b, cJSON *parent, const char *key)
{
    return gpo_json_add(b, parent, key, b->failed ? NULL : cJSON_CreateObject());
}

cJSON *gpo_json_array(gpo_json *b, cJSON *parent, const char *key)
{
    return gpo_json_add(b, parent, key, b->failed ? NULL : cJSON_CreateArray());
}

cJSON *gpo_json_str(gpo_json *b, cJSON *parent, const char *key, const char *s)
{
    if (b->failed)
        return gpo_json_add(b, parent, key, NULL);
    return gpo_json_add(b, parent, key, s ? cJSON_CreateString(s) : cJSON_CreateNull());
}

cJSON *gpo_json_text(gpo_json *b, cJSON *parent, const char *key, const char *s)
{
    return gpo_json_str(b, parent, key, s && *s ? s : NULL);
}

cJSON *gpo_json_num(gpo_json *b, cJSON *parent, const char *key, double v)
{
    return gpo_json_add(b, parent, key, b->failed ? NULL : cJSON_CreateNumber(v));
}

cJSON *gpo_json_bool(gpo_json *b, cJSON *parent, const char *key, int v)
{
    return gpo_json_add(b, parent, key, b->failed ? NULL : cJSON_CreateBool(v != 0));
}

cJSON *gpo_json_null(gpo_json *b, cJSON *parent, const char *key)
{
    return gpo_json_add(b, parent, key, b->failed ? NULL : cJSON_CreateNull());
}

cJSON *gpo_json_num_or_null(gpo_json *b, cJSON *parent, const char *key, double v, int known)
{
    return known ? gpo_json_num(b, parent, key, v) : gpo_json_null(b, parent, key);
}

int gpo_json_int64(const cJSON *item, int64_t *out)
{
    if (!cJSON_IsNumber(item))
        return -1;
    double d = item->valuedouble;
    /* 2^63 is exact in a double; INT64_MAX is not and rounds up to it, so
     * the upper bound is exclusive. NaN fails both comparisons. */
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) || d != floor(d))
        return -1;
    *out = (int64_t)d;
    return 0;
}
