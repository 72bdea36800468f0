/* examples/tuning/sgemm.cu compiled as C for one configuration (the -D
 * defines and -Dsgemm=sgemm_<id> come from CMake). */
#include "sgemm_host.h"

#include "tuning/sgemm.cu"
