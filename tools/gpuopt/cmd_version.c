/* gpuopt version: release, API version, and the library actually loaded. */
#include <stdio.h>

#include "cli.h"

static int run(int argc, char **argv)
{
    int json = 0;
    const cli_option options[] = {{"json", 'j', NULL, &json}, {"help", 'h', NULL, NULL}, {0}};
    int rc = cli_parse(&cli_version, options, argc, argv);
    if (rc != CLI_OPTS_END)
        return rc;
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
    "usage: gpuopt version [-j|--json]\n"
    "       gpuopt --version | -V\n\n"
    "Prints the release version of the command and of the loaded library, and the\n"
    "library's API version.\n\n"
    "  -j, --json   one JSON object: {gpuopt_version, api_version, cli_version}\n",
    run};
