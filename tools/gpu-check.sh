#!/usr/bin/env bash
# The project's real-GPU check: one prepared run on a machine with an NVIDIA
# GPU (or an AMD one, --rocm) that proves what the test doubles cannot, and
# prints a markdown summary for docs/benchmarks.md ("GPU check").
#
#   tools/gpu-check.sh [--rocm] [--dry-run] [--build DIR] [--out DIR] [--budget S]
#   tools/gpu-check.sh --carry [--build DIR]   (on the build machine, see below)
#
# It runs from an already-built tree (cmake --preset default && cmake --build
# --preset default), with no internet and no package installs, in under 8
# minutes (a global deadline; every step has its own timeout):
#   1. discovery: the library's devices against nvidia-smi --query-gpu (UUID,
#      name, PCI bus id, compute capability, memory, driver) and the SM count
#      read straight from libcuda; on ROCm, against amd-smi's PCI locations
#   2. visibility: CUDA_VISIBLE_DEVICES=<uuid> lists exactly that GPU, and
#      CUDA_VISIBLE_DEVICES= lists none and says why (ROCm: HIP_VISIBLE_DEVICES=0)
#   3. a level-2 plan measures for real; a second one answers from the cache
#   4. the host program around the library (CUDA: tests/gpu binaries, the
#      host's current context kept current and healthy)
#   5. examples/tuning/sgemm_cuda.json tuned on the GPU, its best GFLOP/s, and
#      PyTorch's torch.mm (fp32, TF32 off) beside it when python3 has torch
#      with a GPU; a level-2 plan inside that PyTorch process leaves it working;
#      gpuopt.torch.apply() in a fresh PyTorch process sets what the plan says,
#      read back with torch's own getters
#   6. a candidate that writes out of bounds: the tuner stops at once with the
#      sticky error named (isolating it in a worker process is later work)
# Output: $OUT/summary.md (also printed), $OUT/results.tsv, every command's
# output in $OUT/*.out and *.err. Exit status: 1 when a check failed.
#
# --dry-run runs every step on the test doubles the build made (libcuda and
# NVRTC, or HIP and hiprtc, with launches that run and fault on request) and
# stand-ins for nvidia-smi / amd-smi made from the doubles' device files: it
# proves the script, not a GPU (ctest: gpu_check_dry_run_*).
#
# Libraries: the tree's binaries need libcjson.so.1 (and the tests
# libcmocka.so.0). --carry copies them from the build machine into
# BUILD/carry, which this script puts on LD_LIBRARY_PATH, so a GPU machine
# without them runs the tree as it is.
set -u

VENDOR=nvidia DRY=0 CARRY=0 BUDGET=90 DEADLINE=450
REPO=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$REPO/build OUT=/tmp/gpuopt-gpu-check
ARGS="$*"
while [ $# -gt 0 ]; do
    case $1 in
    --rocm) VENDOR=amd ;;
    --dry-run) DRY=1 ;;
    --carry) CARRY=1 ;;
    --build) BUILD=$(cd "$2" && pwd) || exit 2; shift ;;
    --out) OUT=$2; shift ;;
    --budget) BUDGET=$2; shift ;;
    -h | --help) sed -n '2,/^set -u/p' "$0" | sed 's/^# \{0,1\}//;/^set -u/d'; exit 0 ;;
    *) echo "gpu-check: unknown argument '$1' (--help)" >&2; exit 2 ;;
    esac
    shift
done

if [ "$CARRY" = 1 ]; then
    mkdir -p "$BUILD/carry"
    for bin in "$BUILD/bin/gpuopt" "$BUILD/bin/gpu_cuda_host"; do
        ldd "$bin" 2>/dev/null | awk '/libcjson|libcmocka/ {print $3}' |
            while read -r lib; do cp -L "$lib" "$BUILD/carry/"; done
    done
    ls "$BUILD/carry"
    exit 0
fi

