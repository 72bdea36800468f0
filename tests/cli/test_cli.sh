#!/bin/sh
# The gpuopt command's contract: exit status 0 success, 1 failure, 2 usage
# error with the accepted values; --help everywhere; JSON that parses.
# Usage: test_cli.sh GPUOPT_BINARY PYTHON3
set -u
gpuopt=$1
python=$2
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
for c in devices plan version; do
  run 0 "$c" --help;                    has "$out" "usage: gpuopt $c"
done
run 0 version;                          has "$out" "gpuopt ${GPO_EXPECT_VERSION:?}"
run 0 --version;                        has "$out" "API"
run 0 version --json;                   json_ok gpuopt_version api_version
run 2 version --bogus;                  has "$err" "accepted: --json"

run 0 devices;                          has "$out" "cpu:0"; has "$out" "selected by policy"
run 0 devices --json;                   json_ok gpuopt_version backends devices selection
run 2 devices --bogus;                  has "$err" "accepted: --json, --backend LIST"
run 2 devices --backend metal;          has "$err" "gpuopt_options.backends"; has "$err" "accepted"

run 0 plan;                             has "$out" "Plan for cpu:0"; has "$out" "threads"
run 0 plan --json;                      json_ok level_requested level_applied device knobs warnings
run 0 plan --env;                       has "$out" "export OMP_NUM_THREADS="
run 0 plan --level 0;                   has "$out" "level 0"
run 0 plan --level 2;                   has "$out" "level 2"; has "$out" "tier 2, "
run 2 plan --level 7;                   has "$err" "accepted 0"
run 2 plan --level;                     has "$err" "missing value"
run 2 plan --device "not a device";     has "$err" "not understood"; has "$err" "accepted: auto, gpu"
run 1 plan --device cpu:3;              has "$err" "no device matches 'cpu:3'"
run 2 plan --json --env;                has "$err" "exclusive"
run 2 plan --model-bytes lots;          has "$err" "accepted a size"
run 0 plan --model-bytes 1GiB --item-bytes 1MiB; has "$out" "batch.max_size"

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
