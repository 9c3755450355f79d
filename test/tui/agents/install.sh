#!/usr/bin/env bash
# Installs the other ACP agents that `go test ./test/tui/ -run Agent` drives
# `corvid tui -- CMD` against: the official ACP TypeScript SDK (its agent side,
# for sdk-agent.mjs) and Zed's codex-acp (its prebuilt binary comes inside the
# npm package), pinned in package-lock.json, into test/tui/agents/node_modules.
# Needs Node >= 20 and npm. Without them, those tests skip, saying so.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
npm ci --no-audit --no-fund --loglevel=error
for f in node_modules/@agentclientprotocol/sdk/package.json node_modules/.bin/codex-acp; do
  test -e "$f" || { echo "install.sh: $f missing after npm ci" >&2; exit 1; }
done
echo "test/tui/agents: the SDK and codex-acp installed in $here/node_modules"
