#!/bin/sh
# The memory and latency numbers of docs/benchmarks.md and docs/latency.md on
# a real NVIDIA GPU: builds, shows the live view, times every live-memory
# source beside the raw vendor calls, plans the real-time audio case at
# level 2 for latency and for throughput, and runs the GPU tests.
# Usage: bench/memory/run_gpu.sh OUT_DIR
set -u
out=${1:?usage: run_gpu.sh OUT_DIR}
mkdir -p "$out"
export GPUOPT_CACHE_DIR="$out/cache"
{
  cmake --preset default >/dev/null && cmake --build --preset default -j"$(nproc)" >/dev/null
} >"$out/build.log" 2>&1 || { tail -n 40 "$out/build.log"; exit 1; }
bin=build/bin
nvidia-smi --query-gpu=name,memory.total,memory.used,memory.free,driver_version --format=csv \
  >"$out/nvidia-smi.csv" 2>&1
"$bin/gpuopt" memory >"$out/memory.txt" 2>&1
"$bin/gpuopt" memory --json >"$out/memory.json" 2>&1
"$bin/bench_memory_live" 2000 >"$out/bench_memory_live.txt" 2>&1
audio="--model-bytes 1GiB --item-bytes 48MiB --items-per-step 10 --launches-per-step 4000"
audio="$audio --step-time 100ms --h2d-bytes 64KiB --d2h-bytes 5MiB --precision-sensitive"
audio="$audio --fixed-shapes"
# shellcheck disable=SC2086
"$bin/gpuopt" plan --device cuda:0 --level 2 --latency $audio >"$out/plan_latency.txt" 2>&1
# shellcheck disable=SC2086
"$bin/gpuopt" plan --device cuda:0 --level 2 --latency $audio --json >"$out/plan_latency.json" 2>&1
# shellcheck disable=SC2086
"$bin/gpuopt" plan --device cuda:0 --level 2 --throughput $audio >"$out/plan_throughput.txt" 2>&1
ctest --test-dir build -L gpu --output-on-failure >"$out/ctest_gpu.txt" 2>&1
ctest --test-dir build -R "memory_|latency_|cuda_memory" --output-on-failure \
  >"$out/ctest_memory.txt" 2>&1
tail -n 3 "$out/ctest_gpu.txt" "$out/ctest_memory.txt"
cat "$out/memory.txt" "$out/bench_memory_live.txt"
grep -A1 -E "launch.graph|warmup.runs|transfer.streams|launch_latency_ns|h2d_pinned|d2h_pinned|_latency_ns" \
  "$out/plan_latency.txt" | cut -c1-600
