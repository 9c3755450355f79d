#!/usr/bin/env bash
# Installs xterm.js's engine (@xterm/headless, pinned in package-lock.json)
# into test/tui/xterm/node_modules for `go test ./test/tui/ -run XTerm`, which
# runs the TUI with xterm.js as its terminal (xterm-host.cjs). Needs Node >= 20
# and npm; without them those tests skip, saying so. Quick when already there.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
want=$(node -p 'require("./package-lock.json").packages["node_modules/@xterm/headless"].version')
have=$(node -p 'try { require("./node_modules/@xterm/headless/package.json").version } catch { "" }')
if [ "$have" != "$want" ]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
test -e node_modules/@xterm/headless/package.json || { echo "install.sh: @xterm/headless missing after npm ci" >&2; exit 1; }
echo "test/tui/xterm: @xterm/headless $want installed in $here/node_modules"
