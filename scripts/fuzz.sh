#!/usr/bin/env bash
# Short fuzz runs of every parser; FUZZTIME overrides the per-target time.
set -euo pipefail
cd "$(dirname "$0")/.."
t="${FUZZTIME:-20s}"
run() { # package target
  if go test -list "^$2\$" "$1" 2>/dev/null | grep -qx "$2"; then
    go test -run '^$' -fuzz "^$2\$" -fuzztime "$t" "$1"
  fi
}
run ./manifest FuzzParse
