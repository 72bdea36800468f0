#!/bin/sh
# Runs the benchmarks against a build and prints markdown for
# docs/benchmarks.md. Usage: bench/run.sh [BUILD_DIR] [SECTION...]
# Sections: foundation, probe, opencl, tiers, tune, memory, profiler (default: foundation).
set -eu
build=${1:-build}
shift 2>/dev/null || true
sections=${*:-foundation}
bin=$build/bin
machine="$(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"

for s in $sections; do
  case $s in
  foundation)
    echo "### Foundation: CPU backend only ($(date -u +%Y-%m-%d), $machine)"
    echo
    echo "Command: \`bench/run.sh $build foundation\`"
    echo
    echo '| measurement | median | p10 | p90 | peak RSS |'
    echo '|---|---|---|---|---|'
    GPUOPT_BACKEND=cpu GPUOPT_CONFIG= "$bin/bench_inprocess" 2000 | while read -r name med p10 p90; do
      echo "| in-process $name | $med us | $p10 us | $p90 us | |"
    done
    GPUOPT_BACKEND=cpu GPUOPT_CONFIG= "$bin/bench_spawn" -n 300 -w 20 \
      -- trivial "$bin/bench_trivial" \
      -- devices_json "$bin/gpuopt" devices --json \
      -- plan_json "$bin/gpuopt" plan --json | while read -r name med p10 p90 rss; do
      echo "| process: $name | $med ms | $p10 ms | $p90 ms | $rss KiB |"
    done
    echo
    ;;
  opencl)
    sh "$(dirname "$0")/opencl/run.sh" "$build"
    ;;
  tiers)
    sh "$(dirname "$0")/tiers/run.sh" "$build"
    ;;
  tune)
    sh "$(dirname "$0")/tune/run.sh" "$build"
    ;;
  profiler)
    sh "$(dirname "$0")/profiler/run.sh" "$build"
    ;;
  memory)
    echo "### Live memory query cost per source ($(date -u +%Y-%m-%d), $machine)"
    echo
    echo "Command: \`bench/run.sh $build memory\`: \`bench_memory_live 2000\` under each"
    echo "setting, one process per row group; each row the median and spread of 2000 readings."
    echo
    echo '| setting | reading | source | median | p10 | p90 |'
    echo '|---|---|---|---|---|---|'
    src=$(cd "$(dirname "$0")/.." && pwd)
    row() { label=$1; shift; env GPUOPT_CONFIG= "$@" "$bin/bench_memory_live" 2000 |
      while read -r name source med p10 p90; do
        echo "| $label | $name | $source | $med us | $p10 us | $p90 us |"
      done; }
    row "this machine" env
    row "CUDA + NVML doubles (H100)" env GPUOPT_BACKEND=cuda \
      GPUOPT_CUDA_LIBRARY="$build/tests/fakes/cuda/full/libcuda.so.1" \
      GPUOPT_NVML_LIBRARY="$build/tests/fakes/nvml/libnvidia-ml.so.1" \
      GPUOPT_FAKE_CUDA_DEVICES="$src/tests/fakes/cuda/devices/h100-sxm5.json"
    row "CUDA double, no NVML" env GPUOPT_BACKEND=cuda \
      GPUOPT_CUDA_LIBRARY="$build/tests/fakes/cuda/full/libcuda.so.1" \
      GPUOPT_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 \
      GPUOPT_FAKE_CUDA_DEVICES="$src/tests/fakes/cuda/devices/h100-sxm5.json"
    row "RX 580 amdgpu sysfs tree" env GPUOPT_BACKEND=rocm \
      GPUOPT_HIP_LIBRARY=/nonexistent/libamdhip64.so.6 \
      GPUOPT_SYSFS_ROOT="$src/tests/fixtures/kfd/rx580"
    echo
    ;;
  probe)
    echo "### Probing absent GPU backends ($(date -u +%Y-%m-%d), $machine)"
    echo
    echo "Command: \`bench/run.sh $build probe\`. No GPU here: libcuda.so.1 is absent;"
    echo "Debian's libamdhip64.so.5 is installed but there is no /dev/kfd. Rows: the CPU backend"
    echo "alone; CUDA + ROCm + CPU (what probing the absent GPU backends adds); the same with"
    echo "GPUOPT_HIP_LIBRARY naming Debian's runtime (what opening HIP would cost); every backend"
    echo "(PoCL's OpenCL start-up included); and the floor, a program that only dlopens the vendor"
    echo "libraries a naive probe opens."
    echo
    echo '| measurement | median | p10 | p90 | peak RSS |'
    echo '|---|---|---|---|---|'
    hip=$(ls /usr/lib/*/libamdhip64.so.5 2>/dev/null | head -n 1)
    GPUOPT_CONFIG= "$bin/bench_spawn" -n 100 -w 5 \
      -- trivial "$bin/bench_trivial" \
      -- cpu_only env GPUOPT_BACKEND=cpu "$bin/gpuopt" devices --json \
      -- cuda_rocm_cpu env GPUOPT_BACKEND=cuda,rocm,cpu "$bin/gpuopt" devices --json \
      -- cuda_rocm_cpu_hip_forced env GPUOPT_BACKEND=cuda,rocm,cpu GPUOPT_HIP_LIBRARY="${hip:-libamdhip64.so.5}" "$bin/gpuopt" devices --json \
      -- all_backends env GPUOPT_BACKEND=auto "$bin/gpuopt" devices --json \
      -- floor_dlopen_vendor_libs "$bin/bench_dlopen_floor" libcuda.so.1 libamdhip64.so.7 libamdhip64.so.6 libamdhip64.so.5 \
      | while read -r name med p10 p90 rss; do
      echo "| $name | $med ms | $p10 ms | $p90 ms | $rss KiB |"
    done
    echo
    ;;
  *)
    echo "bench/run.sh: unknown section '$s'" >&2
    exit 2
    ;;
  esac
done
