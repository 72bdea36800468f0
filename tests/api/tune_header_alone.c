/* Compiled, never run, by the tune_header_compiles_alone_* tests:
 * gpuopt/tune.h first and alone must bring everything it uses (it includes
 * gpuopt.h for the context, device and status types). */
#include <gpuopt/tune.h>

int gpo_tune_header_uses(void);
int gpo_tune_header_uses(void)
{
    gpuopt_space *space = NULL;
    gpuopt_tuner *tuner = NULL;
    gpuopt_result *result = NULL;
    gpuopt_status st = GPUOPT_OK;
    return (space == NULL) + (tuner == NULL) + (result == NULL) + (int)st;
}
