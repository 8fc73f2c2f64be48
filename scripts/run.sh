#!/usr/bin/env bash
# The main job on a fresh machine: build astrid, check a capsule manifest,
# list the tools the built-in capsules provide, and make a real tool call
# through the kernel (the fs capsule reads this repository's README through
# the router, checked against its grants).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bin
go build -o bin/astrid ./cmd/astrid
./bin/astrid version
echo "== astrid capsule check examples/hello"
./bin/astrid capsule check examples/hello || true
echo "== astrid tool list"
./bin/astrid tool list --workspace .
echo "== astrid tool call read_file README.md (first lines)"
./bin/astrid tool call read_file '{"file_path":"README.md","start_line":1,"end_line":8}' --workspace .
