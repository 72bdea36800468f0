/* Failing cJSON hooks (cjson_fail.h). */
#include "support/cjson_fail.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

static long count, fail_at;

static void *counting_malloc(size_t n)
{
    if (++count == fail_at)
        return NULL;
    return malloc(n);
}

void cjson_fail_at(long n)
{
    cJSON_Hooks hooks = {counting_malloc, free};
    count = 0;
    fail_at = n;
    cJSON_InitHooks(&hooks);
}

long cjson_allocations(void)
{
    return count;
}

void cjson_fail_off(void)
{
    cJSON_InitHooks(NULL);
    fail_at = 0;
}
