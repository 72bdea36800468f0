#!/bin/sh
# The gpuopt command's contract: exit status 0 success, 1 failure, 2 usage
# error with the accepted values; --help everywhere; JSON that parses; every
# option form getopt_long reads (--opt=value, --opt value, -o value, -ovalue,
# clusters, prefixes, `--`), the nearest name for a misspelled option, and
# one message per bad value in the words of the command line.
# Usage: test_cli.sh GPUOPT_BINARY PYTHON3 [FAKE_LIBCUDA FAKE_CUDA_DEVICES_DIR [EXAMPLES_DIR]]
set -u
gpuopt=$1
python=$2
fake_cuda=${3:-}
fake_devices=${4:-}
examples=${5:-}
fails=0
out=$(mktemp) err=$(mktemp) tmp_ref=$(mktemp)
trap 'rm -f "$out" "$err" "$tmp_ref"' EXIT

. "$(dirname "$0")/checks.sh"
# same FILE : the last run's stdout equals FILE (the same output for two forms).
same() {
  if ! cmp -s "$out" "$1"; then
    echo "FAIL: the last command's stdout differs from $1's"; diff "$1" "$out" | head -n 10; fails=$((fails + 1))
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
run 2 help frobnicate;                  has "$err" "unknown command 'frobnicate'"
run 2 plna;                             has "$err" "unknown command 'plna'; did you mean 'plan'?"
run 2 --bogus;                          has "$err" "unknown option '--bogus'; accepted: --help, --version"
for c in cache devices doctor memory plan tune version; do
  run 0 "$c" --help;                    has "$out" "usage: gpuopt $c"
  run 0 "$c" -h;                        has "$out" "usage: gpuopt $c"
done
run 0 version;                          has "$out" "gpuopt ${GPO_EXPECT_VERSION:?}"
run 0 --version;                        has "$out" "API"
run 0 -V;                               has "$out" "API"
run 0 version --json;                   json_ok gpuopt_version api_version
run 2 version --bogus;                  has "$err" "accepted: --json"

run 0 devices;                          has "$out" "cpu:0"; has "$out" "selected by policy"
has "$out" 'selected by policy "auto": cpu:0'; has "$out" "the only usable device that matches"
run 0 devices --json;                   json_ok gpuopt_version backends devices selection
run 2 devices --bogus;                  has "$err" "accepted: --json, --backend LIST"
# A bad value is named as the user typed it, never by the API's field.
run 2 devices --backend metal;          has "$err" "gpuopt devices: --backend metal: not understood; accepted: auto"
hasnt "$err" "gpuopt_options"
run 2 devices --backend=metal;          has "$err" "--backend metal: not understood"
run 2 devices -b metal;                 has "$err" "--backend metal: not understood"
run 0 devices -b cpu;                   has "$out" "excluded by --backend cpu"; hasnt "$out" "gpuopt_options"

run 0 plan;                             has "$out" "Plan for cpu:0"; has "$out" "threads"
has "$out" "Selected: cpu:0"
run 0 plan --json;                      json_ok level_requested level_applied device knobs warnings
run 0 plan --env;                       has "$out" ': "${OMP_NUM_THREADS='; has "$out" '}"; export OMP_NUM_THREADS'
# Lines that keep what the user set, as --apply-env does (sh evaluates them).
"$gpuopt" plan --env >"$out" 2>"$err"
got=$(env -u OMP_NUM_THREADS OMP_PLACES=sockets sh -c 'eval "$(cat "$1")"; echo "$OMP_PLACES $OMP_NUM_THREADS"' sh "$out")
case $got in
  "sockets "[1-9]*) ;;
  *) echo "FAIL: plan --env lines evaluated to '$got', expected OMP_PLACES kept and OMP_NUM_THREADS set"; fails=$((fails + 1)) ;;
esac
run 0 plan --level 0;                   has "$out" "level 0"
run 0 plan --level 2;                   has "$out" "level 2"; has "$out" "tier 2, "
run 2 plan --level 7;                   has "$err" "accepted 0"
run 2 plan --level;                     has "$err" "--level: missing value"
run 2 plan --level -1;                  has "$err" "--level -1: accepted 0"
run 2 plan --level abc;                 has "$err" "--level abc: accepted 0"
run 2 plan --level=;                    has "$err" "--level : accepted 0"
run 2 plan --device "not a device";     has "$err" "not understood"; has "$err" "accepted: auto, gpu"
run 1 plan --device cpu:3;              has "$err" "no device matches 'cpu:3'"; has "$err" "--device cpu:3: "

