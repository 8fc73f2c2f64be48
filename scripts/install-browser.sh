#!/usr/bin/env bash
# The headless browser the web view's test drives (internal/webview's
# browser test, through chromedp): Debian's chromium-headless-shell, from
# the Debian mirrors CI can reach. Does nothing when it is already
# installed. Run as root, or with sudo available.
set -euo pipefail
if command -v chromium-headless-shell >/dev/null || [ -x /usr/lib/chromium/chromium-headless-shell ]; then
  exit 0
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update
"${sudo[@]}" apt-get install -y --no-install-recommends chromium-headless-shell
