/* What became of one candidate. The values are those of the planned public
 * gpuopt_candidate_status (GPUOPT_CANDIDATE_*), so the engine can pass
 * them through unchanged once that enum lands in gpuopt.h. */
#ifndef GPO_TUNE_STATUS_H
#define GPO_TUNE_STATUS_H

enum {
    GPO_CAND_OK = 0,
    GPO_CAND_INVALID = 1, /* illegal by a constraint or a device limit */
    GPO_CAND_COMPILE_FAILED = 2,
    GPO_CAND_LAUNCH_FAILED = 3,
    GPO_CAND_WRONG_RESULT = 4,
    GPO_CAND_TIMEOUT = 5,
    GPO_CAND_PRUNED = 6, /* the probe was already prune_ratio x slower than the best */
    GPO_CAND_FAULT = 7   /* faulted the device: measured in a worker, which it ended */
};

/* Only OK candidates can win. Failed ones (built or ran and went wrong)
 * count against the failure budget; INVALID ones (a device limit the
 * space did not express) cost nothing to find and do not; PRUNED ones
 * were measured, briefly, and are merely slow. */
static inline int gpo_cand_failed(int status)
{
    return (status >= GPO_CAND_COMPILE_FAILED && status <= GPO_CAND_TIMEOUT) ||
           status == GPO_CAND_FAULT;
}

#endif