# GPUOPT_DEVICE is --device's default: a bad value is the same usage error,
# naming where it came from; a value matching nothing the same failure.
GPUOPT_DEVICE="not a device" run 2 plan; has "$err" "GPUOPT_DEVICE=not a device: not understood"
has "$err" "accepted: auto, gpu"; hasnt "$err" "warning"
GPUOPT_DEVICE=cpu:3 run 1 plan;         has "$err" "GPUOPT_DEVICE=cpu:3: no device matches 'cpu:3'"
GPUOPT_DEVICE="not a device" run 2 devices; has "$err" "GPUOPT_DEVICE=not a device: not understood"
GPUOPT_DEVICE=cpu:0 run 0 plan;         has "$out" "Plan for cpu:0"
GPUOPT_DEVICE='' run 0 plan;            has "$out" "Plan for cpu:0"
# --device wins over the variable, which then goes unread.
GPUOPT_DEVICE="not a device" run 0 plan --device cpu:0; has "$out" "Plan for cpu:0"
if [ -s "$err" ]; then echo "FAIL: --device with a bad GPUOPT_DEVICE printed: $(cat "$err")"; fails=$((fails + 1)); fi
# The program --apply-env runs sees GPUOPT_DEVICE as the user set it.
GPUOPT_DEVICE=cpu:0 run 0 plan --apply-env -- sh -c 'echo "device=$GPUOPT_DEVICE"'
has "$out" "device=cpu:0"
run 2 plan --json --env;                has "$err" "exclusive"
run 2 plan --model-bytes lots;          has "$err" "--model-bytes lots: accepted a size"
run 2 plan --item-bytes=-5;             has "$err" "--item-bytes -5: accepted a size"
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
run 1 memory --device cpu:3;            has "$err" "--device cpu:3: no device matches 'cpu:3'"
# getopt_long's forms, as for every command.
run 0 memory -w 0.1 -n 2 -j
if [ "$(grep -c '"devices"' "$out")" != 2 ]; then echo "FAIL: memory -w 0.1 -n 2 -j did not print two readings"; fails=$((fails + 1)); fi
run 0 memory --watch=0.1 --count=1;     has "$out" "Every 0.1s: gpuopt memory"
run 0 memory -jd cpu:0;                 json_ok devices; has "$out" '"id":"cpu:0"'
run 0 memory --dev=cpu:0;               has "$out" "cpu:0"
run 2 memory --wacth 1;                 has "$err" "unknown option '--wacth'; did you mean '--watch'?"
run 2 memory --watch;                   has "$err" "--watch: missing value (--watch SECONDS)"
run 2 memory -n many -w 1;              has "$err" "--count many: accepted a whole number from 1"
run 2 memory extra;                     has "$err" "unexpected argument 'extra'"
run 2 memory --device "not a device";   has "$err" "--device not a device: not understood"; hasnt "$err" "gpuopt_options"
# The view is of every device: GPUOPT_DEVICE says where work runs, not what
# is shown, so not even a bad value of it stops the listing.
GPUOPT_DEVICE=cpu:3 run 0 memory;       has "$out" "cpu:0"
GPUOPT_DEVICE="not a device" run 0 memory; has "$out" "cpu:0"; hasnt "$err" "GPUOPT_DEVICE"

