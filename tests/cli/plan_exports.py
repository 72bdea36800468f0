#!/usr/bin/env python3
"""gpuopt plan --env and --apply-env agree with the plan's values.

For every device the tests can reach (the CPU, PoCL's CPU device, the CUDA
and HIP test doubles named by the environment), at level 0 and 1, with no
workload, --precision-sensitive and --reduced-precision, and with the
overrides the issue reported (GPUOPT_KNOBS=threads=1, cuda.tf32=true on a
precision-sensitive plan, cuda.alloc.max_split_mb, cuda.cublas_workspace_bytes):
every knob of `plan --json` with an environment variable is exported by
`plan --env` with the same value (its lines evaluated by sh, which keeps a
variable the user set, as --apply-env does) and set by `plan --apply-env` to
it, and nothing else is exported or set.

Usage: plan_exports.py GPUOPT_BINARY
"""
import json
import os
import re
import subprocess
import sys

GPUOPT = sys.argv[1]

# Every variable a catalogue exports (docs/knobs.md, "Domains and derivations").
NAMES = [
    "OMP_NUM_THREADS", "OMP_PROC_BIND", "OMP_PLACES", "ONEDNN_DEFAULT_FPMATH_MODE",
    "CUDA_MODULE_LOADING", "NVIDIA_TF32_OVERRIDE", "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE",
    "CUBLASLT_WORKSPACE_SIZE", "CUBLAS_WORKSPACE_CONFIG", "PYTORCH_CUDA_ALLOC_CONF",
    "HIPBLASLT_ALLOW_TF32", "MIOPEN_FIND_MODE", "HIP_VISIBLE_DEVICES", "HSA_OVERRIDE_GFX_VERSION",
    "HIP_ENABLE_DEFERRED_LOADING",
]

DEVICES = [("cpu", "cpu:0"), ("opencl", "opencl:0")]
DEVICES += [("cuda", f"cuda:{i}") for i in range(len(os.environ["GPUOPT_FAKE_CUDA_DEVICES"].split(":")))]
DEVICES += [("rocm", f"rocm:{i}") for i in range(len(os.environ["GPUOPT_FAKE_HIP_DEVICES"].split(":")))]

WORKLOADS = [[], ["--precision-sensitive"], ["--reduced-precision"]]

# (backend, GPUOPT_KNOBS, workload flags, {knob: value the plan must show})
OVERRIDES = [
    ("cpu", "threads=1", [], {"threads": "1", "omp.num_threads": "1"}),
    ("cuda", "cuda.tf32=true", ["--precision-sensitive"],
     {"cuda.tf32": "true", "cuda.torch_tf32_override": "1", "cuda.tf32_override": None}),
    ("cuda", "cuda.alloc.max_split_mb=64", [],
     {"cuda.alloc.max_split_mb": "64", "cuda.alloc_conf": "~max_split_size_mb:64,"}),
    ("cuda", "cuda.cublas_workspace_bytes=8MiB", [], {"cuda.cublaslt_workspace_kib": "8192"}),
    ("rocm", "rocm.tf32=true", [], {"rocm.hipblaslt_allow_tf32": "1"}),
]

failures = []


def run(args, knobs=None):
    env = {k: v for k, v in os.environ.items() if k not in NAMES}
    if knobs:
        env["GPUOPT_KNOBS"] = knobs
    r = subprocess.run([GPUOPT] + args, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        failures.append(f"gpuopt {' '.join(args)} exited {r.returncode}: {r.stderr}")
        return None
    return r.stdout


def evaluate(lines, preset=None):
    """The NAMES a POSIX shell exports after eval of the lines."""
    env = {k: v for k, v in os.environ.items() if k not in NAMES}
    env.update(preset or {})
    r = subprocess.run(["sh", "-c", 'eval "$1" && env', "sh", lines], env=env,
                       capture_output=True, text=True)
    if r.returncode != 0:
        failures.append(f"sh could not eval the --env lines ({r.stderr.strip()}):\n{lines}")
    out = {}
    for line in r.stdout.splitlines():
        name, _, value = line.partition("=")
        if name in NAMES:
            out[name] = value
    return out


def check(backend, device, level, flags, knobs=None, expect=None):
    what = f"{device} level {level} {' '.join(flags)} GPUOPT_KNOBS={knobs or ''}"
    base = ["plan", "--backend", backend, "--device", device, "--level", str(level)] + flags
    out = run(base + ["--json"], knobs)
    if out is None:
        return 0
    plan = json.loads(out)
    if not plan["device"].startswith(backend + ":"):
        failures.append(f"{what}: planned for {plan['device']}")
        return 0
    shown = {k["name"]: k for k in plan["knobs"]}
    for name, value in (expect or {}).items():
        got = shown.get(name)
        have = None if got is None else str(got["value"]).lower() if got["type"] == "bool" else str(got["value"])
        if value and value.startswith("~"):
            if have is None or value[1:] not in have:
                failures.append(f"{what}: {name} = {have}, expected it to hold {value[1:]}")
        elif have != value:
            failures.append(f"{what}: {name} = {have}, expected {value}")
    want = {k["env"]: str(k["value"]).lower() if k["type"] == "bool" else str(k["value"])
            for k in plan["knobs"] if k["env"]}
    lines = run(base + ["--env"], knobs) or ""
    for line in lines.splitlines():
        if not re.fullmatch(r': "\$\{([A-Z0-9_]+)=.*\}"; export \1', line):
            failures.append(f"{what}: --env printed '{line}'")
    # What a shell makes of the lines: every variable set to the plan's
    # value, and one the user set first kept, as --apply-env keeps it.
    exported = evaluate(lines)
    if exported != want:
        failures.append(f"{what}: --env exports {exported}, the plan shows {want}")
    if want:
        first = sorted(want)[0]
        kept = evaluate(lines, {first: "user-value"})
        if kept.get(first) != "user-value" or {k: v for k, v in kept.items() if k != first} != \
                {k: v for k, v in want.items() if k != first}:
            failures.append(f"{what}: with {first} set, --env's lines give {kept}")
    applied = {}
    for line in (run(base + ["--apply-env", "--", "env"], knobs) or "").splitlines():
        name, _, value = line.partition("=")
        if name in NAMES:
            applied[name] = value
    if applied != want:
        failures.append(f"{what}: --apply-env set {applied}, the plan shows {want}")
    return 1


checked = 0
for backend, device in DEVICES:
    probe = subprocess.run([GPUOPT, "plan", "--backend", backend, "--device", device, "--json"],
                           capture_output=True, text=True)
    if probe.returncode != 0 and backend == "opencl":
        print(f"skipping {device}: {probe.stderr.strip()}")
        continue
    for level in (0, 1):
        for flags in WORKLOADS:
            checked += check(backend, device, level, flags)
    for ob, knobs, flags, expect in OVERRIDES:
        if ob == backend:
            checked += check(backend, device, 1, flags, knobs, expect)

for f in failures:
    print("FAIL:", f)
print(f"{checked} plans checked, {len(failures)} failures")
sys.exit(1 if failures or checked < 40 else 0)
