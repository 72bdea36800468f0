#!/bin/sh
# The gpuopt command's contract: exit status 0 success, 1 failure, 2 usage
# error with the accepted values; --help everywhere; JSON that parses.
# Usage: test_cli.sh GPUOPT_BINARY PYTHON3 [FAKE_LIBCUDA FAKE_CUDA_DEVICES_DIR]
set -u
gpuopt=$1
python=$2
fake_cuda=${3:-}
fake_devices=${4:-}
fails=0
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

# run EXPECTED_RC ARGS... : runs gpuopt, checks the exit status.
run() {
  want=$1; shift
  "$gpuopt" "$@" >"$out" 2>"$err"
  rc=$?
  if [ "$rc" != "$want" ]; then
    echo "FAIL: gpuopt $* exited $rc, expected $want"; sed 's/^/  stderr: /' "$err"; fails=$((fails + 1))
  fi
}
# has FILE TEXT : the last run's stdout/stderr contains TEXT.
has() {
  if ! grep -qF -- "$2" "$1"; then
    echo "FAIL: expected '$2' in $(basename "$1") of the last command"; sed 's/^/  | /' "$1" | head -n 20; fails=$((fails + 1))
  fi
}
json_ok() {
  if ! "$python" -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if all(k in d for k in sys.argv[2:]) else 1)" "$out" "$@"; then
    echo "FAIL: stdout is not JSON with keys $*"; head -c 400 "$out"; echo; fails=$((fails + 1))
  fi
}

export GPUOPT_BACKEND=cpu

run 2;                                  has "$err" "usage: gpuopt COMMAND"
run 0 --help;                           has "$out" "Commands:"
run 2 frobnicate;                       has "$err" "unknown command 'frobnicate'"
run 0 help plan;                        has "$out" "usage: gpuopt plan"
run 2 help frobnicate;                  has "$err" "no command 'frobnicate'"
for c in devices memory plan version; do
  run 0 "$c" --help;                    has "$out" "usage: gpuopt $c"
done
run 0 version;                          has "$out" "gpuopt ${GPO_EXPECT_VERSION:?}"
run 0 --version;                        has "$out" "API"
run 0 version --json;                   json_ok gpuopt_version api_version
run 2 version --bogus;                  has "$err" "accepted: --json"

run 0 devices;                          has "$out" "cpu:0"; has "$out" "selected by policy"
has "$out" 'selected by policy "auto": cpu:0'; has "$out" "the only usable device that matches"
run 0 devices --json;                   json_ok gpuopt_version backends devices selection
run 2 devices --bogus;                  has "$err" "accepted: --json, --backend LIST"
run 2 devices --backend metal;          has "$err" "gpuopt_options.backends"; has "$err" "accepted"

run 0 plan;                             has "$out" "Plan for cpu:0"; has "$out" "threads"
has "$out" "Selected: cpu:0"
run 0 plan --json;                      json_ok level_requested level_applied device knobs warnings
run 0 plan --env;                       has "$out" "export OMP_NUM_THREADS="
run 0 plan --level 0;                   has "$out" "level 0"
run 0 plan --level 2;                   has "$out" "level 2"; has "$out" "tier 2, "
run 2 plan --level 7;                   has "$err" "accepted 0"
run 2 plan --level;                     has "$err" "missing value"
run 2 plan --device "not a device";     has "$err" "not accepted"; has "$err" "accepted: auto, gpu"
run 1 plan --device cpu:3;              has "$err" "no device matches 'cpu:3'"
run 2 plan --json --env;                has "$err" "exclusive"
run 2 plan --model-bytes lots;          has "$err" "accepted a size"
run 0 plan --model-bytes 1GiB --item-bytes 1MiB; has "$out" "batch.max_size"
run 2 plan --memory-bound --compute-bound; has "$err" "--memory-bound and --compute-bound"
run 0 plan --memory-bound --json;       has "$out" '"selection":{"policy":"auto","reason":"cpu:0'

