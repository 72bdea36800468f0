#!/usr/bin/env python3
"""Helpers of tools/gpu-check.sh: they read what the commands wrote and say
PASS, FAIL, SKIP or INFO, one tab-separated line each ("STATUS\tcheck\tdetail"),
which the script records; `summary` writes the markdown. Standard library only
(the GPU machine gets no package installs).

Subcommands (each reads the files the script saved):
  sm-counts LIBCUDA                  multiprocessor counts straight from the driver
  compare-nvidia SMI.csv DEVICES.json SM.json
  compare-amd SMI.json DEVICES.json
  visible DEVICES.json BACKEND UUID|PCI   exactly that device is listed
  hidden DEVICES.json BACKEND VARIABLE    no device; the reason names VARIABLE
  plan PLAN.json DRY                  level 2 applied, its measured knobs
  plan-cached PLAN.json DRY           the second plan answers from the cache
  tune TUNE.json M N K OUT.json       the best candidate in GFLOP/s
  torch-script                       the PyTorch baseline's script: torch.mm (fp32,
                                      TF32 off), and a level-2 plan inside the same
                                      process; `torch OUT.json DRY` reads what it wrote
  torch-apply-script                 gpuopt.torch.apply() in a fresh PyTorch process,
                                      each setting read back with torch's getters;
                                      `torch-apply OUT.json DRY` reads what it wrote
  fake-torch DIR [VENDOR]            a stand-in torch package for the dry run (a ROCm
                                      build for VENDOR amd)
  fraction TUNE.json TORCH.json       the tuned SGEMM as a fraction of torch.mm
  fault RC STDERR VENDOR DRY          the tuner stopped naming a sticky fault
  stub-smi VENDOR DEVICE.json... DRIVER   what nvidia-smi / amd-smi would print
  summary RESULTS.tsv META.json       the markdown summary
"""
import json
import os
import re
import sys


def say(status, check, detail):
    detail = " ".join(str(detail).split())
    print(f"{status}\t{check}\t{detail}")


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def norm_pci(text):
    """'00000000:18:00.0' (nvidia-smi) or '0000:18:00.0' -> '0000:18:00.0'."""
    m = re.match(r"^([0-9a-fA-F]+):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])$", text.strip())
    if not m:
        return text.strip().lower()
    return f"{int(m.group(1), 16):04x}:{m.group(2).lower()}:{m.group(3).lower()}.{m.group(4)}"


def backend_devices(doc, backend):
    return [d for d in doc.get("devices", []) if d.get("backend") == backend]


def backend_entry(doc, backend):
    for b in doc.get("backends", []):
        if b.get("name") == backend:
            return b
    return {}


# ---- discovery ------------------------------------------------------------


def sm_counts(lib):
    """Reads each device's PCI location and multiprocessor count with ctypes
    from the driver itself: a path independent of the library's."""
    import ctypes

    out = {}
    try:
        cu = ctypes.CDLL(lib)
        if cu.cuInit(0) != 0:
            raise RuntimeError("cuInit failed")
        n = ctypes.c_int(0)
        cu.cuDeviceGetCount(ctypes.byref(n))
        for i in range(n.value):
            dev = ctypes.c_int(0)
            cu.cuDeviceGet(ctypes.byref(dev), i)
            vals = {}
            # CUdevice_attribute: MULTIPROCESSOR_COUNT 16, PCI_BUS_ID 33,
            # PCI_DEVICE_ID 34, PCI_DOMAIN_ID 50 (cuda.h).
            for name, attr in (("sms", 16), ("bus", 33), ("dev", 34), ("dom", 50)):
                v = ctypes.c_int(-1)
                cu.cuDeviceGetAttribute(ctypes.byref(v), attr, dev)
                vals[name] = v.value
            pci = f"{vals['dom']:04x}:{vals['bus']:02x}:{vals['dev']:02x}.0"
            out[pci] = vals["sms"]
    except (OSError, RuntimeError, AttributeError) as e:
        out = {"error": str(e)}
    print(json.dumps(out))


