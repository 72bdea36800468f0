#!/bin/sh
# The profiler's cost per begin/end pair, side by side in one run, as
# markdown for docs/benchmarks.md. Usage: bench/profiler/run.sh [BUILD_DIR] [ITERATIONS]
# ITERATIONS (default 2000) pairs per timed run, 11 runs per row: short
# runs fit between the preemptions of a shared machine, so their median is
# the CPU's cost, not the neighbours' (200000 measured 2-4x more there).
# The NVTX rows need the tests' NVTX tool double (built with the tests).
set -eu
build=${1:-build}
n=${2:-2000}
bin=$build/bin
tool=$build/tests/fakes/ranges/libfake-nvtx-injection.so
[ -e "$tool" ] || tool=
machine="load average $(cut -d' ' -f1 /proc/loadavg), $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
echo "### Profiler: cost of a section ($(date -u +%Y-%m-%d), $machine)"
echo
echo "Command: \`bench/run.sh $build profiler\` (\`$bin/bench_profiler $n ${tool:-}\`)"
echo
echo '| begin/end pair | median ns | p10 | p90 | x empty loop | x NVTX-style push/pop | less its clock reads |'
echo '|---|---|---|---|---|---|---|'
GPUOPT_CONFIG= NVTX_INJECTION64_PATH= GPUOPT_PROFILE= "$bin/bench_profiler" "$n" $tool | awk '
  { name[NR] = $1; med[NR] = $2; p10[NR] = $3; p90[NR] = $4; if ($1 == "empty_loop") base = $2
    if ($1 == "nvtx_style_push_pop") nvtx = $2; if ($1 == "clock_gettime_pair") clk = $2 }
  END {
    # Clock-reading pairs per row: the rest is the cost of the library itself.
    pairs["host_section"] = 1; pairs["host_section_with_nvtx"] = 1; pairs["host_section_nested_pair"] = 2
    for (i = 1; i <= NR; i++) {
      r1 = base > 0 ? sprintf("%.1f", med[i] / base) : "-"
      r2 = nvtx > 0 ? sprintf("%.2f", med[i] / nvtx) : "-"
      own = (name[i] in pairs) ? sprintf("%.1f", med[i] - pairs[name[i]] * clk) : "-"
      printf "| %s | %.1f | %.1f | %.1f | %s | %s | %s |\n", name[i], med[i], p10[i], p90[i], r1, r2, own
    }
  }'
echo
