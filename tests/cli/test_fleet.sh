#!/bin/sh
# A node described to a scheduler: GPU locality in `gpuopt devices`, the
# cpu.affinity knob and `gpuopt plan --bind`, `gpuopt labels` (checked
# against Kubernetes' label rules by k8s_labels.py) and `gpuopt gres`, on
# the two-socket trees of tests/fixtures/fleet and tests/fixtures/kfd/mi300x
# with the CUDA test double.
# Usage: test_fleet.sh GPUOPT PYTHON3 FAKE_LIBCUDA SOURCE_DIR
set -u
gpuopt=$1 python=$2 fake_cuda=$3 src=$4
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$tmp/out err=$tmp/err

. "$(dirname "$0")/checks.sh"
labels_valid() { # FORMAT: the last stdout passes Kubernetes' and NFD's rules
  if ! "$python" "$src/tests/cli/k8s_labels.py" "$1" "$out" >/dev/null 2>"$tmp/why"; then
    echo "FAIL: labels break Kubernetes' label syntax:"; sed 's/^/  /' "$tmp/why"; fails=$((fails + 1))
  fi
}

"$python" "$src/tests/cli/k8s_labels.py" selftest || fails=$((fails + 1))

h100=$src/tests/fakes/cuda/devices/h100-sxm5.json
a100=$src/tests/fakes/cuda/devices/a100-sxm4-40gb.json
fleet=$src/tests/fixtures/fleet
export GPUOPT_BACKEND=cuda GPUOPT_CUDA_LIBRARY=$fake_cuda GPUOPT_CACHE_DIR=$tmp/cache
export GPUOPT_FAKE_CUDA_DEVICES="$h100@18:$h100@2a:$h100@9a:$h100@ab"
export GPUOPT_SYSFS_ROOT=$fleet/hgx-h100-2s

# ---- locality: two GPUs per socket ------------------------------------------
run 0 devices --json
"$python" - "$out" <<'PY' || fails=$((fails + 1))
import json, sys
devs = json.load(open(sys.argv[1]))["devices"]
want = [(0, "0-55,112-167", "0-55"), (0, "0-55,112-167", "0-55"),
        (1, "56-111,168-223", "56-111"), (1, "56-111,168-223", "56-111")]
got = [(d["numa_node"], d["local_cpus"], d["local_cores"]) for d in devs]
files = [d["device_file"] for d in devs]
if got != want or files != ["/dev/nvidia%d" % i for i in range(4)]:
    sys.exit("FAIL: locality per GPU %s, device files %s" % (got, files))
PY
run 0 devices;                      has "$out" "NUMA node 1, local CPUs 56-111,168-223; /dev/nvidia3"

# ---- cpu.affinity: the node's CPUs the process may use ----------------------
run 0 plan --device cuda:3 --json
"$python" - "$out" <<'PY' || fails=$((fails + 1))
import json, sys
k = {k["name"]: k for k in json.load(open(sys.argv[1]))["knobs"]}
a = k.get("cpu.affinity", {})
if a.get("value") != "56-111,168-223" or "NUMA node 1" not in a.get("reason", "") \
        or "all 112" not in a.get("reason", ""):
    sys.exit("FAIL: cpu.affinity of cuda:3 %s" % a)
if k.get("cpu.affinity_threads", {}).get("value") != 112:
    sys.exit("FAIL: cpu.affinity_threads %s" % k.get("cpu.affinity_threads"))
PY
export GPUOPT_SYSFS_ROOT=$fleet/hgx-h100-2s-job
run 0 plan --device cuda:0 --env
# What a shell gets from those lines (they set only what is unset).
env -u OMP_NUM_THREADS -u OMP_PLACES sh -c '. "$1"; echo "$OMP_NUM_THREADS $OMP_PLACES"' sh "$out" \
  >"$tmp/vars"
has "$tmp/vars" "8 {0}:4,{112}:4"
run 0 plan --device cuda:0;         has "$out" "this process may use 8 of its 112 CPUs there"
# The job's CPUs are all on socket 0: for a socket-1 GPU no binding helps.
run 0 plan --device cuda:2;         hasnt "$out" "cpu.affinity_threads"
has "$out" "none of the 8 CPUs this process may use"
# A user's value replaces the rule's, and what follows from it follows.
GPUOPT_KNOBS=cpu.affinity=0-1 "$gpuopt" plan --device cuda:0 --env >"$out" 2>"$err"
has "$out" 'OMP_NUM_THREADS=2}'
GPUOPT_KNOBS=cpu.affinity=0-x "$gpuopt" plan --device cuda:0 >"$out" 2>"$err"
has "$err" "a Linux CPU list"