def compare_nvidia(smi_csv, devices_json, sm_json):
    doc = load(devices_json)
    devs = {d.get("uuid"): d for d in backend_devices(doc, "cuda")}
    sms = load(sm_json) if os.path.exists(sm_json) else {}
    rows = []
    with open(smi_csv, encoding="utf-8") as f:
        for line in f:
            cols = [c.strip() for c in line.split(",")]
            if len(cols) >= 7:
                rows.append(cols)
    if not rows:
        say("FAIL", "discovery", "nvidia-smi listed no GPU")
        return
    if len(rows) != len(devs):
        say("FAIL", "discovery: count", f"nvidia-smi lists {len(rows)} GPUs, the library {len(devs)}")
    else:
        say("PASS", "discovery: count", f"{len(rows)} GPU(s) on both")
    for idx, uuid, name, pci, cc, mem_mib, driver in (r[:7] for r in rows):
        d = devs.get(uuid)
        check = f"discovery: GPU {idx} ({uuid})"
        if not d:
            say("FAIL", check, f"the library lists no device with nvidia-smi's UUID; it has {sorted(devs)}")
            continue
        bad = []
        if d.get("name") != name:
            bad.append(f"name '{d.get('name')}' vs '{name}'")
        if norm_pci(d.get("pci_bus_id", "")) != norm_pci(pci):
            bad.append(f"PCI {d.get('pci_bus_id')} vs {pci}")
        ours_cc = (d.get("arch") or {}).get("compute_capability")
        if cc != "?" and ours_cc != cc:  # "?": a driver too old to report it
            bad.append(f"compute capability {ours_cc} vs {cc}")
        ours_mib = (d.get("memory_bytes") or 0) / 2**20
        try:
            theirs = float(mem_mib)
            # cuDeviceTotalMem counts what CUDA may use; nvidia-smi the
            # framebuffer: they differ by the driver's reservation (<3%).
            if not theirs or abs(ours_mib - theirs) / theirs > 0.03:
                bad.append(f"memory {ours_mib:.0f} MiB vs {theirs:.0f} MiB")
        except ValueError:
            bad.append(f"memory: nvidia-smi said '{mem_mib}'")
        kdrv = ((d.get("details") or {}).get("cuda") or {}).get("kernel_driver_version")
        if kdrv is not None and kdrv != driver:
            bad.append(f"driver {kdrv} vs {driver}")
        sm_direct = sms.get(norm_pci(pci))
        if sm_direct is not None and sm_direct != d.get("compute_units"):
            bad.append(f"SMs {d.get('compute_units')} vs {sm_direct} from cuDeviceGetAttribute")
        facts = (f"{name}, {norm_pci(pci)}, sm {ours_cc}, {ours_mib:.0f} MiB (nvidia-smi {mem_mib}), "
                 f"driver {driver}"
                 + ("" if kdrv is not None else " (no /proc/driver/nvidia/version to compare)")
                 + f", {d.get('compute_units')} SMs"
                 + (" (as cuDeviceGetAttribute says)" if sm_direct is not None else " (no direct count)"))
        say("FAIL" if bad else "PASS", check, "; ".join(bad) if bad else facts)


def compare_amd(smi_json, devices_json):
    doc = load(devices_json)
    devs = backend_devices(doc, "rocm")
    try:
        smi = load(smi_json)
    except (OSError, ValueError) as e:
        say("FAIL", "discovery", f"cannot read the SMI tool's JSON: {e}")
        return
    # amd-smi list --json: [{"gpu": 0, "bdf": "0000:0c:00.0", "uuid": "..."}, ...]
    theirs = sorted(norm_pci(g.get("bdf", "")) for g in smi if isinstance(g, dict))
    ours = sorted(norm_pci(d.get("pci_bus_id", "")) for d in devs)
    if theirs and theirs == ours:
        say("PASS", "discovery: PCI locations", f"{len(ours)} GPU(s): {', '.join(ours)}")
    else:
        say("FAIL", "discovery: PCI locations", f"amd-smi {theirs} vs the library {ours}")
    for d in devs:
        say("INFO", f"discovery: {d.get('id')}",
            f"{d.get('name')}, {(d.get('arch') or {}).get('name')}, {d.get('compute_units')} CUs, "
            f"{(d.get('memory_bytes') or 0) / 2**30:.1f} GiB, {d.get('uuid')}")