START=$(date +%s)
rm -rf "$OUT" && mkdir -p "$OUT" || exit 2
RESULTS=$OUT/results.tsv
: >"$RESULTS"
export LD_LIBRARY_PATH="$BUILD/carry:$BUILD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export GPUOPT_CACHE_DIR=$OUT/cache GPUOPT_CONFIG='' GPUOPT_LOG=warn
export PYTHONPATH="$REPO/bindings/python${PYTHONPATH:+:$PYTHONPATH}"
export GPUOPT_LIBRARY=$BUILD/lib/libgpuopt.so.0
GPUOPT=$BUILD/bin/gpuopt
PY=${GPU_CHECK_PYTHON:-$(command -v python3 || true)}
HELP=$REPO/tools/gpu_check.py
# Python that loads the project's libraries: a sanitizer build's runtime
# must come first (GPU_CHECK_PRELOAD, set by ctest).
PYLIB=("$PY")
[ -n "${GPU_CHECK_PRELOAD:-}" ] &&
    PYLIB=(env LD_PRELOAD="$GPU_CHECK_PRELOAD" ASAN_OPTIONS=detect_leaks=0 "$PY")
# Where NVRTC and ROCm's libraries usually are when the loader does not know
# them: a toolkit in /usr/local/cuda, ROCm in /opt/rocm, the NVRTC wheel
# PyTorch brings.
for d in /usr/local/cuda/lib64 /opt/rocm/lib \
    "$([ -n "$PY" ] && "$PY" -c 'import os, nvidia.cuda_nvrtc as n; print(os.path.join(list(n.__path__)[0], "lib"))' 2>/dev/null)"; do
    [ -n "$d" ] && [ -d "$d" ] && LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$d
done

record() { # STATUS CHECK DETAIL
    printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$RESULTS"
    printf '%-5s %s: %s\n' "$1" "$2" "$3" >&2
}
# The helper's lines go to the results as they are.
judge() { # helper arguments...
    if [ -z "$PY" ]; then
        record SKIP "$1" "no python3 to read the output (it is in $OUT)"
        return
    fi
    "$PY" "$HELP" "$@" >"$OUT/judge.tmp" 2>>"$OUT/judge.err"
    cat "$OUT/judge.tmp" >>"$RESULTS"
    sed 's/\t/  /' "$OUT/judge.tmp" >&2
}
# Runs NAME with at most T seconds (and never past the deadline); stdout and
# stderr go to $OUT/NAME.out and .err. Returns the command's status.
run() { # NAME T COMMAND...
    local name=$1 t=$2 left
    shift 2
    left=$((DEADLINE - ($(date +%s) - START)))
    [ "$t" -gt "$left" ] && t=$left
    if [ "$t" -lt 5 ]; then
        echo "out of time" >"$OUT/$name.err"
        return 124
    fi
    printf '$ %s\n' "$*" >>"$OUT/commands.txt"
    timeout -k 10 "$t" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
}

# ---- the machine, or the doubles that stand in for it ----------------------
if [ "$VENDOR" = nvidia ]; then
    BACKEND=cuda LANGUAGE=cuda
else
    BACKEND=rocm LANGUAGE=hip
fi
if [ "$DRY" = 1 ]; then
    mkdir -p "$OUT/stub"
    if [ "$VENDOR" = nvidia ]; then
        DEV=$REPO/tests/fakes/cuda/devices/h100-sxm5.json
        export GPUOPT_CUDA_LIBRARY=$BUILD/tests/fakes/cuda/full/libcuda.so.1
        export GPUOPT_NVRTC_LIBRARY=$BUILD/tests/fakes/cuda/nvrtc/libnvrtc.so.13
        export GPUOPT_FAKE_CUDA_DEVICES=$DEV GPUOPT_FAKE_CUDA_LAUNCH_NS=250000
        # The driver version the kernel module's file gives (an H100 system's).
        export GPUOPT_SYSFS_ROOT=$REPO/tests/fixtures/nvidia/hgx-h100-open-580
        "$PY" "$HELP" stub-smi nvidia "$DEV" 580.65.06 >"$OUT/stub/smi.txt"
        printf '#!/bin/sh\ncat "%s"\n' "$OUT/stub/smi.txt" >"$OUT/stub/nvidia-smi"
        LIBCUDA=$GPUOPT_CUDA_LIBRARY
    else
        DEV=$REPO/tests/fakes/hip/devices/mi300x.json
        export GPUOPT_HIP_LIBRARY=$BUILD/fakes/hip6/libamdhip64.so.6
        export GPUOPT_HIPRTC_LIBRARY=$GPUOPT_HIP_LIBRARY
        export GPUOPT_FAKE_HIP_DEVICES=$DEV GPUOPT_FAKE_HIP_LAUNCH_NS=250000
        "$PY" "$HELP" stub-smi amd "$DEV" - >"$OUT/stub/smi.json"
        printf '#!/bin/sh\ncat "%s"\n' "$OUT/stub/smi.json" >"$OUT/stub/amd-smi"
    fi
    chmod +x "$OUT/stub/"*
    export PATH="$OUT/stub:$PATH" GPUOPT_GPU_TEST_ON_DOUBLES=1
