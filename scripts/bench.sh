#!/usr/bin/env bash
# Every benchmark of BENCHMARKS.md, per DESIGN §7: GOMAXPROCS=2, -count 10
# (COUNT overrides), -p 1, no -race; the comparisons with peers (embedded
# NATS, Extism, a direct MCP client) from the bench module (bench/, its own
# go.mod) in the same run. Output goes to bench.out; compare with benchstat
# (go run golang.org/x/perf/cmd/benchstat@latest bench.out).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-bench-tools.sh
count="${COUNT:-10}"
pkgs=(./ipc/ ./internal/jsonscan/ ./internal/bus/ ./internal/dispatch/ ./internal/kernel/ ./internal/engine/wasm/)
{
  echo "# commit $(git rev-parse --short HEAD) $(date -u +%FT%TZ)"
  grep -m1 'model name' /proc/cpuinfo || true
  GOMAXPROCS=2 go test -run '^$' -bench "${BENCH:-.}" -count "$count" -p 1 -timeout 60m "${pkgs[@]}"
  (cd bench && GOMAXPROCS=2 go test -run '^$' -bench "${BENCH:-.}" -count "$count" -p 1 -timeout 60m ./...)
} | tee bench.out
