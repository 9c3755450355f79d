#!/usr/bin/env bash
# Drives the dashboard of the built `corvid serve` in Debian's Chromium with
# puppeteer-core (pinned in package-lock.json). Needs Go, Node >= 18, npm and
# /usr/bin/chromium (`apt-get install -y chromium`; .ci/run installs it).
# DASHBOARD_SCREENSHOTS=docs/img bash test/dashboard/run.sh regenerates the
# screenshots of docs/dashboard.md.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

work="$(mktemp -d "${TMPDIR:-/tmp}/corvid-dashboard.XXXXXX")"
trap 'rm -rf "$work"' EXIT

echo "== build corvid"
(cd "$root" && go build -o "$work/corvid" ./cmd/corvid)
export CORVID_BIN="$work/corvid"
if [ -n "${DASHBOARD_SCREENSHOTS:-}" ]; then
	DASHBOARD_SCREENSHOTS="$(cd "$root" && mkdir -p "$DASHBOARD_SCREENSHOTS" && cd "$DASHBOARD_SCREENSHOTS" && pwd)"
	export DASHBOARD_SCREENSHOTS
fi

echo "== npm ci (test/dashboard)"
(cd "$here" && npm ci --no-audit --no-fund --loglevel=error)

echo "== node --test (Chromium, puppeteer-core)"
(cd "$here" && node --test --test-concurrency=1 --test-timeout=120000 dashboard.test.mjs live.test.mjs stored.test.mjs)
echo "== test/dashboard: ok"
