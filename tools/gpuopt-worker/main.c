/* gpuopt-worker: the tuner's measurement worker (src/isolate/serve.h). The
 * library spawns it with one end of a socket pair as descriptor N
 * ("--fd N"); it is not meant to be run by hand. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isolate/serve.h"
#include "isolate/wire.h"

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        printf("gpuopt-worker protocol %u\n", GPO_WIRE_VERSION);
        return 0;
    }
    char *end = NULL;
    long fd = argc == 3 && strcmp(argv[1], "--fd") == 0 ? strtol(argv[2], &end, 10) : -1;
    if (fd < 0 || !end || *end) {
        fprintf(stderr, "gpuopt-worker: the tuner's measurement worker, started by libgpuopt "
                        "(usage: gpuopt-worker --fd N | --version)\n");
        return 2;
    }
    return gpo_worker_serve((int)fd);
}
