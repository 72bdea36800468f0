#!/bin/sh
# make uninstall takes out everything make install put in: installs the build
# to a temporary prefix, uses it (python3 byte-compiles the package beside
# its modules), removes it with cmake/GpuoptUninstall.cmake (what make
# uninstall runs) from the install's manifest, and checks that no file, link
# or libgpuopt directory is left: only the shared directories an install
# creates (bin, lib, share/man/man1, ...), empty, as autotools leaves them.
# A second run finds nothing to remove and still succeeds.
#
# Usage: test_uninstall.sh BUILD_DIR SOURCE_DIR PYTHON3
set -u
build=$1 src=$2 python=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The sanitizer build's library wants its runtime first in every process
# that loads it (CTest sets GPO_PRELOAD there).
if [ -n "${GPO_PRELOAD:-}" ]; then export LD_PRELOAD="$GPO_PRELOAD" ASAN_OPTIONS=detect_leaks=0; fi
prefix=$tmp/prefix fails=0

cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; exit 1; }
cp "$build/install_manifest.txt" "$tmp/manifest"
n=$(wc -l <"$tmp/manifest")
[ "$n" -ge 15 ] || { echo "FAIL: the manifest lists $n files"; cat "$tmp/manifest"; exit 1; }
if [ -n "$python" ]; then
  pkgdir=$(dirname "$(grep '/gpuopt/__init__.py$' "$tmp/manifest")")
  env -u PYTHONDONTWRITEBYTECODE PYTHONPATH="$(dirname "$pkgdir")" "$python" -c "import gpuopt, gpuopt.__main__" ||
    { echo "FAIL: the installed package does not import"; fails=$((fails + 1)); }
  [ -d "$pkgdir/__pycache__" ] || echo "note: python3 wrote no __pycache__ beside the package"
fi

for pass in 1 2; do
  if ! cmake -DMANIFEST="$tmp/manifest" -P "$src/cmake/GpuoptUninstall.cmake" >"$tmp/uninstall.log" 2>&1; then
    echo "FAIL: uninstall (pass $pass) failed:"; cat "$tmp/uninstall.log"; fails=$((fails + 1))
  fi
done

left=$(find "$prefix" ! -type d)
[ -z "$left" ] || { echo "FAIL: left after uninstall:"; echo "$left"; fails=$((fails + 1)); }
ours=$(find "$prefix" -type d \( -name gpuopt -o -name __pycache__ \))
[ -z "$ours" ] || { echo "FAIL: libgpuopt's directories left:"; echo "$ours"; fails=$((fails + 1)); }

[ "$fails" -eq 0 ] || exit 1
echo "uninstall removed all $n installed files and libgpuopt's own directories; left: $(cd "$prefix" && find . -type d | sort | tr '\n' ' ')"
