#!/usr/bin/env bash
# Install Debian's Chromium for the browser tests if it is missing (no browser download).
set -euo pipefail
# fonts-noto-cjk: without a CJK font the Chinese pages render as boxes in screenshots.
if command -v chromium >/dev/null 2>&1 && dpkg -s fonts-noto-cjk >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" = 0 ]; then SUDO=""; elif command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
  echo "chromium is missing and I cannot install it (not root, no sudo): apt-get install chromium" >&2; exit 1; fi
echo "Installing Debian chromium for the end-to-end tests…"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium fonts-noto-cjk >/dev/null
command -v chromium
