/* Latency advice (latency.h): graphs, warm-up, pre-allocation and streams
 * for a latency-oriented workload, each with its arithmetic. Without a
 * latency-oriented workload every knob here is absent: batching amortises
 * what they save, and their constraints cost a throughput program more. */
#include "latency.h"

#include <inttypes.h>

#include "backend.h"
#include "util/strutil.h"
#include "workload_fit.h"

/* The workload when it is latency-oriented; else NULL with the knob absent. */
static const gpuopt_workload *latency_workload(const gpo_derive_env *env, gpo_derivation *out)
{
    const gpuopt_workload *w = env->workload;
    out->present = 0;
    if (!w || w->objective != GPUOPT_OBJECTIVE_LATENCY) {
        gpo_snprintf(out->how, sizeof out->how, "%s",
                     w ? "the workload is throughput-oriented: batching amortises what this "
                         "saves"
                       : "no workload was described");
        return NULL;
    }
    return w;
}

/* The graph API of the device's primary route's runtime, or NULL. */
static const char *graph_api(const gpuopt_device *dev)
{
    const gpo_route *r = dev && dev->n_routes > 0 ? &dev->routes[0] : NULL;
    return r && r->backend && r->backend->runtime ? r->backend->runtime->graph_api : NULL;
}

gpuopt_status gpo_derive_launch_graph(const gpo_knob_input *in, const gpo_derive_env *env,
                                      gpo_derivation *out)
{
    const gpuopt_workload *w = latency_workload(env, out);
    if (!w)
        return GPUOPT_OK;
    if (w->launches_per_step <= 0 || !w->step_time_ns)
        return gpo_say(GPUOPT_OK, out->how, sizeof out->how,
                       "the workload gives no launches per step or step time target");
    if (!in[0].present) {
        gpo_snprintf(out->how, sizeof out->how, "the launch latency was not measured");
        gpo_snprintf(out->warning, sizeof out->warning,
                     "%s: whether to capture the step in a graph (launch.graph) needs the launch "
                     "latency, which level 2 measures (measured.launch_latency_ns); this plan is "
                     "at level %d",
                     env->dev->info.id, (int)env->level);
        return GPUOPT_OK;
    }
    double per = (double)in[0].ival, step = (double)w->step_time_ns;
    double overhead = per * w->launches_per_step, share = 100.0 * overhead / step;
    char l[32], o[32], s[32];
    gpo_format_ns(per, l, sizeof l);
    gpo_format_ns(overhead, o, sizeof o);
    gpo_format_ns(step, s, sizeof s);
    char head[300];
    gpo_snprintf(head, sizeof head,
                 "launch overhead %d launches x %s = %s per step, %.1f%% of the %s step target",
                 (int)w->launches_per_step, l, o, share, s);
    const char *api = graph_api(env->dev);
    out->present = 1;
    if (!api) {
        gpo_strlcpy(out->value, "false", sizeof out->value);
        gpo_snprintf(out->how, sizeof out->how,
                     "%s; the %s backend has no graph API to capture "
                     "it with",
                     head, env->dev->info.backend);
    } else if (share < GPO_LATENCY_SHARE_PCT) {
        gpo_strlcpy(out->value, "false", sizeof out->value);
        gpo_snprintf(out->how, sizeof out->how,
                     "%s: under the %d%% at which capturing pays for a graph's constraints "
                     "(static shapes and memory addresses, a new capture on any change); launch "
                     "the kernels as they are",
                     head, GPO_LATENCY_SHARE_PCT);
    } else if (w->fixed_shapes != 1) {
        gpo_strlcpy(out->value, "false", sizeof out->value);
        gpo_snprintf(out->how, sizeof out->how,
                     "%s, but the shapes are not described as static (fixed_shapes): a graph "
                     "replays fixed shapes and memory addresses, and capturing again for each "
                     "new shape costs more than it saves",
                     head);
    } else {
        gpo_strlcpy(out->value, "true", sizeof out->value);
        gpo_snprintf(out->how, sizeof out->how,
                     "%s, at or above %d%%: capture the step once in %s and replay it, one "
                     "launch per step instead of %d",
                     head, GPO_LATENCY_SHARE_PCT, api, (int)w->launches_per_step);
    }
    return GPUOPT_OK;
}

