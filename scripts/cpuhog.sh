#!/usr/bin/env bash
# A CPU hog for the loaded test run (scripts/test.sh): one busy loop per
# core (or $1 of them) until it is killed. Killing this script (TERM, INT
# or its exit) kills its loops too, so a caller's trap on its pid is enough.
# Usage: scripts/cpuhog.sh [loops, default: the number of cores]
set -u
n="${1:-$(nproc)}"
pids=()
stop() {
  trap - EXIT TERM INT
  [ ${#pids[@]} -eq 0 ] || kill "${pids[@]}" 2>/dev/null
  wait
  exit 0
}
trap stop EXIT TERM INT
for _ in $(seq "$n"); do
  # A subshell spinning on a builtin: no fork per iteration, pure CPU.
  (trap - EXIT TERM INT; while :; do :; done) &
  pids+=($!)
done
wait
