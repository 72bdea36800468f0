#!/usr/bin/env bash
# The bash completion (tools/gpuopt/gpuopt.bash) offers the commands, every
# long option each command's --help names, the values of --backend, --level,
# --strategy and --cache, device ids from `gpuopt devices --list`, and
# commands after plan --apply-env and profile.
# Usage: test_completion.sh GPUOPT_BINARY COMPLETION_FILE
set -u
gpuopt=$1
PATH="$(cd "$(dirname "$gpuopt")" && pwd):$PATH"
# shellcheck source=/dev/null
source "$2"
fails=0

# complete WORDS... : COMPREPLY for the command line, the cursor on its last word.
complete_line() {
  COMP_WORDS=("$@")
  COMP_CWORD=$(($# - 1))
  _gpuopt
  printf '%s\n' "${COMPREPLY[@]}"
}
offers() { # offers "WANT" WORDS...
  local want=$1; shift
  if ! complete_line "$@" | grep -qxF -- "$want"; then
    echo "FAIL: '$*' does not offer '$want' (offers: $(complete_line "$@" | tr '\n' ' '))"
    fails=$((fails + 1))
  fi
}

# Every command `gpuopt --help` lists, so that a new one cannot be forgotten.
commands=$("$gpuopt" --help | sed -n '/^Commands:/,/^$/p' | awk 'NR > 1 && NF && $1 != "help" {print $1}')
[ -n "$commands" ] || { echo "FAIL: no commands in gpuopt --help"; exit 1; }
for c in $commands help; do offers "$c" gpuopt ""; done
offers --version gpuopt --v
for c in $commands; do
  # (--version in version's help is the global option, offered before a command.)
  for opt in $("$gpuopt" "$c" --help | grep -o -- '--[a-z][a-z0-9-]*' | sort -u | grep -vx -- --version); do
    offers "$opt" gpuopt "$c" --
  done
done
offers --level gpuopt plan --le
offers 2 gpuopt plan --level ""
offers cuda gpuopt devices --backend ""
offers cpu:0 gpuopt plan -d ""
offers annealing gpuopt tune x.json --strategy ""
offers worker gpuopt tune x.json --isolation ""
offers refresh gpuopt tune x.json --cache ""
offers verify gpuopt cache ""
offers plan gpuopt help ""
offers memory gpuopt me
offers --watch gpuopt memory --w
offers sh gpuopt plan --apply-env -- s
offers --output gpuopt profile --o
offers sh gpuopt profile -- s
offers sh gpuopt profile -o t.json s

[ "$fails" -eq 0 ] || exit 1
echo "the completion offers every command, option and value checked"
