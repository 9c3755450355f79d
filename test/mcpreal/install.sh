#!/usr/bin/env bash
# Installs the real MCP servers that test/mcpreal drives corvid against:
# @modelcontextprotocol/server-everything and @modelcontextprotocol/server-filesystem,
# pinned (with their whole tree, including the MCP TypeScript SDK) in package-lock.json,
# into test/mcpreal/node_modules. Needs Node >= 20 and npm. Without them installed,
# `go test ./test/mcpreal/` skips, saying so.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
npm ci --no-audit --no-fund --loglevel=error
for pkg in server-everything server-filesystem; do
  test -f "node_modules/@modelcontextprotocol/$pkg/dist/index.js" || { echo "install.sh: $pkg missing after npm ci" >&2; exit 1; }
done
echo "test/mcpreal: real MCP servers installed in $here/node_modules"
