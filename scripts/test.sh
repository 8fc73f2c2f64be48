#!/usr/bin/env bash
# The project's whole test suite, exactly as CI runs it (.ci/run calls `make test`).
# Installs what tests need (npm test servers, test wasm) through the project's own scripts.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS="${GOFLAGS:-} -buildvcs=false"
# The plain builds (compile, vet, staticcheck, fuzz) are the static ones
# users get (CGO_ENABLED=0, as scripts/build.sh builds astrid), so the
# static-binary test (cmd/astrid/static_test.go) reuses this work instead
# of compiling the whole graph a third time (131 s of cmd/astrid's test
# time); only the race detector needs cgo.
export CGO_ENABLED=0
STATICCHECK_VERSION=v0.8.2
. scripts/progress.sh

# A first run compiles every package twice (plain, then for the race
# detector) and prints a line every 15 s while it does.
echo "== compiling the packages (go build ./...; $COLD_BUILD_NOTE)"
compile ./...
echo "== go vet"
heartbeat "go vet" go vet ./...
(cd bench && go vet ./...) # the benchmark peers' module (bench/): kept compiling
echo "== staticcheck"
# Pinned, and run outside go.mod's graph: `go run pkg@version` builds it
# from its own module, so the product's go.mod holds only what it uses.
staticcheck=(go run "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION")
heartbeat staticcheck "${staticcheck[@]}" ./...
(cd bench && "${staticcheck[@]}" ./...)
echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$unformatted" ]; then echo "gofmt would change: $unformatted"; exit 1; fi

echo "== fuzz (short)"
./scripts/fuzz.sh

echo "== install test dependencies (MCP servers from npm, tmux)"
./scripts/npm-ci.sh
./scripts/install-test-tools.sh
# From here a tool that script installs cannot be missing: a test that needs
# one fails instead of skipping (testutil.NeedTestTool), whether or not the
# CI service sets CI.
export ASTRID_CI=1

export CGO_ENABLED=1
echo "== compiling for the race detector (go build -race ./...; the first time compiles every package again)"
compile -race ./...
echo "== go test -race"
heartbeat "go test -race" go test -race -count=1 -timeout 15m ./...

echo "== go test -race under load (a CPU hog on every core): the timing-sensitive tests"
./scripts/test-loaded.sh
