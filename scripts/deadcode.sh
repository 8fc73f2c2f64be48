#!/usr/bin/env bash
# deadcode over the binary and the tests' needs (issue 30.6): fails when a
# function nothing calls, neither astrid nor any test, appears. Run by hand
# (make deadcode), not by make test: it loads and analyses the whole
# program from source: 1 min 50 s on the 2-core machine at load 11-13 (48 s
# of CPU, mostly on one core), 3 min 20 s at load 12-16; the static phase of
# CI's 25-minute budget can spare ~30 s.
#
# Without -test, deadcode also lists what only tests call: the test-support
# packages (sdktest, testutil, the *test packages), test seams (NewWithClock,
# NewWithExporter, dispatch.WithRequest), the public sdk/ipc/manifest/hostapi
# API that capsule authors call, and what only wasip1 guests call (abi, the
# sdk's wasm files): each is used, just not by this build of astrid. A
# function only its own package's tests call belongs in a _test.go file.
set -euo pipefail
cd "$(dirname "$0")/.."
export CGO_ENABLED=0
DEADCODE_VERSION=v0.52.0
out=$(go run "golang.org/x/tools/cmd/deadcode@$DEADCODE_VERSION" -test ./...)
if [[ -n $out ]]; then
  printf '%s\n' "$out"
  echo "deadcode.sh: the functions above are called by nothing, not even a test: remove them" >&2
  exit 1
fi
echo "deadcode: clean (deadcode -test ./...)"