# ---- plan --bind: the command runs on the GPU's CPUs -------------------------
run 0 plan --device cuda:0 --bind --apply-env -- cat /proc/self/status
"$python" - "$out" <<'PY' || fails=$((fails + 1))
import sys
line = [l for l in open(sys.argv[1]) if l.startswith("Cpus_allowed_list:")][0]
cpus = set()
for part in line.split(":", 1)[1].strip().split(","):
    lo, _, hi = part.partition("-")
    cpus |= set(range(int(lo), int(hi or lo) + 1))
# Those of 0-3,112-115 that this machine has.
if not cpus or not cpus <= set(range(0, 4)) | set(range(112, 116)):
    sys.exit("FAIL: the command ran on CPUs %s, not within cpu.affinity 0-3,112-115" % sorted(cpus))
PY
run 2 plan --bind;                  has "$err" "--bind binds the command --apply-env runs"
GPUOPT_BACKEND=cpu GPUOPT_SYSFS_ROOT= "$gpuopt" plan --bind --apply-env -- true >"$out" 2>"$err" \
  || { echo "FAIL: --bind on a CPU plan"; fails=$((fails + 1)); }
has "$err" "not bound: the plan has no cpu.affinity"
if [ "$(nproc)" -lt 57 ]; then
  # None of socket 1's CPUs exists here: refused, and the command never runs.
  export GPUOPT_SYSFS_ROOT=$fleet/hgx-h100-2s
  run 1 plan --device cuda:2 --bind --apply-env -- echo ran
  has "$err" "sched_setaffinity refused CPUs 56-111,168-223"; hasnt "$out" "ran"
fi

# ---- labels -----------------------------------------------------------------
for c in labels gres; do
  run 0 "$c" --help;                has "$out" "usage: gpuopt $c"
done
run 0 --help;                       has "$out" "labels"; has "$out" "gres"
export GPUOPT_SYSFS_ROOT=$fleet/hgx-h100-2s
p=gpuopt.feature.node.kubernetes.io
run 0 labels;                       labels_valid nfd
for l in gpu.count=4 gpu.vendor=nvidia gpu.product=NVIDIA-H100-80GB-HBM3 gpu.family=hopper \
         gpu.arch=sm_90 gpu.compute-capability=9.0 gpu.memory-mib=81920 gpu.compute-units=132 \
         gpu.driver-major=580 gpu.count.NVIDIA-H100-80GB-HBM3=4 gpu.tf32=true gpu.fp8=true \
         gpu.matrix-units=true; do
  has "$out" "$p/$l"
done
hasnt "$out" "gpu.heterogeneous"; hasnt "$out" "bandwidth"
cp "$out" "$tmp/nfd"
run 0 labels --format json;         labels_valid json
"$python" - "$out" "$tmp/nfd" <<'PY' || fails=$((fails + 1))
import json, sys
j = json.load(open(sys.argv[1]))["labels"]
n = dict(l.strip().split("=", 1) for l in open(sys.argv[2]) if not l.startswith("#"))
if j != n:
    sys.exit("FAIL: --format json and the feature file disagree")
PY
run 0 labels --prefix example.com;  has "$out" "example.com/gpu.count=4"; labels_valid nfd
run 2 labels --prefix Example.com;  has "$err" "not a label prefix"
run 2 labels --prefix k8s.io;       has "$err" "not a label prefix"
run 2 labels --format yaml;         has "$err" "accepted nfd"
run 2 labels --bogus;               has "$err" "accepted: --format"
# --output: whole or nothing, and never a half-written file NFD could read.
mkdir "$tmp/features.d"
run 0 labels --output "$tmp/features.d/gpuopt"
has "$tmp/features.d/gpuopt" "$p/gpu.count=4"
[ "$(ls -A "$tmp/features.d")" = gpuopt ] || { echo "FAIL: left $(ls -A "$tmp/features.d")"; fails=$((fails + 1)); }
run 1 labels --output "$tmp/missing/gpuopt"; has "$err" "cannot write"
chmod 0555 "$tmp/features.d"
if [ "$(id -u)" != 0 ]; then
  run 1 labels --output "$tmp/features.d/gpuopt"; has "$err" "nothing was changed"
  has "$tmp/features.d/gpuopt" "$p/gpu.count=4"