def visible(devices_json, backend, key):
    devs = backend_devices(load(devices_json), backend)
    keys = [d.get("uuid") if key.startswith(("GPU-", "MIG-")) else norm_pci(d.get("pci_bus_id", ""))
            for d in devs]
    want = key if key.startswith(("GPU-", "MIG-")) else norm_pci(key)
    if keys == [want]:
        say("PASS", "visibility: one device named", f"exactly {want} is listed")
    else:
        say("FAIL", "visibility: one device named", f"listed {keys}, expected only {want}")


def hidden(devices_json, backend, variable):
    doc = load(devices_json)
    b = backend_entry(doc, backend)
    devs = backend_devices(doc, backend)
    reason = b.get("reason") or ""
    if not devs and variable in reason:
        say("PASS", f"visibility: {variable}=''", f"no device; the reason says: {reason}")
    else:
        say("FAIL", f"visibility: {variable}=''", f"{len(devs)} device(s), reason '{reason}'")


# ---- level 2 --------------------------------------------------------------


def tier2_knobs(plan):
    return [k for k in plan.get("knobs", []) if k.get("tier") == 2]


def plan(path, dry):
    p = load(path)
    knobs = {k["name"]: k for k in tier2_knobs(p)}
    applied = p.get("level_applied")
    want = ["measured.memory_bandwidth", "measured.launch_latency_ns", "launch.block_size",
            "measured.h2d_pinned", "measured.h2d_pageable", "measured.d2h_pinned"]
    missing = [w for w in want if w not in knobs]
    warnings = "; ".join(p.get("warnings") or [])
    if applied == 2 and not missing:
        bw = knobs["measured.memory_bandwidth"]["value"] / 1e9
        lat = knobs["measured.launch_latency_ns"]["value"] / 1e3
        say("PASS", "level 2 measures for real",
            f"{p.get('device')} ({p.get('device_name')}): copy bandwidth {bw:.0f} GB/s, launch "
            f"latency {lat:.1f} us, block {knobs['launch.block_size']['value']}, h2d pinned "
            f"{knobs['measured.h2d_pinned']['value'] / 1e9:.1f} GB/s, pageable "
            f"{knobs['measured.h2d_pageable']['value'] / 1e9:.1f} GB/s")
    elif dry == "1":
        say("SKIP", "level 2 measures for real",
            f"dry run: the test double runs no kernels, so the plan stays at level {applied}: {warnings}")
    else:
        say("FAIL", "level 2 measures for real",
            f"level {applied} applied; missing {missing}; warnings: {warnings}")


def plan_cached(path, dry):
    p = load(path)
    knobs = tier2_knobs(p)
    if knobs and all(k.get("source") == "cache" for k in knobs):
        say("PASS", "second plan from the cache", f"{len(knobs)} measured knobs, all from the cache")
    elif dry == "1" and not knobs:
        say("SKIP", "second plan from the cache", "dry run: nothing was measured to cache")
    else:
        say("FAIL", "second plan from the cache",
            f"sources {[k.get('source') for k in knobs]}, level {p.get('level_applied')}")


# ---- tuning ---------------------------------------------------------------