gpuopt_status gpo_derive_warmup_runs(const gpo_knob_input *in, const gpo_derive_env *env,
                                     gpo_derivation *out)
{
    const gpuopt_workload *w = latency_workload(env, out);
    if (!w)
        return GPUOPT_OK;
    int graph = in[0].present && in[0].ival;
    const char *per_shape = w->fixed_shapes == 1 ? "" : ", once for each input shape served";
    out->present = 1;
    gpo_snprintf(out->value, sizeof out->value, "%d", graph ? 2 : 1);
    gpo_snprintf(out->how, sizeof out->how,
                 "the first step pays what later ones do not: lazily loaded kernels, the "
                 "libraries' autotuning (cuDNN benchmark, MIOpen Find), the allocator growing "
                 "its pool, JIT compilation%s; run %s before the first real request%s",
                 graph ? ", and a graph is recorded on the step after a warm-up and replayed "
                         "from the next (PyTorch, CUDAGraph Trees: the first call runs eagerly, "
                         "the second records)"
                       : "",
                 graph ? "2 steps" : "1 step", per_shape);
    return GPUOPT_OK;
}

gpuopt_status gpo_derive_prealloc_bytes(const gpo_knob_input *in, const gpo_derive_env *env,
                                        gpo_derivation *out)
{
    const gpuopt_workload *w = latency_workload(env, out);
    if (!w)
        return GPUOPT_OK;
    if (!w->item_bytes)
        return gpo_say(GPUOPT_OK, out->how, sizeof out->how, "no item size was described");
    int items = w->items_per_step > 0 ? w->items_per_step : 1;
    if ((uint64_t)items > UINT64_MAX / 2 / w->item_bytes)
        return gpo_say(GPUOPT_OK, out->how, sizeof out->how, "a step's peak overflows");
    /* The scratch is the plan's own headroom share: what libraries'
     * workspaces and fragmentation take beside the tensors (workload_fit). */
    gpo_fit_budget b;
    gpo_fit_budget_make(env->memory, env->memory_what ? env->memory_what : "total",
                        env->memory_total, env->level >= 1 ? 1 : 0, &b);
    /* No more items than the plan's batch size fit beside the model. */
    int capped = in[0].present && items > in[0].ival;
    int held = capped ? (int)in[0].ival : items;
    uint64_t peak = (uint64_t)held * w->item_bytes;
    uint64_t pool = peak + peak / 100 * (uint64_t)b.keep_pct;
    if (pool > (UINT64_C(1) << 50))
        return gpo_say(GPUOPT_OK, out->how, sizeof out->how, "a step's peak is above 1 PiB");
    char it[32], pk[32], pl[32], cap_note[160] = "";
    gpo_format_bytes(w->item_bytes, it, sizeof it);
    gpo_format_bytes(peak, pk, sizeof pk);
    gpo_format_bytes(pool, pl, sizeof pl);
    if (capped) {
        gpo_snprintf(cap_note, sizeof cap_note,
                     " (of the step's %d, only batch.max_size = %d fit "
                     "beside the model)",
                     items, held);
        gpo_snprintf(out->warning, sizeof out->warning,
                     "%s: a step of %d items is more than the %d (batch.max_size) that fit beside "
                     "the model: the pool (prealloc.bytes) holds %d",
                     env->dev->info.id, items, held, held);
    }
    out->present = 1;
    gpo_snprintf(out->value, sizeof out->value, "%" PRIu64, pool);
    gpo_snprintf(out->how, sizeof out->how,
                 "a step holds %d item%s x %s = %s%s%s, + %d%% scratch (the plan's headroom "
                 "share: libraries' workspaces, fragmentation) = %s: allocate it once before "
                 "serving so no step waits for the driver's allocator (cudaMalloc and hipMalloc "
                 "synchronise the device); PyTorch's caching allocator keeps the freed block "
                 "for the steps",
                 held, held == 1 ? "" : "s", it, pk,
                 w->items_per_step > 0 ? "" : " (items_per_step not described: one)", cap_note,
                 b.keep_pct, pl);
    return GPUOPT_OK;
}

/* One direction's time per step: bytes / rate + the per-copy cost, in ns,
 * the words in `text`. A rate that was not measured leaves the per-copy
 * cost alone (a lower bound, said so); *known 0 when neither was. */
static double direction(const char *dir, uint64_t bytes, const gpo_knob_input *pinned,
                        const gpo_knob_input *pageable, const gpo_knob_input *fixed, int *known,
                        char *text, size_t cap)
{
    text[0] = '\0';
    *known = 1;
    if (!bytes)
        return 0;
    const gpo_knob_input *rate = pinned->present ? pinned : pageable->present ? pageable : NULL;
    if (rate && rate->ival <= 0)
        rate = NULL;
    char b[32], r[48] = "", t[32], f[64] = "";
    gpo_format_bytes(bytes, b, sizeof b);
    double ns = 0;
    if (rate) {
        ns = (double)bytes / (double)rate->ival * 1e9;
        gpo_format_rate((double)rate->ival, r, sizeof r);
    }
    if (fixed->present) {
        ns += (double)fixed->ival;
        gpo_format_ns((double)fixed->ival, f, sizeof f);
    }
    if (!rate && !fixed->present) {
        *known = 0;
        return 0;
    }
    gpo_format_ns(ns, t, sizeof t);
    if (rate)
        gpo_snprintf(text, cap, "%s %s at %s (%s)%s%s%s = %s", dir, b, r, rate->name,
                     f[0] ? " + " : "", f, f[0] ? " per copy" : "", t);
    else
        gpo_snprintf(text, cap, "%s %s: at least %s per copy (%s; the rate was not measured)", dir,
                     b, t, fixed->name);
    return ns;
}

