#!/usr/bin/env bash
# The timing-sensitive tests again, with a CPU hog on every core (issue 30:
# with other work on the machine, tests that passed on an idle one
# failed). A test that waits for a condition only gets slower under load;
# one that sleeps a fixed time, or asserts a window tuned to an idle
# machine, fails here. scripts/test.sh runs it after the whole suite, whose
# race builds it reuses.
#
# Budget: CI has 25 minutes on 2 cores and the rest of `make test` takes
# ~17, so this step may take ~5. Measured on that machine with the hog:
# the five packages ~1.5 min side by side (internal/engine/wasm the
# longest, ~70 s), the cmd/astrid tests below ~70 s; the whole of
# cmd/astrid (~10 min unloaded) would not fit, so it runs the tests of the
# daemon, its queries, idle exit, logs and interrupts, which race with
# processes and sockets.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/cpuhog.sh &
hog=$!
trap 'kill "$hog" 2>/dev/null || true; wait "$hog" 2>/dev/null || true' EXIT

cmd_astrid='^(TestCapsuleListAndStatusThroughTheDaemon|TestDaemonQueriesAsAnotherUID|TestDaemonProcessLifecycle|TestIdleDaemonStartedByChatStops|TestDaemonStartedOnPurposeNeverIdlesOut|TestDaemonForegroundInterrupt|TestLogsOfARealDaemon|TestPromptInterruptCancelsTheTurn|TestPromptInterruptThroughTheDaemon|TestInterruptDuringAToolCallUnloadsCleanly|TestToolCommandsThroughTheDaemon|TestApproveReachesTheRunningDaemon|TestPromptWhenTheDaemonDiesMidTurn)$'

start=$SECONDS
go test -race -count=1 -timeout 10m \
  ./internal/dispatch ./internal/bus/... ./internal/engine/wasm ./internal/daemon
go test -race -count=1 -timeout 10m -run "$cmd_astrid" ./cmd/astrid
echo "loaded run: $((SECONDS - start)) s with $(nproc) busy loops"