def tune(path, m, n, k, out):
    m, n, k = int(m), int(n), int(k)
    try:
        r = load(path)
    except (OSError, ValueError) as e:
        say("FAIL", "SGEMM tuning", f"no result: {e}")
        return
    best = r.get("best", -1)
    cands = r.get("candidates") or []
    ok = [c for c in cands if c.get("status") == "ok"]
    statuses = {}
    for c in cands:
        statuses[c.get("status")] = statuses.get(c.get("status"), 0) + 1
    if best is None or best < 0 or best >= len(cands):
        first = next((c.get("message") for c in cands if c.get("message")), "")
        say("FAIL", "SGEMM tuning", f"no valid configuration; statuses {statuses}; first: {first[:300]}")
        return
    b = cands[best]
    final = {f.get("index"): f for f in r.get("final") or []}
    ns = (final.get(best) or {}).get("median_ns") or b.get("median_ns")
    gflops = 2.0 * m * n * k / ns
    summary = {"gflops": gflops, "median_ns": ns, "params": b.get("params"),
               "evaluations": r.get("evaluations"), "legal": r.get("legal"),
               "valid": len(ok), "statuses": statuses, "validated": r.get("validated"),
               "wall_s": r.get("wall_s"), "stop_reason": r.get("stop_reason"),
               "strategy": r.get("strategy"), "device": r.get("device")}
    with open(out, "w", encoding="utf-8") as f:
        json.dump(summary, f)
    params = " ".join(f"{key}={val}" for key, val in (b.get("params") or {}).items())
    status = "PASS" if r.get("validated") and len(ok) >= 3 else "FAIL"
    say(status, "SGEMM tuning",
        f"{m}x{n}x{k} on {r.get('device')}: best {gflops:.0f} GFLOP/s ({ns / 1e6:.3f} ms) with "
        f"{params}; {len(ok)} valid of {r.get('evaluations')} evaluated ({r.get('legal')} legal, "
        f"{r.get('strategy')}, {r.get('wall_s', 0):.0f} s, stopped: {r.get('stop_reason')}); "
        f"validated against the reference: {r.get('validated')}")


TORCH_BASELINE = r'''
import json, os, statistics, sys
m, n, k, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
res = {}
try:
    import torch
    if not torch.cuda.is_available():
        raise RuntimeError("torch has no CUDA/ROCm device")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda:0")
    a = torch.randn(m, k, device=dev, dtype=torch.float32)
    b = torch.randn(k, n, device=dev, dtype=torch.float32)
    for _ in range(5):
        c = a @ b
    torch.cuda.synchronize()
    times = []
    for _ in range(30):
        e0 = torch.cuda.Event(enable_timing=True)
        e1 = torch.cuda.Event(enable_timing=True)
        e0.record()
        c = a @ b
        e1.record()
        e1.synchronize()
        times.append(e0.elapsed_time(e1))
    ms = statistics.median(times)
    res.update(torch=torch.__version__, gpu=torch.cuda.get_device_name(0),
               torch_ms=ms, torch_gflops=2.0 * m * n * k / (ms * 1e6))
    # The host program keeps working around the library: a level-2 plan
    # in this process, with PyTorch's context current, then PyTorch again.
    import gpuopt
    with gpuopt.Context(backends=os.environ.get("GPU_CHECK_BACKEND", "cuda")) as ctx:
        plan = ctx.plan(level=2)
        res["plan_level"] = plan.level_applied
    c2 = a @ b
    torch.cuda.synchronize()
    res["torch_after_plan_ok"] = bool(torch.allclose(c, c2))
    res["torch_device_after"] = torch.cuda.current_device()
except Exception as e:  # every failure becomes a line of the summary
    res["error"] = f"{type(e).__name__}: {e}"
with open(out, "w") as f:
    json.dump(res, f)
'''


