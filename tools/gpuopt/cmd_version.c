/* gpuopt version: release, API version, and the library actually loaded. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static int run(int argc, char **argv)
{
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else
            return cli_usage_error("version", "unknown option '%s'; accepted: --json, --help",
                                   argv[i]);
    }
    uint32_t api = gpuopt_api_version();
    if (json)
        printf("{\"gpuopt_version\":\"%s\",\"api_version\":\"%u.%u.%u\",\"cli_version\":\"%s\"}\n",
               gpuopt_version(), (unsigned)(api >> 16), (unsigned)((api >> 8) & 0xff),
               (unsigned)(api & 0xff), GPUOPT_VERSION_STRING);
    else
        printf("gpuopt %s (library %s, API %u.%u.%u)\n", GPUOPT_VERSION_STRING, gpuopt_version(),
               (unsigned)(api >> 16), (unsigned)((api >> 8) & 0xff), (unsigned)(api & 0xff));
    return CLI_OK;
}

const cli_command cli_version = {
    "version", "print the library and API versions",
    "usage: gpuopt version [--json]\n\n"
    "Prints the release version of the command and of the loaded library, and the\n"
    "library's API version.\n\n"
    "  --json   one JSON object: {gpuopt_version, api_version, cli_version}\n",
    run};
