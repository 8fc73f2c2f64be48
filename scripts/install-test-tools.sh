#!/usr/bin/env bash
# Tools the tests need beyond Go and npm: tmux, to drive astrid in a real
# terminal (the approval questions of `astrid -p`). Debian's package; does
# nothing when it is already installed.
set -euo pipefail
if command -v tmux >/dev/null; then
  exit 0
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  sudo=(sudo)
fi
"${sudo[@]}" apt-get update
"${sudo[@]}" apt-get install -y --no-install-recommends tmux
