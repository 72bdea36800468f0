#!/bin/sh
# tools/check_structure.py on a tree made here: it must fail on a ring of two
# files and on an include from src/ into backends/, let an allow-listed ring
# pass, and say when an allow-list entry matches nothing.
# Usage: test_check_structure.sh <python3> <C compiler> <check_structure.py>
set -eu
PY=$1 CC=$2 CHECK=$3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

mkdir -p "$T/src/layer" "$T/backends/vendor" "$T/build/CMakeFiles/lib.dir/src/layer"
cat >"$T/src/layer/a.c" <<'C'
int b_calls_back(int);
int a_entry(int x) { return x > 0 ? b_calls_back(x - 1) : 0; }
C
cat >"$T/src/layer/b.c" <<'C'
int a_entry(int);
int b_calls_back(int x) { return a_entry(x); }
C
cat >"$T/src/layer/c.c" <<'C'
int a_entry(int);
int gone_helper(void);
int c_on_top(void) { return a_entry(3) + gone_helper(); }
C
# Compiled as CMake would, and listed in compile_commands.json; stale.c.o
# is left over from a file no longer built: were it counted, it would make a
# ring with c.c.
sep=
echo "[" >"$T/build/compile_commands.json"
for f in a b c; do
    o=CMakeFiles/lib.dir/src/layer/$f.c.o
    (cd "$T/build" && "$CC" -c -o "$o" "$T/src/layer/$f.c")
    printf '%s{"directory": "%s", "command": "%s -c -o %s %s", "file": "%s"}\n' "$sep" \
        "$T/build" "$CC" "$o" "$T/src/layer/$f.c" "$T/src/layer/$f.c" >>"$T/build/compile_commands.json"
    sep=,
done
echo "]" >>"$T/build/compile_commands.json"
cat >"$T/src/layer/stale.c" <<'C'
int c_on_top(void);
int gone_helper(void) { return c_on_top(); }
C
(cd "$T/build" && "$CC" -c -o CMakeFiles/lib.dir/src/layer/stale.c.o "$T/src/layer/stale.c")
rm "$T/src/layer/stale.c"
run() { (cd "$T" && "$PY" "$CHECK" --build build "$@"); }

# A ring of two files in one folder fails; c.c only calls down and is not in it.
if out=$(run); then fail "a ring passed: $out"; fi
echo "$out" | grep -q "^RING (2 files): src/layer/a.c src/layer/b.c$" || fail "ring not named: $out"

# Allow-listed, it passes and is still shown.
echo "src/layer/a.c src/layer/b.c  # being split" >"$T/allow.txt"
out=$(run --allow allow.txt) || fail "an allowed ring failed: $out"
echo "$out" | grep -q "^allowed ring (2 files)" || fail "allowed ring not shown: $out"

# An entry that matches no ring is named for deletion, without failing.
echo "src/layer/gone.c src/layer/also_gone.c" >>"$T/allow.txt"
out=$(run --allow allow.txt) || fail "a stale entry failed the check: $out"
echo "$out" | grep -q "^stale allow-list entry" || fail "stale entry not named: $out"

# A header under src/ that includes one under backends/ fails, allow list or not.
echo '/* vendor */' >"$T/backends/vendor/vendor.h"
echo '#include "vendor/vendor.h"' >"$T/src/layer/up.h"
if out=$(run --allow allow.txt); then fail "an up-include passed: $out"; fi
echo "$out" | grep -q "^UP-INCLUDE src/layer/up.h -> backends/vendor/vendor.h$" ||
    fail "up-include not named: $out"

# With both gone the tree passes.
rm "$T/src/layer/up.h" "$T/build/CMakeFiles/lib.dir/src/layer/b.c.o"
out=$(run) || fail "a clean tree failed: $out"
echo "ok"
