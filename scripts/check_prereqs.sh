#!/usr/bin/env bash
# What `make run` (and, with --test, `make test`) needs before it can install anything itself; says in
# words what is missing and how to install it, and exits 1 if something is.
#   scripts/check_prereqs.sh [--test] [PYTHON]
# The app runs on Linux (x86_64 or aarch64; tested on Debian 12). macOS and Windows are not supported:
# the server relies on Linux's /proc and `ip`, Numba's OpenMP layer and Debian packages for the tests
# (on Windows, use WSL 2 with Debian or Ubuntu, or the Docker image).
set -uo pipefail
TEST=0
if [ "${1:-}" = --test ]; then TEST=1; shift; fi
PY="${1:-python3}"
missing=()
add() { missing+=("$1"); }

if [ "$(uname -s)" != Linux ]; then
  echo "This app runs on Linux only (found $(uname -s)). On macOS or Windows use the Docker image" >&2
  echo "(docker build -t tokens-on-the-sphere . && docker run -p 8501:8501 tokens-on-the-sphere) or WSL 2." >&2
  exit 1
fi
if ! command -v "$PY" >/dev/null 2>&1; then
  add "Python 3.11 ('$PY' not found): apt-get install python3.11 python3.11-venv (or set PYTHON=/path/to/python3.11)"
elif ! "$PY" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
  v="$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)"
  add "Python 3.11 ('$PY' is ${v:-not runnable}): install 3.11 and run make PYTHON=python3.11 …"
elif ! "$PY" -c 'import venv, ensurepip' 2>/dev/null && ! "$PY" -m pip --version >/dev/null 2>&1; then
  add "Python's venv and pip ('$PY' has neither ensurepip nor pip): apt-get install python3.11-venv"
fi
# Numba's thread-safe layer is OpenMP (libgomp); without it the server refuses to start.
# PREREQ_ROOT: a folder to look in instead of / (the tests use it)
R="${PREREQ_ROOT:-}"
gomp=0
if [ -z "$R" ] && ldconfig -p 2>/dev/null | grep -q 'libgomp\.so\.1'; then gomp=1; fi
for f in "$R"/usr/lib/*/libgomp.so.1 "$R"/usr/lib/libgomp.so.1 "$R"/usr/lib64/libgomp.so.1; do
  if [ -e "$f" ]; then gomp=1; fi
done
if [ "$gomp" = 0 ]; then
  add "the OpenMP runtime libgomp1 (Numba's thread-safe layer): apt-get install libgomp1"
fi
if [ "$TEST" = 1 ]; then
  if ! command -v chromium >/dev/null 2>&1 || ! command -v redis-server >/dev/null 2>&1; then
    if ! command -v apt-get >/dev/null 2>&1; then
      add "chromium and redis-server for the browser and class tests (no apt-get here to install them: install them with your package manager)"
    elif [ "$(id -u)" != 0 ] && ! command -v sudo >/dev/null 2>&1; then
      add "root or sudo, so that make test can apt-get install chromium fonts-noto-cjk redis-server (or install them first)"
    fi
  fi
fi
if [ "${#missing[@]}" -gt 0 ]; then
  echo "Before make can set up the app, this machine needs:" >&2
  for m in "${missing[@]}"; do echo "  - $m" >&2; done
  exit 1
fi
