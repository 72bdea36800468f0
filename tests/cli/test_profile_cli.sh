#!/bin/sh
# gpuopt profile -- CMD: the program writes its profile through
# GPUOPT_PROFILE without code for it (at its profiler's destruction, or at
# exit), the command says where, and exits with the program's status.
# Usage: test_profile_cli.sh GPUOPT PROFILE_PHASES EXIT_WRITER PYTHON3
set -u
gpuopt=$1
phases=$2
exit_writer=$3
python=$4
fails=0
dir=$(mktemp -d)
out=$dir/stdout err=$dir/stderr
trap 'rm -rf "$dir"' EXIT

. "$(dirname "$0")/checks.sh"

# trace_names FILE NAME... : FILE is trace JSON whose slices include every NAME.
trace_names() {
  f=$1; shift
  if ! "$python" -c '
import json, sys
names = {e["name"] for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] == "X"}
sys.exit(0 if set(sys.argv[2:]) <= names else 1)' "$f" "$@"; then
    echo "FAIL: $f is not a trace with slices $*"; fails=$((fails + 1))
  fi
}
no_file() {
  if [ -e "$1" ]; then echo "FAIL: $1 should not exist"; fails=$((fails + 1)); fi
}

export GPUOPT_BACKEND=cpu
unset GPUOPT_PROFILE

run 2 profile;                              has "$err" "no command to run"
run 0 profile --help;                       has "$out" "usage: gpuopt profile"
run 2 profile --bogus -- true;              has "$err" "accepted: --output FILE"
run 2 profile --output;                     has "$err" "--output: missing value"
run 2 profile -o;                           has "$err" "--output: missing value"
# Options end at the command: its own options are its own.
run 3 profile -o x.json sh -c 'exit 3';     has "$err" "wrote no profile"

# The example writes its own trace; gpuopt profile's file comes on top,
# from the profiler's destruction.
cd "$dir" || exit 1
run 0 profile --output phases.json -- "$phases" own.json
has "$err" "profile written to $dir/phases.json"
trace_names "$dir/phases.json" load_model preprocess inference postprocess
trace_names "$dir/own.json" load_model inference

# The default file, and an option-less command line.
run 0 profile "$phases" own.json;           has "$err" "profile written to $dir/trace.json"

# The program's status is the command's; nothing written is said.
run 1 profile -o never.json -- false;       has "$err" "wrote no profile to $dir/never.json"
no_file "$dir/never.json"
run 127 profile -- "$dir/no-such-program"; has "$err" "cannot run"

# A profiler never destroyed writes at exit; a fork()ed child never writes
# its parent's file; a second profiler's file is numbered.
run 0 profile -o exit.json -- "$exit_writer"
trace_names "$dir/exit.json" at-exit inner
run 0 profile -o forked.json -- "$exit_writer" fork
trace_names "$dir/forked.json" at-exit
if "$python" -c 'import json,sys; sys.exit("in-the-child" in {e["name"] for e in json.load(open(sys.argv[1]))["traceEvents"]})' "$dir/forked.json"; then :; else
  echo "FAIL: the parent's trace holds the child's section"; fails=$((fails + 1))
fi
run 0 profile -o two.json -- "$exit_writer" two
trace_names "$dir/two.json" at-exit
trace_names "$dir/two.2.json" second-profiler
has "$err" "profile written to $dir/two.2.json"

# %p: one file per process; .svg: the picture.
run 0 profile -o "run-%p.svg" -- "$exit_writer"
n=$(ls "$dir" | grep -c '^run-[0-9]*\.svg$')
[ "$n" = 1 ] || { echo "FAIL: expected one run-PID.svg, found $n"; fails=$((fails + 1)); }
svg=$(ls "$dir"/run-*.svg | head -n 1)
if ! "$python" -c 'import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); sys.exit(r.tag != "{http://www.w3.org/2000/svg}svg")' "$svg"; then
  echo "FAIL: $svg is not SVG"; fails=$((fails + 1))
fi

# No temporary file is left anywhere.
if ls "$dir" | grep -q '\.tmp-'; then echo "FAIL: temporary files left: $(ls "$dir")"; fails=$((fails + 1)); fi

[ "$fails" = 0 ] && echo "all gpuopt profile checks passed"
exit "$fails"
