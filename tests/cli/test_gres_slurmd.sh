#!/bin/sh
# gpuopt gres's output read by Slurm's own parser: Debian's slurmd -G
# ("print the generic resource configuration", slurmd(8)) on a gres.conf and
# a slurm.conf written from it, for the two-socket NVIDIA tree and the
# MI300X tree. Exit 77 (skipped) where slurmd is not installed.
#
# What has to give for slurmd to run here without a cluster (details in
# docs/fleet.md): it runs as a program named "slurmd" (under another name it
# drops slurm.conf's Gres=, node_conf.c run_in_daemon), needs no munged and
# no slurmctld for -G, and checks two things against this machine:
#  - File= must be a character device that exists: each /dev/nvidiaN or
#    /dev/dri/renderDN is given as a link of the same name to /dev/null, the
#    only change made to gpuopt's lines;
#  - Cores= must exist: SlurmdParameters=config_overrides makes slurmd take
#    the node's sockets and cores from slurm.conf (the recorded machine's),
#    not from this one.
# slurmd -G exits 0 even when it ignores lines (a Type or count mismatch is
# a WARNING), so the check reads its "Gres Name=" lines.
# Usage: test_gres_slurmd.sh GPUOPT FAKE_LIBCUDA SOURCE_DIR
set -u
gpuopt=$1 fake_cuda=$2 src=$3
slurmd=$(command -v slurmd-wlm || ls /usr/sbin/slurmd-wlm /usr/sbin/slurmd 2>/dev/null | head -n 1)
if [ -z "$slurmd" ]; then
  echo "slurmd is not installed (Debian: apt-get install slurmd): skipped"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
node=$(hostname -s 2>/dev/null || hostname)
node=${node%%.*}
ln -s "$(readlink -f "$slurmd")" "$tmp/slurmd"
fails=0

# check NAME SOCKETS CORES_PER_SOCKET THREADS EXPECTED_LINES: runs gpuopt gres
# (environment set by the caller), then slurmd -G on what it wrote.
check() {
  name=$1 sockets=$2 cores=$3 threads=$4 want=$5
  d=$tmp/$name
  mkdir -p "$d/dev"
  "$gpuopt" gres --node "$node" >"$d/gpuopt.out" 2>"$d/gpuopt.err" || {
    echo "FAIL: $name: gpuopt gres failed"; cat "$d/gpuopt.err"; fails=$((fails + 1)); return; }
  sed -n 's|.* File=\([^ ]*\).*|\1|p' "$d/gpuopt.out" | while read -r f; do
    ln -sf /dev/null "$d/dev/$(basename "$f")"
  done
  sed "s| File=[^ ]*/| File=$d/dev/|" "$d/gpuopt.out" >"$d/gres.conf"
  gres=$(sed -n "s/^# NodeName=$node Gres=//p" "$d/gpuopt.out")
  cat >"$d/slurm.conf" <<CONF
ClusterName=gpuopt
SlurmctldHost=localhost
GresTypes=gpu
SlurmdParameters=config_overrides
NodeName=$node Gres=$gres CPUs=$((sockets * cores * threads)) Boards=1 SocketsPerBoard=$sockets CoresPerSocket=$cores ThreadsPerCore=$threads State=UNKNOWN
PartitionName=p Nodes=$node Default=YES
SlurmdSpoolDir=$d/spool
SlurmdPidFile=$d/slurmd.pid
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
CONF
  SLURM_CONF=$d/slurm.conf timeout 60 "$tmp/slurmd" -G >"$d/slurmd.out" 2>&1
  got=$(grep -c "Gres Name=gpu " "$d/slurmd.out")
  if [ "$got" != "$want" ] || grep -qiE "warning|error|fatal" "$d/slurmd.out"; then
    echo "FAIL: $name: slurmd -G read $got of $want GPUs:"; sed 's/^/  gres.conf: /' "$d/gres.conf"
    sed 's/^/  slurmd: /' "$d/slurmd.out"; fails=$((fails + 1)); return
  fi
  # Each GPU as gpuopt wrote it: Type, the device's index, Cores.
  sed -n 's|.* Type=\([^ ]*\) File=[^ ]*[^0-9]\([0-9]*\) Cores=\([^ ]*\).*|Type=\1 Count=1 Index=\2 .* Cores=\3 |p' \
    "$d/gpuopt.out" >"$d/patterns"
  [ "$(wc -l <"$d/patterns")" = "$want" ] || echo "FAIL: $name: gpuopt wrote no $want GPU lines" >>"$tmp/fails"
  while read -r pattern; do
    grep -qE "$pattern" "$d/slurmd.out" || echo "FAIL: $name: slurmd did not read '$pattern'" >>"$tmp/fails"
  done <"$d/patterns"
  echo "$name: slurmd -G read all $want GPUs:"; sed 's/^/  /' "$d/slurmd.out"
}

h100=$src/tests/fakes/cuda/devices/h100-sxm5.json
GPUOPT_BACKEND=cuda GPUOPT_CUDA_LIBRARY=$fake_cuda GPUOPT_SYSFS_ROOT=$src/tests/fixtures/fleet/hgx-h100-2s \
  GPUOPT_FAKE_CUDA_DEVICES="$h100@18:$h100@2a:$h100@9a:$h100@ab" check hgx-h100-2s 2 56 2 4
GPUOPT_BACKEND=rocm GPUOPT_HIP_LIBRARY=/nonexistent GPUOPT_SYSFS_ROOT=$src/tests/fixtures/kfd/mi300x \
  check mi300x 2 96 2 8
[ -f "$tmp/fails" ] && { cat "$tmp/fails"; fails=$((fails + 1)); }
[ "$fails" -eq 0 ] || exit 1
