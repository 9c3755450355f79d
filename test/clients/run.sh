#!/usr/bin/env bash
# Drives the built corvid with third-party ACP clients from the npm registry:
#   1. node --test: the official TypeScript SDK (@agentclientprotocol/sdk, pinned in
#      package-lock.json) as the client: permission, proxied write, cancel, load,
#      form elicitation (ask_user);
#   2. acpx (pinned below) one-shot `exec` against corvid's scripted model.
# Needs only Go, Node >= 20 and npm; installs everything else itself.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
ACPX_VERSION=0.19.1

work="$(mktemp -d "${TMPDIR:-/tmp}/corvid-clients.XXXXXX")"
trap 'rm -rf "$work"' EXIT

echo "== build corvid"
(cd "$root" && go build -o "$work/corvid" ./cmd/corvid)
export CORVID_BIN="$work/corvid"

echo "== npm ci (test/clients)"
(cd "$here" && npm ci --no-audit --no-fund --loglevel=error)

echo "== node --test (official TypeScript SDK client)"
(cd "$here" && node --test --test-concurrency=1 --test-timeout=60000 corvid.test.mjs)

echo "== acpx@$ACPX_VERSION exec smoke"
answer="Hello from corvid's scripted model, through acpx."
cat >"$work/acpx-script.json" <<JSON
{"chunkSize": 7, "responses": [{"parts": [
  {"type": "thinking", "text": "A greeting; answer it."},
  {"type": "text", "text": "$answer"}]}]}
JSON
mkdir -p "$work/home" "$work/cwd"
# acpx keeps its state under HOME: give it (and corvid) a throwaway one, but keep
# npm's cache where it was so npx does not download acpx again each run.
npm_cache="$(npm config get cache)"
(
  cd "$work/cwd"
  HOME="$work/home" CORVID_HOME="$work/home/.corvid" CORVID_KEYRING=off \
    npm_config_cache="$npm_cache" npm_config_update_notifier=false \
    timeout 300 npx --yes "acpx@$ACPX_VERSION" \
      --agent "$CORVID_BIN acp -m script:$work/acpx-script.json" \
      --cwd "$work/cwd" --approve-all --format json --timeout 60 \
      exec "hello" >"$work/acpx.out" 2>"$work/acpx.err"
) || { echo "acpx failed:"; grep -v EBADENGINE "$work/acpx.err" | tail -40; exit 1; }
node "$here/check-acpx.mjs" "$work/acpx.out" "$answer" || { tail -40 "$work/acpx.err"; exit 1; }
echo "== test/clients: ok"