fi
# The tuning budget: seconds on a GPU; on the doubles a count of
# candidates, so a slow (sanitizer) build still gets as many.
TUNE_BUDGET=${BUDGET}s
if [ "$DRY" = 1 ]; then
    TUNE_BUDGET=6
else
    LIBCUDA=libcuda.so.1
fi

[ -x "$GPUOPT" ] || { echo "gpu-check: no $GPUOPT: build the tree first" >&2; exit 2; }
if ldd "$GPUOPT" | grep -q 'not found'; then
    record FAIL "environment" "$(ldd "$GPUOPT" | grep 'not found' | tr -s ' \t' ' '): run --carry on the build machine"
fi
run version 10 "$GPUOPT" version
GPU_NAME=unknown DRIVER=unknown

# ---- 1. discovery ---------------------------------------------------------
if [ "$VENDOR" = nvidia ]; then
    # compute_cap came with driver 510; an older one answers without it.
    if run smi 30 nvidia-smi --query-gpu=index,uuid,name,pci.bus_id,compute_cap,memory.total,driver_version \
        --format=csv,noheader,nounits ||
        { run smi 30 nvidia-smi --query-gpu=index,uuid,name,pci.bus_id,memory.total,driver_version \
            --format=csv,noheader,nounits && sed -i 's/^\([^,]*,[^,]*,[^,]*,[^,]*\),/\1, ?,/' "$OUT/smi.out"; }; then
        GPU_NAME=$(head -1 "$OUT/smi.out" | cut -d, -f3 | sed 's/^ *//')
        DRIVER=$(head -1 "$OUT/smi.out" | cut -d, -f7 | sed 's/^ *//')
    else
        record FAIL "discovery" "nvidia-smi failed: $(head -c 300 "$OUT/smi.err")"
    fi
    [ -n "$PY" ] && run sm 30 "${PYLIB[@]}" "$HELP" sm-counts "$LIBCUDA"
    CUDA_DEVICE_ORDER=PCI_BUS_ID run devices 60 "$GPUOPT" devices --json --backend cuda
    judge compare-nvidia "$OUT/smi.out" "$OUT/devices.out" "$OUT/sm.out"
else
    run smi 30 amd-smi list --json || record FAIL "discovery" "amd-smi failed: $(head -c 300 "$OUT/smi.err")"
    run devices 60 "$GPUOPT" devices --json --backend rocm
    judge compare-amd "$OUT/smi.out" "$OUT/devices.out"