# Live memory: a table, JSON, a watch that stops after --count refreshes.
run 0 memory;                           has "$out" "DEVICE"; has "$out" "cpu:0"; has "$out" "/proc/meminfo"
run 0 memory --json;                    json_ok devices; has "$out" '"source":"host"'
run 0 memory --watch 0.1 --count 2;     has "$out" "Every 0.1s: gpuopt memory"
if [ "$(grep -c '^cpu:0' "$out")" != 2 ]; then echo "FAIL: --watch --count 2 did not print two readings"; fails=$((fails + 1)); fi
run 0 memory --watch 0.1 --count 2 --json
if [ "$(grep -c '"devices"' "$out")" != 2 ]; then echo "FAIL: --watch --json did not print one line per reading"; fails=$((fails + 1)); fi
run 0 memory --device cpu:0;            has "$out" "cpu:0"
run 2 memory --watch 0;                 has "$err" "accepted seconds from 0.1 to 86400"
run 2 memory --watch soon;              has "$err" "--watch soon"
run 2 memory --count 3;                 has "$err" "--count goes with --watch"
run 2 memory --bogus;                   has "$err" "accepted: --watch SECONDS"
run 1 memory --device cpu:3;            has "$err" "no device matches 'cpu:3'"

# A step of latency-oriented work: the advice that needs no measurement, and
# malformed descriptions refused with what is accepted.
run 0 plan --latency --item-bytes 48MiB --items-per-step 10 --launches-per-step 40 --step-time 100ms --h2d-bytes 64KiB --d2h-bytes 1MiB
has "$out" "warmup.runs"; has "$out" "prealloc.bytes"; has "$out" "a step holds 10 items x 48 MiB"
run 2 plan --step-time 0;               has "$err" "accepted a time up to an hour"
run 2 plan --step-time 2h;              has "$err" "accepted a time up to an hour"
run 2 plan --launches-per-step -4;      has "$err" "accepted a whole number from 1"
run 2 plan --items-per-step many;       has "$err" "accepted a whole number from 1"
run 2 plan --d2h-bytes lots;            has "$err" "accepted a size"

# Asking for a backend that is not there names why, not "devices here: none".
export GPUOPT_BACKEND=cuda GPUOPT_CUDA_LIBRARY=/nonexistent/libcuda.so.1
run 1 plan;                             has "$err" "no device matches 'auto': cuda: cannot open /nonexistent/libcuda.so.1"
export GPUOPT_BACKEND=cpu
unset GPUOPT_CUDA_LIBRARY

if [ -n "$fake_cuda" ]; then
  # The CUDA test double with an RTX 4090 and an H100 (docs/selection.md).
  export GPUOPT_BACKEND=cuda GPUOPT_CUDA_LIBRARY="$fake_cuda" GPUOPT_FAKE_CUDA_INIT= GPUOPT_FAKE_CUDA_FAIL=
  export GPUOPT_FAKE_CUDA_DEVICES="$fake_devices/rtx4090.json:$fake_devices/h100-sxm5.json"
  run 0 plan;                           has "$out" "Plan for cuda:0 (NVIDIA GeForce RTX 4090)"
  has "$out" "Selected: cuda:0 (NVIDIA GeForce RTX 4090): highest estimated peak fp32 throughput"
  run 0 plan --reduced-precision;       has "$out" "Plan for cuda:1 (NVIDIA H100 80GB HBM3)"
  run 0 plan --memory-bound;            has "$out" "Plan for cuda:1 (NVIDIA H100 80GB HBM3)"
  run 0 plan --model-bytes 30GiB;       has "$out" "Plan for cuda:1"; has "$out" "not in the 24 GiB of cuda:0"
  run 0 devices;                        has "$out" 'selected by policy "auto": cuda:0'
  # A driver whose library and kernel module disagree: present but broken. The
  # plan is for the CPU, and says so in its JSON and on stderr.
  export GPUOPT_BACKEND=cuda,cpu GPUOPT_FAKE_CUDA_INIT=CUDA_ERROR_SYSTEM_DRIVER_MISMATCH
  run 0 plan --json;                    json_ok selection warnings
  has "$out" "the cuda backend is present but not working, so cpu:0 was chosen instead"
  has "$err" "the cuda backend is present but not working"; has "$err" "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"
  has "$err" "gpuopt doctor"
  GPUOPT_LOG=off run 0 plan --json
  if [ -s "$err" ]; then echo "FAIL: GPUOPT_LOG=off still printed: $(cat "$err")"; fails=$((fails + 1)); fi
  unset GPUOPT_CUDA_LIBRARY GPUOPT_FAKE_CUDA_INIT GPUOPT_FAKE_CUDA_DEVICES GPUOPT_FAKE_CUDA_FAIL
  export GPUOPT_BACKEND=cpu
