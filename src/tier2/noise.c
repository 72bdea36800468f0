/* The noise tier 2 runs in, and what a sweep's result says given it
 * (bench.h). Two signs of a busy machine: a load average above the CPU
 * count (other work competes for the cores the benchmarks time on; read
 * once, when the tier begins), and runs of one value that disagree (a
 * p20-p80 spread over GPO_T2_BUSY_SPREAD of their median). Either makes a
 * sweep keep tier 1's value unless another beats it by more than
 * GPO_T2_BUSY_FLOOR and the spread, and says so: a warning in the log and
 * "busy ... lower confidence" in the reason, instead of a setting that
 * flips from run to run. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tier2/bench.h"
#include "util/cpuset.h"
#include "util/fs.h"
#include "util/strutil.h"

void gpo_t2_noise_read(const gpo_fs *fs, gpo_t2_noise *out)
{
    char buf[1024];
    unsigned char online[GPO_CPUSET_BYTES];
    out->load = -1;
    /* proc(5): the first field is the 1-minute load average. */
    if (gpo_fs_read(fs, "/proc/loadavg", buf, sizeof buf) == GPUOPT_OK &&
        sscanf(buf, "%lf", &out->load) != 1)
        out->load = -1;
    /* The online CPUs from the same tree as the load (a recorded tree
     * describes its own machine); the live count where it has none. */
    int n = gpo_fs_read(fs, "/sys/devices/system/cpu/online", buf, sizeof buf) == GPUOPT_OK
                ? gpo_parse_cpulist(buf, online, GPO_CPUSET_BITS)
                : -1;
    if (n < 1) {
        long live = sysconf(_SC_NPROCESSORS_ONLN);
        n = live > 0 && live < 1 << 20 ? (int)live : 0;
    }
    out->cpus = n;
}

const char *gpo_t2_verdict_word(int what)
{
    return what == GPO_T2_MEASURED       ? "measured"
           : what == GPO_T2_WITHIN_NOISE ? "within noise of tier 1"
                                         : "not measured (budget)";
}

static int timed(const gpuopt_result *res, int32_t i)
{
    int32_t s = gpo_result_status(res, i);
    return (s == GPO_CAND_OK || s == GPO_CAND_PRUNED) && gpo_result_stats(res, i)->count > 0;
}

static double spread_of(const gpo_stats *s)
{
    return s && s->count > 0 && s->median > 0 ? (s->p80 - s->p20) / s->median : 0;
}

void gpo_t2_judge(const gpo_t2_job *job, const gpuopt_result *res, const char *param,
                  int64_t incumbent, gpo_t2_verdict *v)
{
    memset(v, 0, sizeof *v);
    int32_t best = gpo_result_best_index(res), unreached = 0;
    v->pick = best;
    v->incumbent = -1;
    for (int32_t i = 0; i < gpo_result_count_of(res); i++) {
        if (!timed(res, i))
            continue;
        if (gpo_t2_value(res, i, param) == incumbent)
            v->incumbent = i;
        else
            v->others++;
    }
    for (uint32_t k = 0; k < (uint32_t)gpo_space_value_count(job->space, 0); k++)
        unreached += gpo_t2_find(res, param, gpo_space_value(job->space, 0, k)) < 0;
    const gpo_stats *b = gpo_result_stats(res, best);
    const gpo_stats *in = v->incumbent >= 0 ? gpo_result_stats(res, v->incumbent) : NULL;
    v->spread = spread_of(b);
    if (spread_of(in) > v->spread)
        v->spread = spread_of(in);
    const gpo_t2_noise *n = &job->t2->noise;
    /* Loaded: the load average is above the CPU count, so other work
     * competes for the cores tier 2 times on. */
    int loaded = n->load >= 0 && n->cpus > 0 && n->load > (double)n->cpus;
    int spread = v->spread > GPO_T2_BUSY_SPREAD;
    v->busy = loaded || spread;

    if (v->incumbent >= 0 && v->others == 0 && unreached > 0) {
        v->what = GPO_T2_NOT_MEASURED;
        v->pick = v->incumbent;
    } else if (v->incumbent >= 0 && best == v->incumbent) {
        v->what = GPO_T2_WITHIN_NOISE;
    } else if (v->incumbent >= 0) {
        /* The engine's side-by-side pick ranks by a low quantile, which
         * orders candidates best under interference, but a few lucky runs
         * can carry it (PoCL's copy kernel here runs in two modes, about 0.6
         * and 1.2 ms, on an idle machine: 256 lost to 2048 by the minimum at
         * medians of 1.21 and 1.22 ms). A setting an earlier tier chose
         * changes only when the typical run agrees: the median must gain
         * past the same floor, and on a busy machine both must gain past
         * GPO_T2_BUSY_FLOOR and the spread. */
        double need = !v->busy                        ? GPO_T2_SWITCH_FLOOR
                      : v->spread > GPO_T2_BUSY_FLOOR ? v->spread
                                                      : GPO_T2_BUSY_FLOOR;
        double a = gpo_stats_rank(in), w = gpo_stats_rank(b);
        int by_rank = a > 0 && 1.0 - w / a > need;
        int by_median = in->median > 0 && 1.0 - b->median / in->median > need;
        if (!by_median || (v->busy && !by_rank)) {
            v->what = GPO_T2_WITHIN_NOISE;
            v->pick = v->incumbent;
            v->kept = 1;
            char fw[32], fi[32], mw[32], mi[32];
            gpo_format_ns(w, fw, sizeof fw);
            gpo_format_ns(a, fi, sizeof fi);
            gpo_format_ns(b->median, mw, sizeof mw);
            gpo_format_ns(in->median, mi, sizeof mi);
            gpo_snprintf(v->gain, sizeof v->gain,
                         "p20s %s against %s, medians %s against %s: a gain within the "
                         "noise%s",
                         fw, fi, mw, mi, v->busy ? " of a busy machine" : "");
        }
    }

    char load[64] = "load unknown";
    if (n->load >= 0 && n->cpus > 0)
        gpo_snprintf(load, sizeof load, "load %.1f on %d CPUs", n->load, n->cpus);
    gpo_snprintf(v->noise, sizeof v->noise, "%s, runs spread %.0f%% (p20-p80)%s%s%s%s", load,
                 100 * v->spread, v->busy ? "; the machine was busy (" : "",
                 loaded ? "load above the CPU count" : "", loaded && spread ? ", " : "",
                 spread ? "runs disagree" : "");
    if (v->busy) {
        size_t len = strlen(v->noise);
        gpo_snprintf(v->noise + len, sizeof v->noise - len, "): lower confidence");
        gpo_log_warn(job->t2->log, "%s: tier 2 %s: %s; %s", job->t2->dev->info.id, job->kind,
                     v->noise,
                     v->kept ? "tier 1's value was kept against a gain within the noise"
                             : "its answer is less certain");
    }
}
