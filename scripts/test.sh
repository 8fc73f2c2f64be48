#!/usr/bin/env bash
# The project's whole test suite, exactly as CI runs it (.ci/run calls `make test`).
# Installs what tests need (npm test servers, test wasm) through the project's own scripts.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS="${GOFLAGS:-} -buildvcs=false"

echo "== go vet"
go vet ./...
go vet -tags bench ./...
echo "== staticcheck"
go tool staticcheck ./...
echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$unformatted" ]; then echo "gofmt would change: $unformatted"; exit 1; fi

echo "== fuzz (short)"
./scripts/fuzz.sh

echo "== install test dependencies (MCP servers from npm)"
./scripts/npm-ci.sh

echo "== go test -race"
go test -race -count=1 -timeout 15m ./...