fi
if [ -n "$PY" ] && [ -s "$OUT/devices.out" ]; then
    [ "$DRIVER" = unknown ] && DRIVER=$("$PY" -c 'import json,sys
b=[x for x in json.load(open(sys.argv[1]))["backends"] if x["name"]==sys.argv[2]]
print((b[0].get("driver_version") or "unknown") if b else "unknown")' "$OUT/devices.out" "$BACKEND" 2>/dev/null)
    FIRST=$("$PY" -c 'import json,sys
d=[x for x in json.load(open(sys.argv[1]))["devices"] if x["backend"]==sys.argv[2]]
print((d[0]["uuid"] if sys.argv[2]=="cuda" else d[0]["pci_bus_id"]) if d else "")' \
        "$OUT/devices.out" "$BACKEND" 2>/dev/null)
    [ "$GPU_NAME" = unknown ] && GPU_NAME=$("$PY" -c 'import json,sys
d=[x for x in json.load(open(sys.argv[1]))["devices"] if x["backend"]==sys.argv[2]]
print(d[0]["name"] if d else "unknown")' "$OUT/devices.out" "$BACKEND" 2>/dev/null)
fi

# ---- 2. visibility ----------------------------------------------------------
if [ -n "${FIRST:-}" ]; then
    if [ "$VENDOR" = nvidia ]; then
        env CUDA_VISIBLE_DEVICES="$FIRST" "$GPUOPT" devices --json --backend cuda \
            >"$OUT/visible.out" 2>"$OUT/visible.err"
        judge visible "$OUT/visible.out" cuda "$FIRST"
        env CUDA_VISIBLE_DEVICES= "$GPUOPT" devices --json --backend cuda \
            >"$OUT/hidden.out" 2>"$OUT/hidden.err"
        judge hidden "$OUT/hidden.out" cuda CUDA_VISIBLE_DEVICES
    else
        env HIP_VISIBLE_DEVICES=0 "$GPUOPT" devices --json --backend rocm \
            >"$OUT/visible.out" 2>"$OUT/visible.err"
        judge visible "$OUT/visible.out" rocm "$FIRST"
    fi
else
    record FAIL "visibility" "no device to name (see discovery)"
fi

# ---- 3. level 2 ---------------------------------------------------------------
run plan1 180 "$GPUOPT" plan --level 2 --device "$BACKEND:0" --json
judge plan "$OUT/plan1.out" "$DRY"
run plan2 60 "$GPUOPT" plan --level 2 --device "$BACKEND:0" --json
judge plan-cached "$OUT/plan2.out" "$DRY"

# ---- 4. the host program's context (CUDA) --------------------------------------
if [ "$VENDOR" = nvidia ]; then
    run host 120 "$BUILD/bin/gpu_cuda_host"
    case $? in
    0) record PASS "host context kept" "$(grep -h 'level asked\|apply:' "$OUT/host.out" | tr '\n' ' ' | head -c 400)" ;;
    77) record FAIL "host context kept" "skipped: $(head -c 300 "$OUT/host.out")" ;;
    *) record FAIL "host context kept" "$(grep -h 'ERROR\|FAILED\|error' "$OUT/host.out" "$OUT/host.err" | head -5 | tr '\n' ' ')" ;;
    esac
fi

# ---- 5. tuning SGEMM, and PyTorch beside it ------------------------------------
SPEC=$OUT/spec
mkdir -p "$SPEC"
cp "$REPO/examples/tuning/sgemm.cu" "$REPO/examples/tuning/sgemm_ref.cu" "$SPEC/"
sed "s/\"language\": \"cuda\"/\"language\": \"$LANGUAGE\"/" "$REPO/examples/tuning/sgemm_cuda.json" \
    >"$SPEC/sgemm.json"
M=2048
run tune $((BUDGET + 120)) "$GPUOPT" tune "$SPEC/sgemm.json" --device "$BACKEND:0" \
    --strategy random --budget "$TUNE_BUDGET" --cache off --json
[ -s "$OUT/tune.err" ] && tail -3 "$OUT/tune.err" >&2
judge tune "$OUT/tune.out" $M $M $M "$OUT/tune-best.json"
if [ -n "$PY" ]; then
    "$PY" "$HELP" torch-script >"$OUT/gpu_check_torch.py"
    TORCH_PATH=$PYTHONPATH
    if [ "$DRY" = 1 ]; then # a stand-in torch: the script's code runs, no PyTorch
        "$PY" "$HELP" fake-torch "$OUT/faketorch" "$VENDOR"
        TORCH_PATH=$OUT/faketorch:$PYTHONPATH
    fi
    PYTHONPATH=$TORCH_PATH GPU_CHECK_BACKEND=$BACKEND run torch 180 "${PYLIB[@]}" \
        "$OUT/gpu_check_torch.py" $M $M $M "$OUT/torch.json"
    judge torch "$OUT/torch.json" "$DRY"
    judge fraction "$OUT/tune-best.json" "$OUT/torch.json"
    # gpuopt.torch.apply() in a fresh process, before CUDA starts: what it
    # says it set, torch's getters read back.
    "$PY" "$HELP" torch-apply-script >"$OUT/gpu_check_torch_apply.py"
    PYTHONPATH=$TORCH_PATH run torch-apply 120 "${PYLIB[@]}" "$OUT/gpu_check_torch_apply.py" \
        "$OUT/torch-apply.json"
    judge torch-apply "$OUT/torch-apply.json" "$DRY"
