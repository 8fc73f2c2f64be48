#!/usr/bin/env bash
# The main job on a fresh machine: build astrid, build an example capsule to
# wasm, install it (its capsule check report and grants shown, approved with
# --yes), list every tool, make real tool calls through
# the kernel (the built-in fs capsule reads this README, checked against its
# grants; the wasm capsule greets), and end with the agent: one turn of
# `astrid -p` on the offline replay provider, which reads README.md through
# the bus and answers.
#
# It uses a demo $ASTRID_HOME in your cache directory unless ASTRID_HOME is
# set, so your ~/.astrid is left alone. The home must lie outside the
# workspace (here the repository): the kernel refuses capsules installed
# where an agent working on the workspace could rewrite them.
set -euo pipefail
cd "$(dirname "$0")/.."
export ASTRID_HOME="${ASTRID_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/astrid-demo-home}"
. scripts/progress.sh
scripts/build.sh bin/astrid
./bin/astrid version
echo "== astrid capsule build examples/hello (a third-party capsule, to wasm; the first time compiles Go's runtime and the SDK for wasip1)"
heartbeat "astrid capsule build" ./bin/astrid capsule build examples/hello
echo "== astrid capsule install examples/hello --yes (its grants shown, then approved: --yes stands for you)"
./bin/astrid capsule install examples/hello --yes
echo "== astrid capsule list"
./bin/astrid capsule list --workspace .
echo "== astrid tool list"
./bin/astrid tool list --workspace .
echo "== astrid tool call greet"
./bin/astrid tool call greet '{"name":"Ada"}' --workspace .
echo "== astrid tool call read_file README.md (first lines)"
./bin/astrid tool call read_file '{"file_path":"README.md","start_line":1,"end_line":6}' --workspace .
echo "== astrid -p \"What does README.md say?\" --provider replay (the agent, offline)"
./bin/astrid -p "What does README.md say?" --provider replay --workspace .
echo "== astrid session list"
./bin/astrid session list --workspace .
