#!/usr/bin/env bash
# Tools the benchmarks need beyond Go: wat2wasm (Debian's wabt) assembles the
# Extism peer's no-op plugin (bench/wasm/testdata/noop.wat).
# Does nothing when they are already installed.
set -euo pipefail
if command -v wat2wasm >/dev/null; then
  exit 0
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  sudo=(sudo)
fi
"${sudo[@]}" apt-get update
"${sudo[@]}" apt-get install -y wabt