fi
stub=/usr/local/cuda/lib64/stubs/libcuda.so
if [ -r "$stub" ]; then
  # The CUDA toolkit's stub shadowing a driver: present but broken too.
  export GPUOPT_BACKEND=cuda,cpu GPUOPT_CUDA_LIBRARY="$stub"
  run 0 plan;                           has "$err" "CUDA_ERROR_STUB_LIBRARY"; has "$out" "Plan for cpu:0"
  unset GPUOPT_CUDA_LIBRARY
  export GPUOPT_BACKEND=cpu
fi

# Contradictory requests are refused (exit 2), naming both; none silently wins.
run 2 plan --precision-sensitive --reduced-precision
has "$err" "--precision-sensitive and --reduced-precision contradict each other"
run 2 plan --reduced-precision --model-bytes 1GiB --precision-sensitive
has "$err" "--precision-sensitive and --reduced-precision contradict each other"
run 2 plan --latency --throughput;      has "$err" "--latency and --throughput contradict each other"
run 2 plan --throughput --latency;      has "$err" "--latency and --throughput contradict each other"
run 2 plan --precision-sensitive --quantized; has "$err" "--precision-sensitive and --quantized"
run 2 tune spec.json --csv - --json;    has "$err" "--csv - and --json contradict each other"
run 2 tune spec.json --json --csv -;    has "$err" "--csv - and --json contradict each other"
run 0 plan --latency --latency --precision-sensitive --precision-sensitive

# An override reaches what is derived from it, in the plan, --env and --apply-env alike.
GPUOPT_KNOBS=threads=1 run 0 plan;      has "$out" "OMP_NUM_THREADS = threads = 1, set by GPUOPT_KNOBS"
GPUOPT_KNOBS=threads=1 run 0 plan --env; has "$out" "export OMP_NUM_THREADS='1'"
GPUOPT_KNOBS=threads=1 run 0 plan --apply-env -- sh -c 'echo "threads=$OMP_NUM_THREADS"'
has "$out" "threads=1"
# A value outside a knob's domain warns with the domain and is not used:
# the exports are those of a plan without it.
base=$(mktemp)
"$gpuopt" plan --env >"$base" 2>/dev/null
for bad in threads=-3 threads=0 threads=99999999999 omp.proc_bind=sideways cpu.fpmath_mode=whatever; do
  GPUOPT_KNOBS=$bad run 0 plan --env;   has "$err" "outside its domain"
  if ! cmp -s "$out" "$base"; then echo "FAIL: GPUOPT_KNOBS=$bad changed the exports"; fails=$((fails + 1)); fi
done
rm -f "$base"

# A bad environment value warns (variable, value, accepted) and keeps the default.
GPUOPT_LEVEL=abc run 0 plan;            has "$err" "GPUOPT_LEVEL=abc is not accepted"; has "$out" "level 1"
GPUOPT_LOG=off GPUOPT_LEVEL=abc run 0 plan
if [ -s "$err" ]; then echo "FAIL: GPUOPT_LOG=off still printed: $(cat "$err")"; fails=$((fails + 1)); fi

# --apply-env runs a command with the plan's variables, never overwriting the user's.
run 0 plan --apply-env -- sh -c 'echo "threads=$OMP_NUM_THREADS places=$OMP_PLACES"'
has "$out" "threads=2"
OMP_PLACES=sockets run 0 plan --apply-env -- sh -c 'echo "places=$OMP_PLACES"'
has "$out" "places=sockets"
run 3 plan --apply-env -- sh -c 'exit 3'
run 127 plan --apply-env -- /nonexistent/program; has "$err" "cannot run"
run 2 plan --apply-env;                 has "$err" "needs a command"
run 2 plan -- true;                     has "$err" "only with --apply-env"

if [ "$fails" -ne 0 ]; then
  echo "$fails check(s) failed"; exit 1
fi
echo "all CLI checks passed"
