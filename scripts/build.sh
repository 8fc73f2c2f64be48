#!/usr/bin/env bash
# The one way astrid is built (make build, make run, the README, and the
# test that checks the result, cmd/astrid/static_test.go): a static binary
# with CGO_ENABLED=0, because the default build links libc through `net`.
# Usage: scripts/build.sh [output path, default bin/astrid]
set -euo pipefail
out="${1:-bin/astrid}"
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
cd "$(dirname "$0")/.."
. scripts/progress.sh
mkdir -p "$(dirname "$out")"
echo "== building astrid ($COLD_BUILD_NOTE)"
CGO_ENABLED=0 compile -o "$out" ./cmd/astrid
