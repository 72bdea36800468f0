#!/bin/sh
# Levels 0/1/2 on PoCL (issue 5 item 8); prints the markdown of the "Tiers"
# section of docs/benchmarks.md. Usage: bench/tiers/run.sh [BUILD_DIR]
set -eu
build=${1:-build}
bin=$build/bin
machine="$(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
pocl=$(clinfo --raw 2>/dev/null | sed -n 's/.*CL_PLATFORM_VERSION[[:space:]]*//p' | head -n 1)
out=$(mktemp)
trap 'rm -f "$out"' EXIT

"$bin/bench_tiers" 15 >"$out"
cold=$(POCL_KERNEL_CACHE=0 "$bin/bench_tiers" decide | sed -n 's/^decide_first_ms //p')
# Whole processes: `gpuopt plan --level 2` with an empty tuning cache, then
# the same command again (answered from the cache), three times each.
proc_first=""
proc_cached=""
for i in 1 2 3; do
  d=$(mktemp -d)
  t0=$(date +%s%N)
  GPUOPT_CACHE_DIR=$d GPUOPT_CONFIG= "$bin/gpuopt" plan --backend opencl --level 2 >/dev/null
  t1=$(date +%s%N)
  GPUOPT_CACHE_DIR=$d GPUOPT_CONFIG= "$bin/gpuopt" plan --backend opencl --level 2 >/dev/null
  t2=$(date +%s%N)
  proc_first="$proc_first $(( (t1 - t0) / 1000000 ))"
  proc_cached="$proc_cached $(( (t2 - t1) / 1000000 ))"
  rm -rf "$d"
done

v() { sed -n "s/^$1 //p" "$out"; }
echo "### Tiers ($(date -u +%Y-%m-%d), $machine; $pocl)"
echo
echo "Command: \`bench/run.sh $build tiers\` (\`bench_tiers 15\`, \`POCL_KERNEL_CACHE=0 bench_tiers decide\`,"
echo "and \`gpuopt plan --backend opencl --level 2\` three times with an empty cache, each followed by"
echo "the same command again). Device: $(v device)."
echo
echo '| measurement | result | target |'
echo '|---|---|---|'
v plan1_us | awk '{ printf "| level-1 plan of a known device, in process (create + destroy) | %s us (p10 %s, p90 %s) | < 50 us |\n", $1, $2, $3 }'
v decide_first_ms | awk '{ printf "| level 2 decided the first time (empty tuning cache, PoCL kernel cache as it is) | %s ms | < 2 s |\n", $1 }'
echo "| the same with PoCL's kernel cache off (\`POCL_KERNEL_CACHE=0\`: every build cold) | $cold ms | |"
v plan2_cached_us | awk '{ printf "| level-2 plan answered from the cache, in process (tiers 0-2) | %s us (p10 %s, p90 %s) | |\n", $1, $2, $3 }'
v tier2_cached_us | awk '{ printf "| tier 2 from the cache (level-2 minus level-1 plan, medians) | %s us | < 1 ms |\n", $1 }'
echo "| whole process, level 2, empty cache (ms, three runs) |$proc_first | |"
echo "| whole process, level 2, from the cache (ms, three runs) |$proc_cached | |"
echo
echo "Launch settings per level and the workloads with them (device time per launch, median of"
echo "15 interleaved rounds; speed-up = level 0's median / the level's). Two plans per level:"
echo "without a workload (precision kept), and for a workload that accepts reduced precision"
echo "(\`item_bytes\` 64 MiB, \`reduced_precision\` 1), where level 1 adds fast-math options:"
echo
echo '| plans | level | launch.block_size | SGEMM group | build options |'
echo '|---|---|---|---|---|'
grep -E '^(precise|relaxed) level[0-9] ' "$out" | sed 's/^\([a-z]*\) level\([0-9]\) block \([0-9]*\) sgemm_group \([0-9x]*\) options "\(.*\)"$/| \1 | \2 | \3 | \4 | `\5` |/'
echo
echo '| plans | workload | level | median ms | p20 ms | p80 ms | speed-up over level 0 |'
echo '|---|---|---|---|---|---|---|'
grep -E '^(precise|relaxed) (sgemm|stencil) level[0-9] ' "$out" | awk '{ sub("level", "", $3); w = $2 == "sgemm" ? "SGEMM 512x512 (naive, 2-D groups)" : "1-D stencil, 8 Mi floats, radius 3"; printf "| %s | %s | %s | %.2f | %.2f | %.2f | x%.3f |\n", $1, w, $3, $4, $5, $6, $7 }'
echo
echo "Level 2 against level 1 (ratio of medians; a difference counts only beyond max(2%, the"
echo "mean p20-p80 spread), the tuner's noise rule):"
echo
grep -E '^(precise|relaxed) (sgemm|stencil) level2_vs_level1 ' "$out" | awk '{ printf "- %s, %s: x%.3f, %s\n", $1, $2, $4, $5 }'
echo
