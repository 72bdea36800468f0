#!/bin/sh
# The Python package as a user gets it, with no network: installs the build
# to a temporary prefix; creates a venv with Debian's python3-venv
# (--system-site-packages, so that Debian's torch is visible); pip-installs
# bindings/python from the tree (--no-build-isolation --no-index); and, from
# outside the repository, imports it (finding the installed library through
# pkg-config), makes a plan, runs python3 -m gpuopt, and applies the plan to
# the real torch with gpuopt.torch.apply(), reading each setting back with
# torch's own getters. Then the same package in a venv of its own (no
# system packages) and in Debian's python3 itself (pip --user, PEP 668's
# --break-system-packages, into a temporary user base).
#
# Usage: test_python_package.sh BUILD_DIR SOURCE_DIR PYTHON3
# Exit status 77 (skipped) without python3-venv; torch's part is skipped,
# with a line saying so, where Debian's python3-torch is not installed.
set -u
build=$1 src=$2 python=$3
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The sanitizer build's library wants its runtime first in every process
# that loads it (CTest sets GPO_PRELOAD there).
if [ -n "${GPO_PRELOAD:-}" ]; then export LD_PRELOAD="$GPO_PRELOAD" ASAN_OPTIONS=detect_leaks=0; fi
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

if ! "$python" -c "import ensurepip, venv" 2>/dev/null; then
  echo "SKIP: $python has no venv module (Debian: apt-get install python3-venv)"; exit 77
fi

# ---- the library, installed as make install does ------------------------------
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; exit 1; }
libdir=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --variable=libdir gpuopt)
[ -e "$libdir/libgpuopt.so.0" ] || { echo "FAIL: no $libdir/libgpuopt.so.0"; exit 1; }

# setuptools builds in the source folder (build/, *.egg-info): build a copy.
cp -r "$src/bindings/python" "$tmp/pkg"
rm -rf "$tmp/pkg/build" "$tmp/pkg"/*.egg-info "$tmp/pkg/gpuopt/__pycache__"

# ---- a venv that sees Debian's packages ----------------------------------------
"$python" -m venv --system-site-packages "$tmp/venv" || { echo "FAIL: python3 -m venv"; exit 1; }
if ! "$tmp/venv/bin/pip" install -q --no-build-isolation --no-index "$tmp/pkg" >"$tmp/pip.log" 2>&1; then
  fail "pip install --no-build-isolation --no-index into the venv:"; cat "$tmp/pip.log"
fi

# From outside the repository, with only pkg-config to find the library.
mkdir "$tmp/elsewhere"
cd "$tmp/elsewhere" || exit 1
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
unset GPUOPT_LIBRARY PYTHONPATH
out=$("$tmp/venv/bin/python" - "$tmp/venv" "$libdir" <<'PY' 2>&1
import dataclasses, json, os, sys
import gpuopt
venv, libdir = sys.argv[1], sys.argv[2]
assert gpuopt.__file__.startswith(venv), gpuopt.__file__
assert gpuopt.library_path() == os.path.join(libdir, "libgpuopt.so.0"), gpuopt.library_path()
with gpuopt.Context(backends="cpu") as ctx:
    dev = ctx.select()
    plan = ctx.plan(level=1)
    assert isinstance(dev.type, gpuopt.DeviceType) and dev.type == gpuopt.DeviceType.CPU
    json.dumps(dataclasses.asdict(plan))
    assert ctx.describe()["selection"]["device"] == "cpu:0"
print("plan", plan.device.id, len(plan.knobs), "knobs")
PY
)
echo "$out"
case $out in *"plan cpu:0 "*) ;; *) fail "the venv's gpuopt made no plan" ;; esac

out=$(GPUOPT_BACKEND=cpu "$tmp/venv/bin/python" -m gpuopt plan --json 2>&1)
case $out in '{"level_requested":'*) ;; *) fail "python3 -m gpuopt plan --json printed: $out" ;; esac

# ---- gpuopt.torch against Debian's real torch ------------------------------------
if "$tmp/venv/bin/python" -c "import torch" 2>/dev/null; then
  out=$(GPUOPT_BACKEND=cpu "$tmp/venv/bin/python" - <<'PY' 2>&1
import torch
import gpuopt, gpuopt.torch
with gpuopt.Context(backends="cpu") as ctx:
    plan = ctx.plan(level=1)
threads = plan.knob("threads").value
before = (torch.get_num_threads(), torch.get_float32_matmul_precision())
report = gpuopt.torch.apply(plan)
after = (torch.get_num_threads(), torch.get_num_interop_threads(),
         torch.get_float32_matmul_precision())
assert after[0] == threads and after[1] == threads, (after, threads, str(report))
assert after[2] == "highest", after   # cpu.fpmath_mode STRICT without reduced precision
assert str(gpuopt.torch.device(plan)) == "cpu"
assert not report.kept, str(report)
print("torch", torch.__version__, "threads", before[0], "->", after[0], "precision", after[2])
PY
)
  echo "$out"
  case $out in *"torch "*" threads "*) ;; *) fail "gpuopt.torch.apply() in the venv: $out" ;; esac
else
  echo "SKIP: no torch for the venv's python (Debian: apt-get install python3-torch; make check does)"
fi

# ---- a venv of its own ---------------------------------------------------------------
# pip builds with setuptools, which needs the wheel package: Debian ships it as
# a wheel (python3-wheel-whl) a venv can install from, with no network.
"$python" -m venv "$tmp/alone"
wheel=$(find /usr/share/python-wheels -name 'wheel-*.whl' 2>/dev/null | head -n 1)
if [ -n "$wheel" ]; then
  if ! { "$tmp/alone/bin/pip" install -q --no-index "$wheel" &&
         "$tmp/alone/bin/pip" install -q --no-build-isolation --no-index "$tmp/pkg"; } >"$tmp/pip2.log" 2>&1; then
    fail "pip install into a venv of its own:"; cat "$tmp/pip2.log"
  fi
  out=$("$tmp/alone/bin/python" -c "import gpuopt; print(gpuopt.version())" 2>&1)
  [ "$out" = "$("$tmp/venv/bin/python" -c 'import gpuopt; print(gpuopt.version())')" ] ||
    fail "the package in a venv of its own: $out"
else
  echo "SKIP: a venv without system packages (Debian: apt-get install python3-wheel-whl)"
fi

# ---- Debian's python3 itself, as a user --------------------------------------------
export PYTHONUSERBASE="$tmp/userbase"
if "$python" -m pip --version >/dev/null 2>&1; then
  "$python" -m pip install -q --user --break-system-packages --no-build-isolation --no-index \
    "$tmp/pkg" >"$tmp/pip3.log" 2>&1 || { fail "pip install --user into $python:"; cat "$tmp/pip3.log"; }
  out=$("$python" -c "import gpuopt; print(gpuopt.__file__)" 2>&1)
  case $out in "$PYTHONUSERBASE"/*) ;; *) fail "$python imported gpuopt from $out, not the user base" ;; esac
else
  echo "SKIP: $python has no pip (Debian: apt-get install python3-pip)"
fi

if [ "$fails" -ne 0 ]; then
  echo "$fails check(s) failed"; exit 1
fi
echo "the Python package installs with pip (venv, a venv of its own, the user's site) and works"