# A step of latency-oriented work: the advice that needs no measurement, and
# malformed descriptions refused with what is accepted.
run 0 plan --latency --item-bytes 48MiB --items-per-step 10 --launches-per-step 40 --step-time 100ms --h2d-bytes 64KiB --d2h-bytes 1MiB
has "$out" "warmup.runs"; has "$out" "prealloc.bytes"; has "$out" "a step holds 10 items x 48 MiB"
run 2 plan --step-time 0;               has "$err" "accepted a time up to an hour"
run 2 plan --step-time 2h;              has "$err" "accepted a time up to an hour"
run 2 plan --launches-per-step -4;      has "$err" "accepted a whole number from 1"
run 2 plan --items-per-step many;       has "$err" "accepted a whole number from 1"
run 2 plan --d2h-bytes lots;            has "$err" "accepted a size"
run 2 plan --d2h-bytes=lots;            has "$err" "--d2h-bytes lots: accepted a size"
run 2 plan --step-time;                 has "$err" "--step-time: missing value (--step-time T)"
run 2 plan --launches-per-stpe 4;       has "$err" "did you mean '--launches-per-step'?"
run 0 plan --latency --items-per-step=10 --launches-per-step=40 --step-time=100ms --item-bytes=48MiB
has "$out" "a step holds 10 items x 48 MiB"

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
GPUOPT_KNOBS=threads=1 run 0 plan --env; has "$out" ': "${OMP_NUM_THREADS=1}"; export OMP_NUM_THREADS'

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
run 2 plan -- true;                     has "$err" "'true' is a command to run, which only --apply-env does"
run 2 plan true;                        has "$err" "'true' is a command to run"
# The options end at the command (as env(1)): its own options are its own.
run 0 plan --apply-env sh -c 'echo "args:$*"' sh --json -l 7; has "$out" "args:--json -l 7"
run 0 plan --apply-env -- sh -c 'echo "args:$*"' sh --help; has "$out" "args:--help"

# ---- Every option form ----------------------------------------------------
# The long form with '=' or a space, the short form apart or joined, a
# cluster, and a unique prefix give the same output.
"$gpuopt" plan --level 0 --json >"$tmp_ref" 2>/dev/null
for form in "--level=0 --json" "-l 0 -j" "-l0 -j" "-jl0" "-jl 0" "--lev=0 --js" "--level 0 -j --"; do
  # shellcheck disable=SC2086 # the form is several words on purpose
  run 0 plan $form;                     same "$tmp_ref"
done
"$gpuopt" plan --device cpu:0 --backend cpu --env >"$tmp_ref" 2>/dev/null
for form in "--device=cpu:0 --backend=cpu --env" "-d cpu:0 -b cpu -e" "-dcpu:0 -bcpu -e" "-ed cpu:0 -b cpu"; do
  # shellcheck disable=SC2086
  run 0 plan $form;                     same "$tmp_ref"
done
run 0 plan --model-bytes=1GiB --item-bytes=1MiB; has "$out" "batch.max_size"
"$gpuopt" devices --json --backend cpu >"$tmp_ref" 2>/dev/null
for form in "-j -b cpu" "-jb cpu" "-jbcpu" "--json --backend=cpu" "--backend cpu --json"; do
  # shellcheck disable=SC2086
  run 0 devices $form;                  json_ok devices
done
"$gpuopt" devices --list >"$tmp_ref" 2>/dev/null
run 0 devices -l;                       same "$tmp_ref"
run 0 devices --li;                     same "$tmp_ref"
"$gpuopt" doctor --json --verbose >"$tmp_ref" 2>/dev/null
run_doctor() { "$gpuopt" doctor "$@" >"$out" 2>"$err"; rc=$?; [ "$rc" -le 1 ] || { echo "FAIL: doctor $* exited $rc"; fails=$((fails + 1)); }; }
for form in "-jv" "-j -v" "--json --verbose" "--verbose --json"; do
  # shellcheck disable=SC2086
  run_doctor $form;                     json_ok accelerators_usable findings
done
run 0 version -j;                       json_ok gpuopt_version api_version
run 0 version --json --;                json_ok gpuopt_version api_version
run 0 cache -j list;                    json_ok files
run 0 cache list --json;                json_ok files
run 0 cache -- path
run 2 tune --cache=maybe x.json;        has "$err" "--cache maybe: accepted: use"
if [ -n "$examples" ]; then
  run 2 tune --strategy=greedy "$examples/sgemm.json"; has "$err" "--strategy greedy: accepted: auto"
  run 2 tune "$examples/sgemm.json" --budget=0; has "$err" "--budget 0: accepted N"
  run 2 tune "$examples/sgemm.json" --seed=-1; has "$err" "--seed -1"
fi