gpuopt_status gpo_derive_transfer_streams(const gpo_knob_input *in, const gpo_derive_env *env,
                                          gpo_derivation *out)
{
    const gpuopt_workload *w = latency_workload(env, out);
    if (!w)
        return GPUOPT_OK;
    if (!w->step_time_ns || (!w->h2d_bytes_per_step && !w->d2h_bytes_per_step))
        return gpo_say(GPUOPT_OK, out->how, sizeof out->how,
                       "the workload gives no bytes copied per step or no step time target");
    char up[240], down[240], sep[256], s[32], t[32];
    int ka, kb;
    double a = direction("host-to-device", w->h2d_bytes_per_step, &in[0], &in[2], &in[4], &ka, up,
                         sizeof up);
    double b = direction("device-to-host", w->d2h_bytes_per_step, &in[1], &in[3], &in[5], &kb, down,
                         sizeof down);
    if (!ka && !kb) {
        gpo_snprintf(out->how, sizeof out->how, "the transfer costs were not measured");
        gpo_snprintf(out->warning, sizeof out->warning,
                     "%s: whether to overlap transfers with kernels (transfer.streams) needs the "
                     "transfer rates, which level 2 measures (measured.h2d_pinned, ...); this "
                     "plan is at level %d",
                     env->dev->info.id, (int)env->level);
        return GPUOPT_OK;
    }
    if (!ka)
        gpo_snprintf(up, sizeof up, "host-to-device not measured");
    if (!kb)
        gpo_snprintf(down, sizeof down, "device-to-host not measured");
    double share = 100.0 * (a + b) / (double)w->step_time_ns;
    gpo_format_ns(a + b, t, sizeof t);
    gpo_format_ns((double)w->step_time_ns, s, sizeof s);
    char head[600];
    gpo_snprintf(head, sizeof head, "transfers %s%s%s = %s per step, %.1f%% of the %s step target",
                 up, up[0] && down[0] ? " + " : "", down, t, share, s);
    int engines = env->dev->copy_engines;
    out->present = 1;
    gpo_strlcpy(out->value, "1", sizeof out->value);
    if (!gpo_fit_memory_is_separate(env->dev, sep, sizeof sep)) {
        gpo_snprintf(out->how, sizeof out->how,
                     "%s; %s, so a copy is a copy within one memory: one stream", head, sep);
    } else if (share < GPO_LATENCY_SHARE_PCT) {
        gpo_snprintf(out->how, sizeof out->how,
                     "%s: under the %d%% at which overlapping them with kernels pays for "
                     "pinned buffers and a pipeline; one stream",
                     head, GPO_LATENCY_SHARE_PCT);
    } else if (engines < 0) {
        gpo_snprintf(out->how, sizeof out->how,
                     "%s, but the device does not report its copy engines, so whether a copy "
                     "can run beside a kernel is unknown: one stream",
                     head);
    } else if (engines == 0) {
        gpo_snprintf(out->how, sizeof out->how,
                     "%s, but the device has no copy engine (CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_"
                     "COUNT 0): copies and kernels run one after the other whatever the "
                     "streams: one stream",
                     head);
    } else {
        int n = 1 + (engines < 2 ? engines : 2);
        gpo_snprintf(out->value, sizeof out->value, "%d", n);
        gpo_snprintf(out->how, sizeof out->how,
                     "%s, at or above %d%%, and the device has %d copy engine%s: split the step "
                     "over %d streams (%s) with asynchronous copies from pinned host memory "
                     "(copies from pageable memory are staged and do not overlap; CUDA C++ Best "
                     "Practices Guide, \"Asynchronous and Overlapping Transfers with "
                     "Computation\")",
                     head, GPO_LATENCY_SHARE_PCT, engines, engines == 1 ? "" : "s", n,
                     n == 2 ? "one step's copies beside another's kernels; one engine serves "
                              "both directions"
                            : "copies in, kernels, copies out");
    }
    return GPUOPT_OK;
}