TORCH_APPLY = r'''
import json, os, sys, warnings
out = sys.argv[1]
res = {}
def settings(torch):
    """What torch says now, through its own getters."""
    got = {}
    for path in ("backends.cuda.matmul.allow_tf32", "backends.cuda.matmul.fp32_precision",
                 "backends.cudnn.allow_tf32", "backends.cudnn.conv.fp32_precision",
                 "backends.cudnn.benchmark"):
        obj = torch
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")   # 2.9+: the legacy getters are deprecated
                for part in path.split("."):
                    obj = getattr(obj, part)
            got["torch." + path] = obj
        except Exception as e:  # noqa: BLE001 - absent, or refused by this version
            got["torch." + path] = f"<{type(e).__name__}>"
    for getter, setter in (("get_float32_matmul_precision", "set_float32_matmul_precision"),
                           ("get_num_threads", "set_num_threads"),
                           ("get_num_interop_threads", "set_num_interop_threads")):
        fn = getattr(torch, getter, None)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                got["torch." + setter] = fn() if callable(fn) else "<absent>"
        except Exception as e:  # noqa: BLE001 - torch 2.9+ refuses mixed TF32 APIs
            got["torch." + setter] = f"<{type(e).__name__}>"
    return got
try:
    import torch
    if not torch.cuda.is_available():
        raise RuntimeError("torch has no CUDA/ROCm device")
    if torch.cuda.is_initialized():
        raise RuntimeError("CUDA started before gpuopt.torch.apply()")
    import gpuopt.torch
    before = settings(torch)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        report = gpuopt.torch.apply(torch=torch)
    after = settings(torch)
    # The variables apply() set now (not those already in force).
    env = {s.what: os.environ.get(s.what) for s in report.set
           if s.what.isupper() and s.note.startswith("set")}
    dev = gpuopt.torch.device(torch=torch)
    x = torch.ones(256, 256, device=dev)     # CUDA starts here, after the variables
    y = (x @ x).sum().item()
    res.update(torch=torch.__version__, device=str(dev), plan_device=report.plan_device,
               gpu=torch.cuda.get_device_name(dev),
               set={s.what: repr(s.after) for s in report.set},
               kept={s.what: repr(s.before) for s in report.kept},
               not_applicable={s.what: s.note for s in report.not_applicable},
               before={k: repr(v) for k, v in before.items()},
               after={k: repr(v) for k, v in after.items()}, env=env,
               autocast=str(report.autocast_dtype), product_ok=(y == 256.0 * 256 * 256),
               warnings=[str(w.message) for w in seen] + report.warnings,
               cuda_initialised_after=torch.cuda.is_initialized())
except Exception as e:  # every failure becomes a line of the summary
    res["error"] = f"{type(e).__name__}: {e}"
with open(out, "w") as f:
    json.dump(res, f)
'''


def torch_apply_report(out, dry):
    """gpuopt.torch.apply() on the GPU's PyTorch: every setting the report
    says it set reads back so through torch, the environment variables are
    in place before CUDA starts, and PyTorch computes afterwards."""
    check = "gpuopt.torch.apply()"
    try:
        r = load(out)
    except (OSError, ValueError) as e:
        say("SKIP" if dry == "1" else "FAIL", check, f"no output: {e}")
        return
    if "error" in r:
        err = r["error"]
        no_torch = err.startswith(("ModuleNotFoundError", "ImportError")) or "no CUDA" in err
        say("SKIP" if no_torch or dry == "1" else "FAIL", check, f"not run: {err}")
        return
    bad = [f"{k}: the report says {v}, torch says {r['after'].get(k)}"
           for k, v in r.get("set", {}).items()
           if k in r.get("after", {}) and r["after"][k] != v]
    bad += [f"{k} is not in the environment" for k, v in r.get("env", {}).items() if v is None]
    if not r.get("product_ok"):
        bad.append("PyTorch's product after apply() was wrong")
    if not r.get("set"):
        bad.append("the report sets nothing")
    changed = ", ".join(f"{k} {r['before'].get(k)} -> {v}" for k, v in r.get("set", {}).items()
                        if k in r.get("before", {}) and r["before"][k] != v)
    detail = (f"torch {r.get('torch')} on {r.get('gpu')} ({r.get('device')}, plan for "
              f"{r.get('plan_device')}): set {len(r.get('set', {}))} ({changed or 'all already so'}), "
              f"environment {sorted(r.get('env', {}))}, kept {sorted(r.get('kept', {}))}, not "
              f"applicable {sorted(r.get('not_applicable', {}))}; autocast {r.get('autocast')}")
    if r.get("warnings"):
        detail += f"; warnings: {r['warnings']}"
    say("FAIL" if bad else "PASS", check, "; ".join(bad) + ("; " if bad else "") + detail)


