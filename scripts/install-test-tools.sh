#!/usr/bin/env bash
# Tools the tests need beyond Go and npm: tmux, to drive astrid in a real
# terminal (the approval questions of `astrid -p`), and the headless browser
# the web view's test drives (install-browser.sh). Debian's packages; does
# nothing for what is already installed.
set -euo pipefail
"$(dirname "$0")/install-browser.sh"
if command -v tmux >/dev/null; then
  exit 0
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  sudo=(sudo)
fi
"${sudo[@]}" apt-get update
"${sudo[@]}" apt-get install -y --no-install-recommends tmux
