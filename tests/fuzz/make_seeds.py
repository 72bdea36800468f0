#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora (tests/fuzz/corpus/<target>/) from
the recorded trees of tests/fixtures, the tuning examples and a few
hand-written inputs. The output is committed; run this again when fixtures
change. Seeds for whole detection hold only the files detection reads,
found by running `gpuopt devices --json` and `gpuopt plan` over each tree
under strace (so this needs a build and strace).

Usage: make_seeds.py BUILD_DIR   (BUILD_DIR/bin/gpuopt is used)
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
FIX = os.path.join(TOP, "tests", "fixtures")
CORPUS = os.path.join(HERE, "corpus")


def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def expressions():
    texts = ["TILE * VEC <= 64", "N % TILE == 0", "ceildiv(M, TILE) * TILE", "min(a, b, c) > 0",
             "max(1, 2) ? x : -y", "pow2(WG) && WG >= 32", "!(a || b) && c != 0x40",
             "((a))", "1-(1-(1-2))", "a / b % c", "-9223372036854775807 - 1"]
    for spec in ("sgemm.json", "stencil.json", "sgemm_cuda.json"):
        doc = json.loads(read(os.path.join(TOP, "examples", "tuning", spec)))
        texts += doc.get("constraints", [])
        texts += [g for g in doc.get("geometry", {}).get("global", []) if isinstance(g, str)]
        texts += [g for g in (doc.get("geometry", {}).get("local") or []) if isinstance(g, str)]
        if isinstance(doc.get("local_memory"), str):
            texts.append(doc["local_memory"])
    for t in texts:
        put("expr", t)


def tune_specs():
    for spec in ("sgemm.json", "stencil.json", "sgemm_cuda.json"):
        put("tune_spec", read(os.path.join(TOP, "examples", "tuning", spec)))
    put("tune_spec", '{"kernel": {"source": "__kernel void k(__global float *x) {}", "entry": "k"},'
        ' "parameters": {"T": [1, 2], "S": ["on", "off"]}, "constraints": ["T * N <= 128"],'
        ' "sizes": {"N": 64}, "geometry": {"global": ["N"], "local": ["T"]},'
        ' "arguments": [{"buffer": "float", "size": "N", "output": true, "init": {"data": [1, 2]}}],'
        ' "default": {"T": 1, "S": "on"}}')


def configs():
    put("config", '{"backend": "cuda,cpu", "device": "auto", "level": 2, "log": "info",'
        ' "cache_dir": "/scratch/gpuopt-cache", "reduced_precision": false,'
        ' "libraries": {"cuda": "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "opencl": "libOpenCL.so.1"},'
        ' "knobs": {"threads": 8, "launch.block_size": 256}}')
    put("config", '{"use_cuda": false, "backend": "cpu"}')
    put("config", '{"use_cuda": true, "backend": "cpu", "sysfs_root": "/tmp/x"}')
    put("config", '{"level": 1e19, "knobs": {"threads": -3, "cpu.tile_bytes": "256MiB"}}')


def environments():
    # GPUOPT_KNOBS, DEVICE, BACKEND, LEVEL, LOG, CACHE_DIR, CUDA_, ROCR_, HIP_VISIBLE_DEVICES
    put("env", "threads=4;launch.block_size=128\ncuda:1\ncuda,cpu\n2\ninfo\n/tmp/c\n0,1\n1\n0")
    put("env", "threads=-3\nGPU-0a1b2c3d\nauto\n7\nloud\n\nGPU-1a1b,2\n0,GPU-2a\n")
    put("env", "cpu.tile_bytes=2e9;omp.places=cores\n0000:3b:00.0\nopencl\n0\noff\n\n-1\n\n3,1")
    put("env", "\n3b:00.0\nrocm\n1\ndebug\n\nMIG-1\n4\n1,0")


P = {"cpuinfo": 0, "arm_cpuinfo": 1, "cpu_max": 2, "memory_limit": 3, "cgroup_self": 4,
     "mountinfo": 5, "status": 6, "meminfo": 7, "cpulist": 8, "cache_size": 9,
     "kfd_properties": 10, "amdgpu_ids": 11, "nvidia_version": 12, "nvidia_information": 13}


def text_seed(kind, data):
    put("text", bytes([P[kind]]) + data[:65536])


