#!/bin/sh
# OpenCL benchmarks against a build; prints the markdown of the OpenCL
# section of docs/benchmarks.md. Usage: bench/opencl/run.sh [BUILD_DIR]
# Needs clinfo and an OpenCL device (PoCL: apt install pocl-opencl-icd).
set -eu
build=${1:-build}
bin=$build/bin
machine="$(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
pocl=$(clinfo --raw 2>/dev/null | sed -n 's/.*CL_PLATFORM_VERSION[[:space:]]*//p' | head -n 1)

echo "### OpenCL ($(date -u +%Y-%m-%d), $machine; $pocl)"
echo
echo "Command: \`bench/run.sh $build opencl\`"
echo
echo "Whole processes, interleaved runs (\`bench_spawn -n 200 -w 10\`), \`gpuopt\` with"
echo "\`GPUOPT_BACKEND=opencl\`:"
echo
echo '| process | median | p10 | p90 | peak RSS | vs floor |'
echo '|---|---|---|---|---|---|'
GPUOPT_BACKEND=opencl GPUOPT_CONFIG= "$bin/bench_spawn" -n 200 -w 10 \
  -- floor "$bin/bench_opencl_floor" \
  -- gpuopt_devices_json "$bin/gpuopt" devices --json \
  -- clinfo_l clinfo -l |
  awk '{ if (NR == 1) floor = $2;
         printf "| %s | %.2f ms | %.2f ms | %.2f ms | %s KiB | %.3f |\n", $1, $2, $3, $4, $5, $2 / floor }'
echo
echo "Inside one process (\`bench_opencl_costs 9\`; the probe kernel with PoCL's kernel"
echo "cache as it is, then with \`POCL_KERNEL_CACHE=0\`):"
echo
echo '| step | ms |'
echo '|---|---|'
"$bin/bench_opencl_costs" 9 | awk '{ printf "| %s | %.2f |\n", $1, $2 }'
POCL_KERNEL_CACHE=0 "$bin/bench_opencl_costs" 5 | awk '/probe/ { printf "| %s (no kernel cache) | %.2f |\n", $1, $2 }'
echo
echo "Empty-kernel launch to completion, timed by events, through the runtime ops"
echo "and through the same OpenCL calls made directly, interleaved blocks"
echo "(\`bench_opencl_launch 60 200\`: 60 blocks of 200 launches each path; per-launch"
echo "median, p10, p90 of the block means):"
echo
echo '| path | median | p10 | p90 |'
echo '|---|---|---|---|'
"$bin/bench_opencl_launch" 60 200 2>/dev/null | awk '
  /^ratio/ { ratio = $2; next }
  { printf "| %s | %.2f us | %.2f us | %.2f us |\n", $1, $2, $3, $4 }
  END { printf "\nops / raw median ratio: %.3f\n", ratio }'
echo
