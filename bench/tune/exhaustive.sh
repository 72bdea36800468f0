#!/bin/sh
# An exhaustive search five times (issue 11, item 7): each run's wall time
# against the sum of its compile times and five timed runs per candidate,
# and whether the winner repeats. Usage: bench/tune/exhaustive.sh [BUILD_DIR] [SPEC] [RUNS]
# (default: bench/tune/sgemm_small.json, 40 configurations; 5 runs). Each
# run is a new process with a new PoCL program cache ("cold") and then the
# same tuner again ("warm": programs reused, no compiles).
set -eu
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
spec=${2:-$here/sgemm_small.json}
runs=${3:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, load at start $(cut -d' ' -f1-3 /proc/loadavg)"
i=1
while [ "$i" -le "$runs" ]; do
  POCL_CACHE_DIR="$work/pocl-$i" "$build/bin/bench_exhaustive_cost" "$spec" | sed "s/^/$i /"
  echo "$i load $(cut -d' ' -f1 /proc/loadavg)"
  i=$((i + 1))
done
