/* Building JSON with cJSON, every allocation checked.
 *
 * cJSON's adders free nothing when they fail: cJSON_AddItemToObject leaves
 * the item with the caller (it failed to copy the key), and a builder that
 * ignores the results writes a document with fields silently missing, or
 * uses an item it has just freed. A gpo_json latches the first failure, as
 * gpo_sbuf does: each add either attaches its item to the parent or frees
 * it, every add after a failure does nothing, and the caller checks
 * `failed` once at the end and then deletes the whole tree. Containers are
 * attached before they are filled, so deleting the root frees everything. */
#ifndef GPO_JSON_H
#define GPO_JSON_H

#include <cjson/cJSON.h>
#include <stdint.h>

typedef struct gpo_json {
    int failed; /* 1 once any add failed: the tree is incomplete */
} gpo_json;

/* Attaches `item` to `parent`: under `key` when parent is an object, at the
 * end when `key` is NULL (an array). Returns item; NULL (item freed,
 * b->failed set) when item or parent is NULL, attaching failed, or an
 * earlier add failed. */
cJSON *gpo_json_add(gpo_json *b, cJSON *parent, const char *key, cJSON *item);

/* New containers, attached; NULL on failure. */
cJSON *gpo_json_object(gpo_json *b, cJSON *parent, const char *key);
cJSON *gpo_json_array(gpo_json *b, cJSON *parent, const char *key);

/* Scalars. gpo_json_str writes null for NULL; gpo_json_text also for "". */
cJSON *gpo_json_str(gpo_json *b, cJSON *parent, const char *key, const char *s);
cJSON *gpo_json_text(gpo_json *b, cJSON *parent, const char *key, const char *s);
cJSON *gpo_json_num(gpo_json *b, cJSON *parent, const char *key, double v);
cJSON *gpo_json_bool(gpo_json *b, cJSON *parent, const char *key, int v);
cJSON *gpo_json_null(gpo_json *b, cJSON *parent, const char *key);

/* A number when `known`, else null (facts a driver did not report). */
cJSON *gpo_json_num_or_null(gpo_json *b, cJSON *parent, const char *key, double v, int known);

/* The number of a JSON value as an int64_t, when it is a whole number in
 * range: casting a double outside [INT64_MIN, INT64_MAX] (or NaN) to
 * int64_t is undefined behaviour (C11 6.3.1.4). Returns 0 with *out set,
 * -1 for anything else (not a number, fractional, out of range). */
int gpo_json_int64(const cJSON *item, int64_t *out);

#endif
