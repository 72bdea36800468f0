/* Helpers for the doctor's tests: reading its JSON, checking the invariants
 * every answer keeps, and running `gpuopt doctor` with a chosen
 * environment. */
#ifndef GPO_DOCTOR_TEST_UTIL_H
#define GPO_DOCTOR_TEST_UTIL_H

#include <cjson/cJSON.h>

/* Absolute path of a recorded tree (tests/fixtures/doctor/<name>). Static
 * buffer per slot 0..3. */
const char *dr_tree(int slot, const char *name);

/* The first finding of `backend` and `check` with `status` (NULL: any). */
const cJSON *dr_finding(const cJSON *root, const char *backend, const char *check,
                        const char *status);

/* How many findings match. */
int dr_count(const cJSON *root, const char *backend, const char *check, const char *status);

/* A finding's string member, "" when absent or null. */
const char *dr_str(const cJSON *o, const char *key);

/* 1 when any evidence line of `f` contains `text`. */
int dr_evidence_has(const cJSON *f, const char *text);

/* Fails the test unless the answer keeps its invariants: known keys and
 * types, every finding with a backend, check, known status, summary and
 * evidence array, and every problem with a fix. */
void dr_assert_well_formed(const cJSON *root);

/* The variables a case controls; dr_run_cli unsets them in the child
 * unless the case sets them. */
extern const char *const dr_controlled_vars[];

/* Runs GPO_CLI with `args` (NULL-terminated, after the program name) in the
 * current environment minus dr_controlled_vars plus `env` ("K=V",
 * NULL-terminated; may be NULL). Returns the exit status (-1 when it could
 * not run or died); *out (may be NULL) gets stdout, malloc'd. */
int dr_run_cli(const char *const *env, const char *const *args, char **out);

/* The same with another program than GPO_CLI. */
int dr_run_program(const char *program, const char *const *env, const char *const *args,
                   char **out);

/* 1 when dlopen of `name` works on this machine (used to skip cases that
 * need a library to be absent or present). */
int dr_library_loads(const char *name);

#endif
