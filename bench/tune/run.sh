#!/bin/sh
# The tuner on the built-in examples, on PoCL, in one run; prints the
# markdown of the "Tuning" section of docs/benchmarks.md.
# Usage: bench/tune/run.sh [BUILD_DIR] [SEEDS]   (about 25 minutes on 2 cores)
#
# Program caches, which is which:
#   PoCL's program cache: compiled kernels on disk under POCL_CACHE_DIR
#     (on by default, POCL_KERNEL_CACHE=1). "cold" = an empty directory.
#   The engine's compile cache: programs a tuner has built, in memory,
#     for the tuner's life (keyed by source, defines, options, device,
#     compiler version).
set -eu
build=${1:-build}
seeds=${2:-5}
bin=$build/bin
here=$(cd "$(dirname "$0")" && pwd)
examples=$here/../../examples/tuning
machine="$(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
pocl=$(clinfo --raw 2>/dev/null | sed -n 's/.*CL_PLATFORM_VERSION[[:space:]]*//p' | head -n 1)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GPUOPT_CACHE_DIR="$work/cache"

# field FILE LINE-PREFIX KEY: the value of KEY= on the first line starting with PREFIX.
field() {
  awk -v p="$2" -v k="$3" 'index($0, p " ") == 1 || $0 == p {
      n = split($0, f, " ");
      for (i = 1; i <= n; i++) if (index(f[i], k "=") == 1) { v = substr(f[i], length(k) + 2); gsub(/"/, "", v); print v; exit } }' "$1"
}
# The best configuration (it holds spaces, so it is quoted in the output).
best_cfg() {
  sed -n "s/^$2 .*best=\"\([^\"]*\)\".*/\1/p" "$1" | head -n 1
}

run_example() { # NAME SPEC RESIZE
  name=$1 spec=$2 resize=$3
  POCL_CACHE_DIR="$work/pocl-$name" "$bin/bench_tune_examples" "$spec" "$resize" --seeds "$seeds" --live \
    >"$work/$name.txt"
  POCL_CACHE_DIR="$work/pocl-$name" "$bin/bench_tune_examples" "$spec" "$resize" --only-exhaustive \
    >"$work/$name-warm.txt"
  POCL_CACHE_DIR="$work/pocl-$name-new" "$bin/bench_tune_examples" "$spec" "$resize" --at-new-size \
    >"$work/$name-new.txt"
}

echo "### Tuning on PoCL ($(date -u +%Y-%m-%d), $machine; $pocl)" >&2
run_example sgemm "$examples/sgemm.json" "M=1024,N=1024,K=1024"
run_example stencil "$examples/stencil.json" "W=4096,H=4096"
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$bin/bench_sgemm_blas" "$examples/sgemm.json" 9 >"$work/blas.txt"
"$bin/bench_cache_lookup" 20 20000 >"$work/lookup.txt"

echo "### Tuning on PoCL ($(date -u +%Y-%m-%d), $machine; $pocl)"
echo
echo "Command: \`bench/run.sh $build tune\` (\`bench/tune/run.sh $build $seeds\`)"
echo
echo "Exhaustive search and re-tuning: wall time of \`gpuopt_tuner_run\` (the tuning cache off), and"
echo "the ratio to the cold run at the same sizes. Cold = an empty PoCL program cache and a new tuner:"
echo
echo '| example | legal / raw | run | PoCL program cache | engine compile cache | wall | vs cold, same sizes | best (median) | best configuration |'
echo '|---|---|---|---|---|---|---|---|---|'
for name in sgemm stencil; do
  f=$work/$name.txt w=$work/$name-warm.txt nw=$work/$name-new.txt
  legal=$(field "$f" space legal) raw=$(field "$f" space raw) sizes=$(sed -n 's/^space .*sizes="\([^"]*\)".*/\1/p' "$f")
  resize=$(sed -n 's/^resize \([^ ]*\) .*/\1/p' "$f")
  cold=$(field "$f" exhaustive wall_s) coldnew=$(field "$nw" exhaustive wall_s)
  row() { # LABEL POCL ENGINE WALL COLD BEST_NS CFG
    awk -v n="$name" -v lr="$legal / $raw" -v l="$1" -v p="$2" -v e="$3" -v w="$4" -v c="$5" -v b="$6" -v cfg="$7" \
      'BEGIN { printf "| %s | %s | %s | %s | %s | %.1f s | %.2f | %.3f ms | %s |\n", n, lr, l, p, e, w, w / c, b / 1e6, cfg }'
  }
  row "exhaustive, $sizes" cold cold "$cold" "$cold" "$(field "$f" exhaustive best_ns)" "$(best_cfg "$f" exhaustive)"
  row "the same, new process" warm cold "$(field "$w" exhaustive wall_s)" "$cold" "$(field "$w" exhaustive best_ns)" "$(best_cfg "$w" exhaustive)"
  row "the same, same tuner again" warm warm "$(field "$f" engine_warm wall_s)" "$cold" "$(field "$f" engine_warm best_ns)" "$(best_cfg "$f" engine_warm)"
  row "exhaustive, $resize, new process" cold cold "$coldnew" "$coldnew" "$(field "$nw" exhaustive best_ns)" "$(best_cfg "$nw" exhaustive)"
  row "re-tune for $resize, same tuner" warm warm "$(field "$f" "resize $resize" wall_s)" "$coldnew" "$(field "$f" "resize $resize" best_ns)" "$(sed -n 's/^resize .*best="\([^"]*\)".*/\1/p' "$f")"
done
echo
for name in sgemm stencil; do
  f=$work/$name.txt
  resize=$(sed -n 's/^resize \([^ ]*\) .*/\1/p' "$f")
  awk -v n="$name" -v r="$resize" -v w="$(field "$f" "resize $resize" wall_s)" -v c="$(field "$f" exhaustive wall_s)" \
    'BEGIN { printf "%s: re-tuning for %s with warm caches took %.2f of the cold run at the first sizes.\n", n, r, w / c }'
done
echo
echo "Strategies at a budget of 30% of the legal space, seeds 1 to $seeds: the found best as a ratio"
echo "of the exhaustive best (both by the exhaustive run's medians), the fraction of the legal space"
echo "evaluated, and the fraction evaluated when the best first came within 5% (reach). *Replay*:"
echo "on the landscape the exhaustive run measured (a callback subject reporting each"
echo "configuration's median: the search alone, free of timing noise); *live*: on the kernel"
echo "itself (the tuner's compiled programs reused), timing noise included:"
echo
echo '| example | mode | strategy | ratio (median) | ratio (worst seed) | evaluated (median) | reach (median) |'
echo '|---|---|---|---|---|---|---|'
for name in sgemm stencil; do
  for mode in replay live; do
    grep "^$mode strategy=" "$work/$name.txt" | while read -r line; do
      echo "$line" | awk -v n="$name" -v m="$mode" '{
        for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
        printf "| %s | %s | %s | %.3f | %.3f | %.1f%% | %s |\n", n, m, v["strategy"], v["ratio_median"],
          v["ratio_worst"], 100 * v["fraction_median"], v["reach_median"] == "inf" ? "not reached" : sprintf("%.1f%%", 100 * v["reach_median"]) }'
    done
  done
done
echo
echo "The tuner's own cost per candidate (a callback that does nothing, with the fewest runs the"
echo "tuner allows: one warm-up and the 3-run probe; over the SGEMM space; cache on = candidates"
echo "saved at checkpoints, at most once a second):"
echo
echo '| strategy | cache | candidates | per candidate |'
echo '|---|---|---|---|'
grep '^overhead ' "$work/sgemm.txt" | awk '{
  for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
  printf "| %s | %s | %s | %.1f us |\n", v["strategy"], v["cache"], v["candidates"], v["per_candidate_us"] }'
echo
echo "Cache lookups: \`gpuopt_tuner_run\` answering from the cache (the SGEMM tune, 200 hits),"
echo "and the cache's own lookup (\`bench_cache_lookup 20 20000\`, a file of 20 tunes):"
echo
echo '| lookup | median | p10 | p90 |'
echo '|---|---|---|---|'
awk '/^cache_hit/ { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
  printf "| gpuopt_tuner_run, cache hit (origin %s) | %.1f us | %.1f us | %.1f us |\n", v["origin"], v["median_us"], v["p10_us"], v["p90_us"] }' "$work/sgemm.txt"
awk '!/^#/ { printf "| gpo_cache_lookup %s | %.2f us | %.2f us | %.2f us |\n", $1, $2, $3, $4 }' "$work/lookup.txt"
echo
echo "The tuned SGEMM at 512³ against OpenBLAS's \`cblas_sgemm\` (Debian libopenblas, run with"
echo "\`OPENBLAS_CORETYPE\` and \`OPENBLAS_L2_SIZE\` unset), interleaved in one process, median of"
echo "9 rounds of 200 ms each:"
echo
echo '| kernel | GFLOP/s | vs OpenBLAS |'
echo '|---|---|---|'
awk '/^sgemm_vs_blas/ { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
  cfg = $0; sub(/.*config="/, "", cfg); sub(/".*/, "", cfg)
  printf "| tuned sgemm.cl (%s) | %.1f | %.2f |\n| OpenBLAS sgemm | %.1f | 1.00 |\n", cfg, v["tuned_gflops"], v["ratio"], v["blas_gflops"] }' "$work/blas.txt"
echo
