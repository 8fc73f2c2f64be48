#!/usr/bin/env bash
# Tools the tests need beyond Go and npm: tmux, to drive astrid in a real
# terminal (the approval questions of `astrid -p`), the CNCF distribution
# registry (Debian's docker-registry; its end-to-end test fails without it under
# scripts/test.sh, which sets ASTRID_CI, and skips for a developer,
# and its service is not needed: the test starts it on loopback), and the
# headless browser the web view's test drives (install-browser.sh).
# Debian's packages; does nothing for what is already installed.
set -euo pipefail
"$(dirname "$0")/install-browser.sh"
missing=()
command -v tmux >/dev/null || missing+=(tmux)
command -v docker-registry >/dev/null || missing+=(docker-registry)
if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  sudo=(sudo)
fi
"${sudo[@]}" apt-get update
"${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
