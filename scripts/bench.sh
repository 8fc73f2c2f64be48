#!/usr/bin/env bash
# Every benchmark of BENCHMARKS.md, per DESIGN §7: GOMAXPROCS=2, -count 10
# (COUNT overrides), -p 1, no -race, peers (embedded NATS, raw wazero,
# Extism, a direct MCP client) in the same invocation through the bench tag.
# Output goes to bench.out; compare with benchstat (go run
# golang.org/x/perf/cmd/benchstat@latest bench.out).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-bench-tools.sh
count="${COUNT:-10}"
pkgs=(./ipc/ ./internal/bus/ ./internal/dispatch/ ./internal/kernel/)
for p in ./internal/engine/wasm/ ./internal/engine/mcp/; do
  [ -d "$p" ] && pkgs+=("$p")
done
{
  echo "# commit $(git rev-parse --short HEAD) $(date -u +%FT%TZ)"
  grep -m1 'model name' /proc/cpuinfo || true
  GOMAXPROCS=2 go test -tags bench -run '^$' -bench "${BENCH:-.}" -count "$count" -p 1 -timeout 60m "${pkgs[@]}"
} | tee bench.out