else
    record SKIP "PyTorch baseline" "no python3"
fi

# ---- 6. a candidate that faults --------------------------------------------------
cat >"$SPEC/axpy_fault.cu" <<'EOF'
/* BAD=1 writes 2^40 floats (4 TiB) past y: an address no allocation has. */
extern "C" __global__ void axpy(float *y, const float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
#if BAD
    y[i + (1LL << 40)] = a * x[i];
#else
    y[i] += a * x[i];
#endif
}
EOF
cat >"$SPEC/axpy_fault.json" <<EOF
{
  "kernel": {"file": "axpy_fault.cu", "entry": "axpy", "language": "$LANGUAGE"},
  "parameters": {"BAD": [0, 1], "BLOCK": [128, 256]},
  "sizes": {"N": 1048576},
  "geometry": {"global": ["N"], "local": ["BLOCK"]},
  "arguments": [
    {"buffer": "float", "size": "N", "init": "zeros", "output": true},
    {"buffer": "float", "size": "N", "init": "random"},
    {"scalar": "float", "value": 2.0},
    {"scalar": "int", "value": "N"}
  ],
  "search": {"strategy": "exhaustive"}
}
EOF
if [ "$DRY" = 1 ]; then # the doubles fault on the third launch instead
    export GPUOPT_FAKE_CUDA_FAULT=3:CUDA_ERROR_ILLEGAL_ADDRESS GPUOPT_FAKE_HIP_FAULT=3:hipErrorIllegalAddress
fi
run fault 120 "$GPUOPT" tune "$SPEC/axpy_fault.json" --device "$BACKEND:0" --cache off
judge fault $? "$OUT/fault.err" "$VENDOR" "$DRY"
if [ "$VENDOR" = nvidia ]; then # the same through the API, in its own process
    if run apifault 120 "$BUILD/bin/gpu_cuda_fault"; then
        record PASS "faulting candidate, through the API" "$(grep -h 'gpuopt_tuner_run' "$OUT/apifault.out" | head -c 300)"
    else
        record FAIL "faulting candidate, through the API" "$(grep -h 'ERROR\|FAILED\|skipped' "$OUT/apifault.out" "$OUT/apifault.err" | head -5 | tr '\n' ' ')"
    fi
fi
unset GPUOPT_FAKE_CUDA_FAULT GPUOPT_FAKE_HIP_FAULT
# Another process still finds the GPU well.
if run after 60 "$GPUOPT" plan --level 1 --device "$BACKEND:0"; then
    record PASS "device usable after the fault" "a new process plans for $BACKEND:0"
else
    record FAIL "device usable after the fault" "$(head -c 300 "$OUT/after.err")"
fi

# ---- summary ---------------------------------------------------------------------
WALL=$(($(date +%s) - START))
if [ -n "$PY" ]; then
    "$PY" -c 'import json,sys
m = dict(zip(sys.argv[2::2], sys.argv[3::2]))
m["dry_run"] = sys.argv[1] == "1"
json.dump(m, sys.stdout)' \
        "$DRY" date "$(date -u '+%Y-%m-%d %H:%M UTC')" host "$(uname -n) ($(uname -m))" gpu "$GPU_NAME" \
        driver "$DRIVER" version "$(head -1 "$OUT/version.out" 2>/dev/null)" \
        command "tools/gpu-check.sh $ARGS" wall_s "$WALL" >"$OUT/meta.json"
    "$PY" "$HELP" summary "$RESULTS" "$OUT/meta.json" >"$OUT/summary.md"
else
    { echo "### GPU check ($(date -u '+%Y-%m-%d'))"; echo; sed 's/\t/ | /g; s/^/| /; s/$/ |/' "$RESULTS"; } >"$OUT/summary.md"
fi
echo
cat "$OUT/summary.md"
grep -q '^FAIL' "$RESULTS" && exit 1
# A dry run must get through every step the doubles can take, or the one
# run on hardware would meet a step nobody ran.
if [ "$DRY" = 1 ]; then
    want=6
    [ "$VENDOR" = nvidia ] && want=10
    got=$(grep -c '^PASS' "$RESULTS")
    [ "$got" -ge "$want" ] || { echo "gpu-check: dry run: $got checks passed, $want expected" >&2; exit 1; }
fi
exit 0
