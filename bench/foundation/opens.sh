#!/bin/sh
# Files opened by one in-process cycle of bench_inprocess (create + enumerate
# + level-1 plan + destroy, then one more plan on the same context),
# with the CPU backend only: deterministic where the timings are not.
# Counts openat/open under strace for 10 and 20 iterations and divides the
# difference by 10, so start-up (the loader, warm-up runs) cancels out.
#
#   bench/foundation/opens.sh BUILD_DIR [BUILD_DIR...]   prints: build opens_per_iteration
#   OPENS_DETAIL=1 also lists each file opened per iteration.
set -eu
command -v strace >/dev/null || { echo "opens.sh: strace is not installed" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for build in "$@"; do
  for n in 10 20; do
    GPUOPT_BACKEND=cpu GPUOPT_CONFIG= strace -f -e trace=openat,open -o "$tmp/$n" \
      "$build/bin/bench_inprocess" "$n" >/dev/null
  done
  a=$(grep -c 'open' "$tmp/10")
  b=$(grep -c 'open' "$tmp/20")
  echo "$build $(( (b - a) / 10 ))"
  if [ "${OPENS_DETAIL:-}" = 1 ]; then
    # bench_inprocess runs 20 warm-up iterations before its N.
    grep -o '"/[ps][^"]*"' "$tmp/10" | sort | uniq -c | awk '{printf "  %5.2f %s\n", $1 / 30, $2}'
  fi
done
