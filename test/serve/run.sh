#!/usr/bin/env bash
# Drives the built `corvid serve` with the official ACP TypeScript SDK 2.4.0
# (pinned in package-lock.json): its experimental WebSocket and Streamable HTTP
# clients against the daemon, and its reference server (experimental/server +
# experimental/node) as the oracle for the status codes of malformed requests.
# Needs only Go, Node >= 20 and npm; installs everything else itself.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

work="$(mktemp -d "${TMPDIR:-/tmp}/corvid-serve.XXXXXX")"
trap 'rm -rf "$work"' EXIT

echo "== build corvid"
(cd "$root" && go build -o "$work/corvid" ./cmd/corvid)
export CORVID_BIN="$work/corvid"

echo "== npm ci (test/serve)"
(cd "$here" && npm ci --no-audit --no-fund --loglevel=error)

echo "== node --test (SDK ws-client, http-client, reference server)"
(cd "$here" && node --test --test-concurrency=1 --test-timeout=120000 sdk.test.mjs)
echo "== test/serve: ok"
