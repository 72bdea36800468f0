#!/bin/sh
# gpuopt(1) and libgpuopt(3) render without a warning: mandoc's linter (where
# mandoc is installed; make check installs it), groff with every warning on,
# and `man -l` as a reader would run it; and the pages name every command and
# every long option of the command's --help.
# Usage: test_man_pages.sh SOURCE_DIR GPUOPT_BINARY
set -u
src=$1 gpuopt=$2
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pages="$src/docs/man/gpuopt.1 $src/docs/man/libgpuopt.3"

for page in $pages; do
  if command -v mandoc >/dev/null; then
    if ! mandoc -T lint -W warning "$page" >"$tmp/lint" 2>&1; then
      echo "FAIL: mandoc -T lint $page:"; cat "$tmp/lint"; fails=$((fails + 1))
    fi
  else
    echo "note: no mandoc (Debian: apt-get install mandoc); groff alone checks $page"
  fi
  if ! groff -ww -z -mandoc -Tutf8 "$page" >"$tmp/groff" 2>&1 || [ -s "$tmp/groff" ]; then
    echo "FAIL: groff -ww $page:"; cat "$tmp/groff"; fails=$((fails + 1))
  fi
  if command -v man >/dev/null; then
    MANWIDTH=80 man -l "$page" >"$tmp/out" 2>"$tmp/err"
    if [ -s "$tmp/err" ] || [ ! -s "$tmp/out" ]; then
      echo "FAIL: man -l $page:"; cat "$tmp/err"; fails=$((fails + 1))
    fi
  fi
done

# Every command `gpuopt --help` lists and every long option it knows is in
# gpuopt(1).
commands=$("$gpuopt" --help | sed -n '/^Commands:/,/^$/p' | awk 'NR > 1 && NF && $1 != "help" {print $1}')
[ -n "$commands" ] || { echo "FAIL: no commands in gpuopt --help"; fails=$((fails + 1)); }
for cmd in $commands; do
  grep -q "^\.Cm $cmd\b" "$src/docs/man/gpuopt.1" || { echo "FAIL: gpuopt(1) lacks the command $cmd"; fails=$((fails + 1)); }
  for opt in $("$gpuopt" "$cmd" --help | grep -o -- '--[a-z][a-z0-9-]*' | sort -u); do
    name=${opt#--}
    grep -q -- "Fl -$name\b" "$src/docs/man/gpuopt.1" ||
      { echo "FAIL: gpuopt(1) does not describe $cmd's $opt"; fails=$((fails + 1)); }
  done
done

[ "$fails" -eq 0 ] || exit 1
echo "gpuopt(1) and libgpuopt(3) render without warnings and name every option"
