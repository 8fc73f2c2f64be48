#!/usr/bin/env bash
# The main job on a fresh machine: build astrid and use it.
set -euo pipefail
cd "$(dirname "$0")/.."
go run ./cmd/astrid version
