#!/usr/bin/env bash
# The partial plotly.js bundles under assets/vendor/plotly/ (what the browser loads instead of the
# plotly package's full 4.8 MB bundle; ui/kit/chart.py). Needs node and npm (only here: the app and
# its tests do not): installs the pinned plotly.js and esbuild from assets/vendor/plotly/package-lock.json
# (npm ci: exact versions, integrity hashes) into a temporary folder and builds every bundle of
# manifest.json.
#   scripts/vendor_plotly.sh           build and check each file's sha256 against the manifest
#   scripts/vendor_plotly.sh --write   build, write the files, record their sha256 in the manifest
# After a plotly (Python) upgrade: set "plotly.js" in manifest.json and package.json to the version
# the new package ships, `npm install --package-lock-only` there, then --write.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
V="$ROOT/assets/vendor/plotly"
command -v npm >/dev/null || { echo "vendor_plotly.sh needs node and npm (Debian: apt-get install nodejs npm)" >&2; exit 2; }
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
cp "$V/package.json" "$V/package-lock.json" "$TMP/"
(cd "$TMP" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
# esbuild's platform binary comes from an optional dependency; --ignore-scripts skips its
# post-install check only
node "$V/build.js" "$TMP/node_modules" "$@"
if [ "${1:-}" = "--write" ]; then
  node -e "for (const [n, b] of Object.entries(require('$V/manifest.json').bundles)) console.log(n, b.file, b.sha256)"
fi