def texts():
    for tree in sorted(os.listdir(os.path.join(FIX, "cpu"))):
        root = os.path.join(FIX, "cpu", tree)
        if not os.path.isdir(root):
            continue
        for rel, kind in (("proc/cpuinfo", "cpuinfo"), ("proc/cpuinfo", "arm_cpuinfo"),
                          ("proc/self/cgroup", "cgroup_self"), ("proc/self/mountinfo", "mountinfo"),
                          ("proc/self/status", "status"), ("proc/meminfo", "meminfo"),
                          ("sys/devices/system/cpu/online", "cpulist"),
                          ("sys/devices/system/cpu/cpu0/cache/index3/size", "cache_size")):
            p = os.path.join(root, rel)
            if os.path.isfile(p):
                text_seed(kind, read(p))
        for dirpath, _, files in os.walk(os.path.join(root, "sys", "fs", "cgroup")):
            for f in files:
                if f in ("cpu.max", "memory.max", "memory.limit_in_bytes"):
                    text_seed("cpu_max" if f == "cpu.max" else "memory_limit",
                              read(os.path.join(dirpath, f)))
    for dirpath, _, files in os.walk(os.path.join(FIX, "kfd")):
        for f in files:
            p = os.path.join(dirpath, f)
            if f == "properties" and "/nodes/" in p and "mem_banks" not in p:
                text_seed("kfd_properties", read(p))
            if f == "amdgpu.ids":
                text_seed("amdgpu_ids", read(p))
    for dirpath, _, files in os.walk(os.path.join(FIX, "nvidia")):
        for f in files:
            p = os.path.join(dirpath, f)
            if f == "version":
                text_seed("nvidia_version", read(p))
            if f == "information":
                text_seed("nvidia_information", read(p))


def opened_files(gpuopt, root):
    """The files under root that devices --json and plan open."""
    seen = set()
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, GPUOPT_SYSFS_ROOT=root, GPUOPT_CONFIG="", GPUOPT_CACHE_DIR=tmp,
                   GPUOPT_BACKEND="cpu,cuda,rocm", GPUOPT_CUDA_LIBRARY="/nonexistent/libcuda.so.1",
                   GPUOPT_HIP_LIBRARY="/nonexistent/libamdhip64.so", GPUOPT_LOG="off")
        for args in (["devices", "--json"], ["plan", "--device", "auto"]):
            trace = os.path.join(tmp, "trace")
            subprocess.run(["strace", "-f", "-qq", "-o", trace, "-e", "trace=openat,open",
                            gpuopt] + args, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, check=False)
            for line in open(trace):
                m = re.search(r'"([^"]+)"', line)
                if m and m.group(1).startswith(root + "/") and "ENOENT" not in line:
                    p = m.group(1)
                    if os.path.isfile(p):
                        seen.add(p[len(root):])
    return sorted(seen)


def detections(gpuopt):
    trees = []
    for kind in ("cpu", "kfd", "nvidia"):
        base = os.path.join(FIX, kind)
        trees += [os.path.join(base, t) for t in sorted(os.listdir(base))
                  if os.path.isdir(os.path.join(base, t))]
    for root in trees:
        parts = []
        for rel in opened_files(gpuopt, root):
            data = read(root + rel)
            if len(data) > 65536 or b"\n==" in data:
                continue
            parts.append(b"== " + rel.encode() + b"\n" + data + (b"" if data.endswith(b"\n") else b"\n"))
        if parts:
            put("detect", b"".join(parts))
    put("detect", "==| /proc/cpuinfo\n== /proc/meminfo\nMemTotal: 1024 kB\n==/ /sys/class/kfd\n")


def caches(gpuopt):
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, GPUOPT_CONFIG="", GPUOPT_CACHE_DIR=tmp, GPUOPT_BACKEND="cpu",
                   GPUOPT_LOG="off")
        subprocess.run([gpuopt, "plan", "--level", "2"], env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=True)
        for f in sorted(os.listdir(tmp)):
            if f.endswith(".jsonl"):
                data = read(os.path.join(tmp, f))
                put("cache", data)
                lines = data.splitlines(keepends=True)
                put("cache", b"".join(lines[:2]))       # a header and one record
                put("cache", data[: len(data) // 2])    # cut in the middle of a line


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    gpuopt = os.path.join(os.path.abspath(sys.argv[1]), "bin", "gpuopt")
    shutil.rmtree(CORPUS, ignore_errors=True)
    expressions()
    tune_specs()
    configs()
    environments()
    texts()
    detections(gpuopt)
    caches(gpuopt)


if __name__ == "__main__":
    main()