fi
chmod 0755 "$tmp/features.d"
# A node of two products: node-wide facts only where both agree.
GPUOPT_FAKE_CUDA_DEVICES="$h100@18:$a100@9a" "$gpuopt" labels >"$out" 2>"$err"
labels_valid nfd
has "$out" "$p/gpu.count.NVIDIA-H100-80GB-HBM3=1"; has "$out" "$p/gpu.count.NVIDIA-A100-SXM4-40GB=1"
has "$out" "$p/gpu.heterogeneous=true"; has "$out" "$p/gpu.fp8=false"; has "$out" "$p/gpu.tf32=true"
hasnt "$out" "$p/gpu.product="; hasnt "$out" "$p/gpu.family="
# A product name with everything a label value may not hold.
GPUOPT_FAKE_CUDA_DEVICES="$src/tests/cli/fleet/odd-name.json" "$gpuopt" labels >"$out" 2>"$err"
labels_valid nfd
has "$out" "$p/gpu.product=NVIDIA-A100-SXM4-80GB-MIG-7g.80gb-berBoard-with-a-name-longer"
# No GPU: the count says so.
GPUOPT_BACKEND=cpu "$gpuopt" labels >"$out" 2>"$err"; has "$out" "$p/gpu.count=0"; labels_valid nfd
# A measured bandwidth in the tuning cache becomes a class label.
# The double cannot compute, so level 2 on it stops at the reduction check
# before the bandwidth (tier 2 measures it last): the record comes from an
# export of tier 2's records on this double (fleet/README.md), imported.
GPUOPT_FAKE_CUDA_DEVICES="$h100@18" "$gpuopt" cache import "$src/tests/cli/fleet/h100-tier2.export" >/dev/null 2>&1 ||
  { echo "FAIL: cache import of fleet/h100-tier2.export"; fails=$((fails + 1)); }
GPUOPT_FAKE_CUDA_DEVICES="$h100@18" "$gpuopt" labels >"$out" 2>"$err"
labels_valid nfd
"$python" - "$out" <<'PY' || fails=$((fails + 1))
import sys
v = [l.split("=", 1)[1].strip() for l in open(sys.argv[1]) if "gpu.memory-bandwidth-gbs-class=" in l]
if len(v) != 1 or int(v[0]) & (int(v[0]) - 1):
    sys.exit("FAIL: memory-bandwidth class from the cache: %s" % v)
PY
# AMD: eight MI300X from the KFD topology alone.
GPUOPT_BACKEND=rocm GPUOPT_HIP_LIBRARY=/nonexistent GPUOPT_SYSFS_ROOT=$src/tests/fixtures/kfd/mi300x \
  "$gpuopt" labels >"$out" 2>"$err"
labels_valid nfd
for l in gpu.count=8 gpu.vendor=amd gpu.product=AMD-Instinct-MI300X gpu.family=cdna3 gpu.arch=gfx942 \
         gpu.memory-mib=196608 gpu.compute-units=304; do
  has "$out" "$p/$l"
done

# ---- gres -------------------------------------------------------------------
run 0 gres --node node17
has "$out" "NodeName=node17 Name=gpu Type=nvidia_h100_80gb_hbm3 File=/dev/nvidia0 Cores=0-55"
has "$out" "NodeName=node17 Name=gpu Type=nvidia_h100_80gb_hbm3 File=/dev/nvidia3 Cores=56-111"
has "$out" "# NodeName=node17 Gres=gpu:nvidia_h100_80gb_hbm3:4"
run 2 gres --node "a b";            has "$err" "a Slurm node name"
run 2 gres --bogus;                 has "$err" "accepted: --node NAME"
GPUOPT_FAKE_CUDA_DEVICES="$h100@18:$a100@9a" "$gpuopt" gres --node n1 >"$out" 2>"$err"
has "$out" "# NodeName=n1 Gres=gpu:nvidia_h100_80gb_hbm3:1,gpu:nvidia_a100-sxm4-40gb:1"
GPUOPT_BACKEND=rocm GPUOPT_HIP_LIBRARY=/nonexistent GPUOPT_SYSFS_ROOT=$src/tests/fixtures/kfd/mi300x \
  "$gpuopt" gres --node n2 >"$out" 2>"$err"
has "$out" "NodeName=n2 Name=gpu Type=amd_instinct_mi300x File=/dev/dri/renderD128 Cores=0-95"
has "$out" "NodeName=n2 Name=gpu Type=amd_instinct_mi300x File=/dev/dri/renderD184 Cores=96-191"
has "$out" "# NodeName=n2 Gres=gpu:amd_instinct_mi300x:8"
GPUOPT_BACKEND=cpu "$gpuopt" gres >"$out" 2>"$err";  has "$out" "nothing for gres.conf"

if [ "$fails" -ne 0 ]; then
  echo "$fails failure(s)"
  exit 1
fi
echo "all fleet checks passed"
