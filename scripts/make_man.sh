#!/usr/bin/env bash
# The leaky(1) manual page, made from the CLI's own --help: the top level,
# then each command and subcommand, so it says what the binary says.
# Usage: bash scripts/make_man.sh LEAKY OUT.1
set -euo pipefail
leaky=$1 out=$2
# roff: a backslash is \e, and a line must not start with . or '.
escape() { sed -e "s|Usage: $leaky|Usage: leaky|" -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/"; }
# The names listed under "Subcommands:" in a --help text.
commands() { awk '/^Subcommands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }' ; }
section() {  # section TITLE ARGS...: one command's help as preformatted text
  echo ".SS $1"
  echo ".nf"
  shift
  "$leaky" "$@" --help | escape
  echo ".fi"
}
version=$("$leaky" --version)
{
  echo ".TH LEAKY 1 \"\" \"leaky $version\" \"User Commands\""
  echo ".SH NAME"
  echo "leaky \\- exact, tiled, multi-core LeakyReLU operators, their planner, golden data and kernel diagnosis"
  echo ".SH SYNOPSIS"
  echo ".B leaky"
  echo "\\fICOMMAND\\fR [\\fISUBCOMMAND\\fR] [\\fIOPTIONS\\fR]"
  echo ".SH DESCRIPTION"
  echo ".nf"
  "$leaky" --help | escape
  echo ".fi"
  echo ".SH COMMANDS"
  for c in $("$leaky" --help | commands); do
    section "leaky $c" "$c"
    for s in $("$leaky" "$c" --help | commands); do section "leaky $c $s" "$c" "$s"; done
  done
  echo ".SH EXIT STATUS"
  echo "0 on success; 2 for unusable input (one line on stderr, nothing written);"
  echo "leaky check: 1 when the output does not match the golden."
  echo ".SH SEE ALSO"
  echo "The README and docs/ of the source tree: docs/toolkit.md (plan, golden, check),"
  echo "docs/gan-lab.md (gan), docs/design.md."
} > "$out.tmp"
mv "$out.tmp" "$out"
