#!/bin/sh
# The profiler's cost per begin/end pair, side by side in one run, as
# markdown for docs/benchmarks.md. Usage: bench/profiler/run.sh [BUILD_DIR]
# The NVTX rows need the tests' NVTX tool double (built with the tests).
set -eu
build=${1:-build}
bin=$build/bin
tool=$build/tests/fakes/ranges/libfake-nvtx-injection.so
[ -e "$tool" ] || tool=
machine="$(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
echo "### Profiler: cost of a section ($(date -u +%Y-%m-%d), $machine)"
echo
echo "Command: \`bench/run.sh $build profiler\` (\`$bin/bench_profiler 200000 ${tool:-}\`)"
echo
echo '| begin/end pair | median ns | p10 | p90 | x empty loop | x NVTX-style push/pop |'
echo '|---|---|---|---|---|---|'
GPUOPT_CONFIG= NVTX_INJECTION64_PATH= GPUOPT_PROFILE= "$bin/bench_profiler" 200000 $tool | awk '
  { name[NR] = $1; med[NR] = $2; p10[NR] = $3; p90[NR] = $4; if ($1 == "empty_loop") base = $2; if ($1 == "nvtx_style_push_pop") nvtx = $2 }
  END {
    for (i = 1; i <= NR; i++) {
      r1 = base > 0 ? sprintf("%.1f", med[i] / base) : "-"
      r2 = nvtx > 0 ? sprintf("%.2f", med[i] / nvtx) : "-"
      printf "| %s | %.1f | %.1f | %.1f | %s | %s |\n", name[i], med[i], p10[i], p90[i], r1, r2
    }
  }'
echo
