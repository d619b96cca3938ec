# Shared by the toolkit's CLI tests (cli_test.sh, eight_bit_cli_test.sh),
# sourced once $work is set.
fail() { echo "FAIL: $*"; exit 1; }
expect_status() {  # expected-status description command...
  local want=$1 what=$2; shift 2
  "$@" > "$work/out.txt" 2> "$work/err.txt"; local got=$?
  [ "$got" = "$want" ] || { cat "$work/out.txt" "$work/err.txt"; fail "$what: exit $got, wanted $want"; }
}
# run_doc_commands LEAKY PAGE SED_RANGE GOLDEN OUT COUNT: every
# `build/leaky ...` line of PAGE's section (a sed address range), in the
# current folder, with a perfect "kernel" (GOLDEN copied to OUT before a
# check); fails unless COUNT ran. The last command's output stays in out.txt.
run_doc_commands() {
  local leaky=$1 page=$2 range=$3 golden=$4 out=$5 want=$6 ran=0 line command
  while IFS= read -r line; do
    command=${line#build/leaky }
    [[ $command == check* ]] && cp "$golden" "$out"
    # shellcheck disable=SC2086
    "$leaky" $command > out.txt 2>&1 || { cat out.txt; fail "walkthrough command failed: $line"; }
    ran=$((ran + 1))
  done < <(sed -n "$range" "$page" | grep '^build/leaky ')
  [ "$ran" = "$want" ] || fail "expected $want walkthrough commands in $page ($range), ran $ran"
}
