#!/usr/bin/env python3
"""Allocation-failure sweep: runs a scenario once as the baseline, then
again with its Nth allocation failing (GPUOPT_ALLOC_FAIL_AT=N, an
allocation-failure-injection build: src/util/alloc_fail.c) for N = 1,
1 + STRIDE, 1 + 2 STRIDE, ... until a run makes fewer than N allocations
(nothing was left to fail). Every run must end without a sanitizer report
(crash, leak, undefined behaviour), and either print what the baseline
printed or report a failure: exit status 1 with a message on stderr. A
success with missing or different output is a finding, and so is a level-2
plan that fell back to a lower level without saying memory ran out.

Usage: alloc_sweep.py SCENARIO STRIDE GPUOPT API_SEQUENCE SYSFS_ROOT
  SCENARIO: devices-json, plan-json, plan-level2, api
  STRIDE: 1 tries every allocation; GPO_ALLOC_STRIDE in the environment
          overrides it (make check-full sets 1).
  SYSFS_ROOT: the recorded tree the API sequence plans on (its free memory
          sizes a batch, so it must not change between runs).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

SANITIZER = re.compile(r"ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|SUMMARY: \w+Sanitizer")
HERE = os.path.dirname(os.path.abspath(__file__))


def known_findings():
    """known_findings.txt: "SOURCE_PATH_PART  why" lines. A sanitizer report
    whose first frame in the library's own sources is in such a file is
    listed as known (it belongs to another open change) and does not fail
    the sweep; every entry names the change that removes it."""
    known = []
    with open(os.path.join(HERE, "known_findings.txt")) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                part, _, why = line.partition(" ")
                known.append((part, why.strip()))
    return known


def first_own_frame(err):
    top = os.path.dirname(os.path.dirname(HERE))
    for m in re.finditer(r"#\d+ 0x[0-9a-f]+ in \S+ (\S+):\d+", err):
        path = m.group(1)
        if path.startswith(top + "/") and not path.endswith("alloc_fail.c"):
            return path[len(top):]
    return ""


def scenario_command(name, gpuopt, api, root):
    return {
        "devices-json": [gpuopt, "devices", "--json"],
        "plan-json": [gpuopt, "plan", "--json"],
        "plan-level2": [gpuopt, "plan", "--level", "2"],
        "api": [api, root],
    }[name]


def normalise(name, out):
    """What must match the baseline: volatile values (timings, free memory,
    measurements) are masked, nothing else."""
    out = re.sub(r'"init_ms":[-0-9.eE+]+', '"init_ms":0', out)
    out = re.sub(r'"memory_free_bytes":[0-9]+', '"memory_free_bytes":0', out)
    # The CPU reuses its reading at load for 100 ms (backends/cpu/memory.h)
    # and says so: a matter of timing, not of memory.
    out = out.replace(", the backend's reading at load", "")
    if name == "plan-level2":
        # Tier-2 knobs: value and reason are measurements; name, tier and
        # source must match.
        lines, masking = [], False
        for line in out.splitlines():
            m = re.match(r"  (\S+)\s+(\S+)\s+\[(tier \d), (\w+)\]", line)
            if m:
                masking = m.group(3) == "tier 2"
                lines.append(f"  {m.group(1)} {'<measured>' if masking else m.group(2)} "
                             f"[{m.group(3)}, {m.group(4)}]")
            elif line.startswith("    ") and masking:
                continue
            else:
                masking = False
                lines.append(line)
        out = "\n".join(lines)
    return out


def run(cmd, env, fail_at):
    tmp = tempfile.mkdtemp(prefix="gpuopt-alloc-")
    report = os.path.join(tmp, "report")
    e = dict(env, GPUOPT_CACHE_DIR=os.path.join(tmp, "cache"), GPUOPT_ALLOC_REPORT=report)
    if fail_at:
        e["GPUOPT_ALLOC_FAIL_AT"] = str(fail_at)
    p = subprocess.run(cmd, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    count = None
    if os.path.exists(report):
        with open(report) as f:
            count = int(f.read().strip() or 0)
    shutil.rmtree(tmp, ignore_errors=True)
    # The cache directory is new each run: its name is no difference.
    out = p.stdout.decode(errors="replace").replace(tmp, "$TMP")
    return p.returncode, out, p.stderr.decode(errors="replace").replace(tmp, "$TMP"), count


def main():
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    name, stride, gpuopt, api, root = sys.argv[1], int(sys.argv[2]), *sys.argv[3:6]
    stride = int(os.environ.get("GPO_ALLOC_STRIDE", stride))
    cmd = scenario_command(name, gpuopt, api, root)
    env = dict(os.environ, GPUOPT_BACKEND="cpu", GPUOPT_CONFIG="", GPUOPT_LOG="warn", LC_ALL="C")
    # Whole stacks through cJSON (built without frame pointers), so that a
    # report can be traced to the library's own frame.
    asan = env.get("ASAN_OPTIONS", "")
    env["ASAN_OPTIONS"] = (asan + ":" if asan else "") + "fast_unwind_on_malloc=0"
    env.pop("GPUOPT_ALLOC_FAIL_AT", None)
    rc, base_out, base_err, total = run(cmd, env, 0)
    if rc != 0 or SANITIZER.search(base_err) or total is None:
        print(f"baseline {' '.join(cmd)} exited {rc} (allocations: {total}):\n{base_err}")
        return 1
    want = normalise(name, base_out)
    known = known_findings()
    findings, runs, n, known_hits = [], 0, 1, 0
    while True:
        rc, out, err, count = run(cmd, env, n)
        runs += 1
        what = None
        if count is None or rc < 0:
            what = f"killed by signal {-rc}" if rc < 0 else f"exited {rc} without its report"
        elif SANITIZER.search(err):
            what = "a sanitizer report"
            where = first_own_frame(err)
            why = next((w for part, w in known if part in where), None)
            if why:
                print(f"known: allocation {n}: a sanitizer report in {where}: {why}")
                known_hits += 1
                what = None
        elif rc == 0 and normalise(name, out) != want:
            what = "success with output that differs from the baseline"
        elif rc == 0 and name == "plan-level2" and "-> 2 applied" not in err + out \
                and not re.search(r"memory", err + out):
            what = "a level-2 plan below level 2 that does not say memory ran out"
        elif rc not in (0, 1):
            what = f"exit status {rc} (expected 0, or 1 for a reported failure)"
        elif rc == 1 and not err.strip():
            what = "a failure without a message"
        if what:
            findings.append(n)
            print(f"FAIL: allocation {n} of {total}: {what}")
            print("  stderr: " + "\n  stderr: ".join(err.strip().splitlines()[-25:]))
            if rc == 0:
                import difflib
                diff = difflib.unified_diff(want.splitlines(), normalise(name, out).splitlines(),
                                            "baseline", f"allocation {n} failed", lineterm="")
                print("  " + "\n  ".join(list(diff)[:30]))
        if count is not None and count < n:
            break
        n += stride
        if len(findings) >= 20:
            print("stopping after 20 findings")
            break
    print(f"{name}: {runs} runs over {total} allocations (stride {stride}), "
          f"{len(findings)} finding(s), {known_hits} known")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
