#!/usr/bin/env bash
# Issue 38's figures of record beside the peers': one agent turn (the fake
# model asks for README.md, then answers), exec to exit, of astrid
# in-process and through its daemon and of every peer agent CLI on PATH
# (codex, claude, opencode, crush, goose), interleaved round by round;
# min/median/p90 wall, CPU and peak RSS per agent (bench/peers/doc.go).
#
# Usage: bench/peers.sh [--install] [-rounds N] [-only a,b]
#   --install  first installs the npm peers (@openai/codex,
#              @anthropic-ai/claude-code, opencode-ai, @charmland/crush)
#              into a throwaway directory, put first on PATH for this run
#              only; never in CI.
# ASTRID_BIN runs that astrid instead of building one.
set -euo pipefail
cd "$(dirname "$0")/.."
install=0
args=()
for a in "$@"; do
  case "$a" in
    --install) install=1 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) args+=("$a") ;;
  esac
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ "$install" = 1 ]; then
  if [ -n "${CI:-}" ]; then
    echo "peers.sh: --install is not for CI (it fetches the peers from the npm registry)" >&2
    exit 2
  fi
  echo "== installing the npm peers into $work/npm (throwaway)" >&2
  # Each on its own, so that one that fails to install is skipped, not fatal.
  for p in @openai/codex @anthropic-ai/claude-code opencode-ai @charmland/crush; do
    npm install --prefix "$work/npm" --no-audit --no-fund --loglevel=error "$p" >&2 \
      || echo "peers.sh: $p did not install; it is skipped" >&2
  done
  export PATH="$work/npm/node_modules/.bin:$PATH"
fi
bin="${ASTRID_BIN:-}"
if [ -z "$bin" ]; then
  bin="$work/astrid"
  scripts/build.sh "$bin" >&2
fi
(cd bench && CGO_ENABLED=0 go build -o "$work/peers" ./peers)
"$work/peers" -astrid "$bin" "${args[@]}"
