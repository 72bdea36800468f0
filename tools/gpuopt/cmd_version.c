/* gpuopt version: release, API version, and the library actually loaded. */
#include <stdio.h>

#include "cli.h"

static const cli_option options[] = {
    {"json", 'j', NULL},
    {"help", 'h', NULL},
    {NULL, 0, NULL},
};

static int run(int argc, char **argv)
{
    int json = 0, o;
    cli_parser p;
    cli_parser_init(&p, &cli_version, options, 0);
    while ((o = cli_parser_next(&p, argc, argv)) != CLI_OPTS_END) {
        if (o == 'j')
            json = 1;
        else
            return p.status;
    }
    if (p.operands < argc)
        return cli_usage_error("version", "unexpected argument '%s'", argv[p.operands]);
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