# A stand-in for the few calls of PyTorch the baseline makes, for the dry
# run only: it proves the baseline's code, not PyTorch.
FAKE_TORCH = r'''
"""Dry-run stand-in for torch (tools/gpu_check.py): not PyTorch."""
__version__ = "0.0-dry-run"
float32 = "float32"
class _Flags: allow_tf32 = True
class _Backends:
    class cuda: matmul = _Flags()
    cudnn = _Flags()
backends = _Backends()
class _Tensor:
    def __matmul__(self, other): return _Tensor()
    def sum(self): return self
    def item(self): return 256.0 * 256 * 256
def device(name, index=None): return name if index is None else f"{name}:{index}"
def ones(*shape, device=None): return _Tensor()
def get_num_threads(): return 1
def set_num_threads(n): pass
def randn(*shape, device=None, dtype=None): return _Tensor()
def allclose(a, b): return True
class _Event:
    def __init__(self, enable_timing=False): pass
    def record(self): pass
    def synchronize(self): pass
    def elapsed_time(self, end): return 0.25
class cuda:
    Event = _Event
    @staticmethod
    def is_available(): return True
    @staticmethod
    def synchronize(): pass
    @staticmethod
    def get_device_name(i): return "dry-run stand-in"
    @staticmethod
    def current_device(): return 0
    @staticmethod
    def is_initialized(): return False
version = type("version", (), {"cuda": "dry-run", "hip": None})
'''


def fake_torch(directory, vendor="nvidia"):
    """The stand-in, as a CUDA build of torch, or a ROCm one for vendor amd."""
    os.makedirs(os.path.join(directory, "torch"), exist_ok=True)
    text = FAKE_TORCH
    if vendor == "amd":
        text = text.replace('{"cuda": "dry-run", "hip": None}', '{"cuda": None, "hip": "dry-run"}')
    with open(os.path.join(directory, "torch", "__init__.py"), "w", encoding="utf-8") as f:
        f.write(text)


def torch_report(out, dry):
    try:
        r = load(out)
    except (OSError, ValueError) as e:
        say("SKIP" if dry == "1" else "FAIL", "PyTorch baseline", f"no output: {e}")
        return
    if "torch_gflops" not in r:
        err = r.get("error", "unknown")
        no_torch = err.startswith(("ModuleNotFoundError", "ImportError")) or "no CUDA" in err
        say("SKIP" if no_torch or dry == "1" else "FAIL", "PyTorch baseline",
            f"not measured: {err}")
        return
    say("INFO", "PyTorch baseline",
        f"torch {r['torch']} torch.mm fp32 (TF32 off) on {r['gpu']}: {r['torch_gflops']:.0f} "
        f"GFLOP/s ({r['torch_ms']:.3f} ms)")
    if "error" in r:
        say("FAIL", "host context after a plan", r["error"])
    elif r.get("torch_after_plan_ok") and r.get("torch_device_after") == 0:
        say("PASS", "host context after a plan",
            f"PyTorch computed the same product after a level-{r.get('plan_level')} plan in its "
            "process, on the same current device")
    else:
        say("FAIL", "host context after a plan", json.dumps(r))


def fraction(tune_json, torch_json):
    try:
        t, p = load(tune_json), load(torch_json)
        frac = t["gflops"] / p["torch_gflops"]
    except (OSError, ValueError, KeyError, ZeroDivisionError):
        return
    params = " ".join(f"{k}={v}" for k, v in (t.get("params") or {}).items())
    say("INFO", "SGEMM against torch.mm",
        f"{frac:.0%} of torch.mm ({t['gflops']:.0f} vs {p['torch_gflops']:.0f} GFLOP/s) with {params}")


def fault(rc, stderr_path, vendor, dry):
    """The tuner on a candidate that writes out of bounds: it must stop at
    once with the sticky error named, and never call it a failed build."""
    rc = int(rc)
    text = ""
    if os.path.exists(stderr_path):
        with open(stderr_path, encoding="utf-8", errors="replace") as f:
            text = f.read().strip()
    check = "faulting candidate"
    names = re.findall(r"(CUDA_ERROR_[A-Z_]+|hipError[A-Za-z]+)", text)
    last = text.splitlines()[-1][:400] if text else ""
    if rc > 128:
        # On ROCm a GPU memory fault aborts the process (ROCr's default
        # handler); only a measurement worker can survive it.
        say("INFO" if vendor == "amd" else "FAIL", check,
            f"the tuning process died by signal {rc - 128}; surviving that needs a measurement "
            "worker (issue 11, item 1)")
    elif rc != 0 and "faulted" in text and names and "build failed" not in text:
        say("PASS", check, f"the tuner stopped at once naming {names[0]}: {last}")
    else:
        say("FAIL", check, f"exit {rc}: {last}")


