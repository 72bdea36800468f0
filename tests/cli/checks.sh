# The checks the gpuopt command's test scripts share (test_cli.sh,
# test_profile_cli.sh, test_tune_cli.sh, test_fleet.sh), sourced after they set
# gpuopt (the binary), out and err (files for the last run's output) and
# fails=0. Each failed check prints FAIL and what was seen, and counts.

# run EXPECTED_RC ARGS... : runs gpuopt, checks the exit status.
run() {
  want=$1; shift
  "$gpuopt" "$@" >"$out" 2>"$err"
  rc=$?
  if [ "$rc" != "$want" ]; then
    echo "FAIL: gpuopt $* exited $rc, expected $want"; sed 's/^/  stdout: /' "$out" | head -n 20
    sed 's/^/  stderr: /' "$err" | head -n 20; fails=$((fails + 1))
  fi
  # A sanitizer's report exits 1 too, which some checks expect.
  if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$err"; then
    echo "FAIL: gpuopt $* has a sanitizer report"; sed 's/^/  stderr: /' "$err" | head -n 30
    fails=$((fails + 1))
  fi
}
# has FILE TEXT : FILE (the last run's stdout or stderr) contains TEXT.
has() {
  if ! grep -qF -- "$2" "$1"; then
    echo "FAIL: expected '$2' in $(basename "$1") of the last command"; sed 's/^/  | /' "$1" | head -n 20; fails=$((fails + 1))
  fi
}
# hasnt FILE TEXT : FILE does not contain TEXT.
hasnt() {
  if grep -qF -- "$2" "$1"; then
    echo "FAIL: did not expect '$2' in $(basename "$1") of the last command"; sed 's/^/  | /' "$1" | head -n 20; fails=$((fails + 1))
  fi
}
