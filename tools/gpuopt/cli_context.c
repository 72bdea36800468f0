/* The context every command works on, made from its --backend and the
 * device selector, with the library's refusal of either put in the words of
 * the command line. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* GPUOPT_DEVICE as the user set it, taken out of the environment while the
 * command runs (cli_restore_env puts it back). */
static char saved_device[512];
static int have_saved_device;
static char origin[600] = "cannot select a device";

const char *cli_device_origin(void)
{
    return origin;
}

void cli_restore_env(void)
{
    if (have_saved_device)
        setenv("GPUOPT_DEVICE", saved_device, 1);
}

/* The library names the API field it was given: `gpuopt_options.backends =
 * "metal" is not accepted: accepted: ...`. The command names what the user
 * typed instead; a message of another form is printed as it is. */
static int config_error(const char *cmd, const char *backends, const char *device)
{
    const char *detail = gpuopt_last_error();
    static const char marker[] = " is not accepted: ";
    const char *why = strstr(detail, marker);
    const char *what = NULL;
    if (why && strncmp(detail, "gpuopt_options.backends ", 24) == 0 && backends) {
        static char buf[600];
        snprintf(buf, sizeof buf, "--backend %s", backends);
        what = buf;
    } else if (why && strncmp(detail, "gpuopt_options.device ", 22) == 0 && device) {
        what = origin;
    }
    if (!what)
        return cli_fail(cmd, "cannot create a context", GPUOPT_ERR_CONFIG);
    fprintf(stderr, "gpuopt %s: %s: not understood; %s\n", cmd, what, why + sizeof marker - 1);
    return CLI_USAGE;
}

int cli_context(const char *cmd, const char *backends, const char *device, int selects,
                gpuopt_context **ctx)
{
    gpuopt_options opts = {.struct_size = sizeof opts};
    opts.backends = backends;
    /* Out of the library's sight for every command: one that selects reads
     * it below as --device's default; one that does not (memory, tune,
     * cache, doctor) has no use for it, and the library's warning about a
     * bad value would be about a setting the command never reads. */
    const char *env = getenv("GPUOPT_DEVICE");
    if (env && !have_saved_device) {
        snprintf(saved_device, sizeof saved_device, "%s", env);
        have_saved_device = 1;
        unsetenv("GPUOPT_DEVICE");
    }
    if (selects) {
        if (device)
            snprintf(origin, sizeof origin, "--device %s", device);
        else if (have_saved_device && *saved_device) {
            /* An empty variable counts as unset, as in the library. */
            device = saved_device;
            snprintf(origin, sizeof origin, "GPUOPT_DEVICE=%s", device);
        }
        opts.device = device;
    }
    gpuopt_status st = gpuopt_context_create(&opts, ctx);
    if (st == GPUOPT_ERR_CONFIG)
        return config_error(cmd, backends, opts.device);
    if (st)
        return cli_fail(cmd, "cannot create a context", st);
    return CLI_OK;
}

int cli_context_json(const char *cmd, const char *backends, int selects,
                     gpuopt_status (*get)(gpuopt_context *, char **), const char *what, int parse,
                     gpuopt_context **ctx, char **text, cJSON **root)
{
    int rc = cli_context(cmd, backends, NULL, selects, ctx);
    if (rc)
        return rc;
    gpuopt_status st = get(*ctx, text);
    if (st)
        return cli_fail(cmd, what, st);
    if (parse && !(*root = cJSON_Parse(*text))) {
        fprintf(stderr, "gpuopt %s: the library returned malformed JSON\n", cmd);
        return CLI_FAIL;
    }
    return CLI_OK;
}
