#!/usr/bin/env bash
# Install Debian's redis-server for the class-session tests if it is missing. The tests start their
# own server (Unix socket, no persistence) and stop it; nothing is enabled as a service here.
set -euo pipefail
if command -v redis-server >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" = 0 ]; then SUDO=""; elif command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
  echo "redis-server is missing and I cannot install it (not root, no sudo): apt-get install redis-server" >&2; exit 1; fi
echo "Installing Debian redis-server for the class-session tests…"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends redis-server >/dev/null
command -v redis-server