# ---- Misspelled and malformed options: the nearest name, one style ---------
run 2 plan --levl 2;                    has "$err" "gpuopt plan: unknown option '--levl'; did you mean '--level'?"
run 2 plan --devcie cpu:0;              has "$err" "did you mean '--device'?"
run 2 plan --jsno;                      has "$err" "did you mean '--json'?"
run 2 devices --jsn;                    has "$err" "gpuopt devices: unknown option '--jsn'; did you mean '--json'?"
run 2 devices --lsit;                   has "$err" "did you mean '--list'?"
run 2 doctor --vrebose;                 has "$err" "gpuopt doctor: unknown option '--vrebose'; did you mean '--verbose'?"
run 2 version --josn;                   has "$err" "gpuopt version: unknown option '--josn'; did you mean '--json'?"
run 2 cache list --jsno;                has "$err" "gpuopt cache: unknown option '--jsno'; did you mean '--json'?"
run 2 cache lsit;                       has "$err" "'lsit' is not accepted; did you mean 'list'?"
run 2 tune x.json --stratgey random;    has "$err" "gpuopt tune: unknown option '--stratgey'; did you mean '--strategy'?"
run 2 devices -json;                    has "$err" "unknown option '-json'; did you mean '--json'?"
run 2 plan -x;                          has "$err" "unknown option '-x'; accepted: --level N, --device SPEC"
run 2 plan --json=yes;                  has "$err" "--json takes no value ('--json=yes')"
run 2 plan --l 1;                       has "$err" "option '--l' is ambiguous; it could be --level, --latency"
run 2 plan -d;                          has "$err" "--device: missing value (--device SPEC)"
run 2 devices --json --list;            has "$err" "--json and --list are exclusive"
run 2 devices extra;                    has "$err" "unexpected argument 'extra'"
run 2 devices -- --json;                has "$err" "unexpected argument '--json'"
run 2 doctor extra;                     has "$err" "unexpected argument 'extra'"
run 2 version extra;                    has "$err" "unexpected argument 'extra'"
# No message names the library's internals or a bare status description.
for args in "devices --backend metal" "plan --device nowhere" "plan --level 9"; do
  # shellcheck disable=SC2086
  "$gpuopt" $args >"$out" 2>"$err"
  hasnt "$err" "gpuopt_"; hasnt "$err" "input/output error:"; hasnt "$err" "invalid argument:"
done

# ---- Columns and the one-line list ----------------------------------------
# devices -l: "ID  NAME", the IDs padded to one width.
run 0 devices -l;                       has "$out" "cpu:0  "
if ! "$python" - "$out" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
assert lines, "no devices"
starts = {len(re.match(r"(\S+\s+)", l).group(1)) for l in lines}
assert len(starts) == 1, lines
assert all(re.fullmatch(r"\S+ {2,}\S.*?(  \((UUID|PCI): \S+\))?", l) for l in lines), lines
PY
then echo "FAIL: devices -l lines are not 'ID  NAME  (UUID: ...)' in one column"; fails=$((fails + 1)); fi
# plan: every knob's tier starts in one column, whatever the name lengths
# (level 2 adds measured.memory_bandwidth_1thread, longer than the rest).
run 0 plan --level 2
if ! "$python" - "$out" <<'PY'
import re, sys
rows = [l for l in open(sys.argv[1]).read().splitlines() if re.match(r"  \S+ +\S+ +\[(tier \d|user)", l)]
names = {l.index(l.split()[1], 2 + len(l.split()[0])) for l in rows}
short = {l.index("[") for l in rows if len(l.split()[1]) <= 24}
assert rows and len(names) == 1 and len(short) == 1, rows
PY
then echo "FAIL: plan's columns are not aligned"; sed 's/^/  | /' "$out" | head -n 30; fails=$((fails + 1)); fi
# memory: every name whole and TOTAL ending in one column, though PoCL's
# device name ("pthread-<cpu>-<model name>") is longer than the layout's 30.
GPUOPT_BACKEND=cpu,opencl run 0 devices --json; cp "$out" "$tmp_ref"
GPUOPT_BACKEND=cpu,opencl run 0 memory
if ! "$python" - "$out" "$tmp_ref" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
names = [d["name"] for d in json.load(open(sys.argv[2]))["devices"]]
end = lines[0].index("TOTAL") + len("TOTAL")
assert len(lines) == len(names) + 1, lines
col = lines[0].index("NAME")
assert all(any(l[col:col + len(n) + 1] == n + " " for l in lines) for n in names), (names, lines)
assert all(l[end - 1] == "B" for l in lines[1:]), lines
PY
then echo "FAIL: memory's columns are not aligned"; sed 's/^/  | /' "$out" | head -n 10; fails=$((fails + 1)); fi

if [ "$fails" -ne 0 ]; then
  echo "$fails check(s) failed"; exit 1
fi
echo "all CLI checks passed"