# ---- dry-run stand-ins ----------------------------------------------------


def stub_smi(vendor, paths, driver):
    """The output nvidia-smi --query-gpu (csv) or amd-smi list --json would
    give for the test double's device descriptions."""
    if vendor == "nvidia":
        for i, p in enumerate(paths):
            d = load(p)
            a = d["attributes"]
            pci = f"{a.get('PCI_DOMAIN_ID', 0):08x}:{a.get('PCI_BUS_ID', 0):02x}:{a.get('PCI_DEVICE_ID', 0):02x}.0"
            cc = f"{d['compute_capability'][0]}.{d['compute_capability'][1]}"
            print(f"{i}, {d['uuid']}, {d['name']}, {pci.upper()}, {cc}, "
                  f"{d['total_memory_bytes'] // 2**20}, {driver}")
    else:
        out = []
        for i, p in enumerate(paths):
            d = load(p)
            pci = d.get("pci", {})
            bdf = f"{pci.get('domain', 0):04x}:{pci.get('bus', 0):02x}:{pci.get('device', 0):02x}.0"
            out.append({"gpu": i, "bdf": bdf, "uuid": d.get("uniqueId")})
        print(json.dumps(out))


# ---- summary --------------------------------------------------------------


def summary(results, meta_path):
    meta = load(meta_path)
    rows = []
    with open(results, encoding="utf-8") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t", 2)
            if len(parts) == 3:
                rows.append(parts)
    counts = {}
    for s, _, _ in rows:
        counts[s] = counts.get(s, 0) + 1
    print(f"### GPU check: {meta.get('gpu', 'unknown GPU')} ({meta.get('date')})")
    print()
    if meta.get("dry_run"):
        print("**Dry run on the test doubles: not a measurement of any GPU.**")
        print()
    print(f"- machine: {meta.get('host')}; driver {meta.get('driver')}; gpuopt {meta.get('version')}")
    print(f"- command: `{meta.get('command')}`; {meta.get('wall_s')} s")
    print("- result: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    print()
    print("| check | result | detail |")
    print("| --- | --- | --- |")
    for s, check, detail in rows:
        detail = detail.replace("|", "\\|")
        print(f"| {check} | {s} | {detail} |")


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    cmd, args = argv[1], argv[2:]
    table = {
        "sm-counts": lambda: sm_counts(*args),
        "compare-nvidia": lambda: compare_nvidia(*args),
        "compare-amd": lambda: compare_amd(*args),
        "visible": lambda: visible(*args),
        "hidden": lambda: hidden(*args),
        "plan": lambda: plan(*args),
        "plan-cached": lambda: plan_cached(*args),
        "tune": lambda: tune(*args),
        "torch-script": lambda: sys.stdout.write(TORCH_BASELINE),
        "torch-apply-script": lambda: sys.stdout.write(TORCH_APPLY),
        "torch-apply": lambda: torch_apply_report(*args),
        "fake-torch": lambda: fake_torch(*args),
        "torch": lambda: torch_report(*args),
        "fraction": lambda: fraction(*args),
        "fault": lambda: fault(*args),
        "stub-smi": lambda: stub_smi(args[0], args[1:-1], args[-1]),
        "summary": lambda: summary(*args),
    }
    if cmd not in table:
        print(f"unknown subcommand {cmd}", file=sys.stderr)
        return 2
    try:
        table[cmd]()
    except (OSError, ValueError, KeyError, TypeError) as e:
        # A helper never stops the check: its failure is one more line.
        say("FAIL", cmd, f"the helper could not read its input: {type(e).__name__}: {e}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
