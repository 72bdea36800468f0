#!/bin/sh
# Runs the libFuzzer targets of a fuzz build (cmake --preset fuzz):
#   run_fuzz.sh BUILD_DIR SECONDS [TARGET...]
# For each target (default: all of BUILD_DIR/bin/fuzz_*) it first replays
# every committed seed (tests/fuzz/corpus/<target>/), then fuzzes for
# SECONDS, adding what it finds to BUILD_DIR/fuzz-corpus/<target>/ (the
# committed seeds stay as they are). A crash, leak, timeout or sanitizer
# report fails the run and leaves the input in BUILD_DIR/fuzz-findings/.
# Prints one line per target: executions and coverage. SECONDS 0 replays
# the seeds only.
set -u
build=$1
seconds=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -eq 0 ]; then
  set -- $(cd "$build/bin" && ls fuzz_* | sed 's/^fuzz_//')
fi
# A finding must stop the run; leaks are findings (libFuzzer checks after
# each input that freed less than it allocated).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1:abort_on_error=0"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}print_stacktrace=1:halt_on_error=1"
failed=0
mkdir -p "$build/fuzz-findings"
for t in "$@"; do
  bin=$build/bin/fuzz_$t
  seeds=$here/corpus/$t
  work=$build/fuzz-corpus/$t
  log=$build/fuzz-findings/$t.log
  mkdir -p "$work"
  if [ ! -x "$bin" ] || [ ! -d "$seeds" ]; then
    echo "fuzz $t: no target or no seeds ($bin, $seeds)"; failed=1; continue
  fi
  common="-timeout=10 -rss_limit_mb=2048 -artifact_prefix=$build/fuzz-findings/$t- -print_final_stats=1"
  # shellcheck disable=SC2086
  if ! "$bin" $common -runs=0 "$seeds" >"$log" 2>&1; then
    echo "fuzz $t: FAILED replaying the seeds (see $log)"; tail -n 30 "$log"; failed=1; continue
  fi
  if [ "$seconds" -gt 0 ]; then
    # shellcheck disable=SC2086
    if ! "$bin" $common -max_total_time="$seconds" "$work" "$seeds" >"$log" 2>&1; then
      echo "fuzz $t: FAILED (see $log)"; tail -n 40 "$log"; failed=1; continue
    fi
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
  echo "fuzz $t: ok, ${execs:-0} executions in ${seconds}s, $cov, $(ls "$work" | wc -l) inputs in its corpus"
done
exit $failed
