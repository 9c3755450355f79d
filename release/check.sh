#!/usr/bin/env bash
# Release check (CI; works offline once Go modules are in the module cache):
# builds a GoReleaser snapshot into dist/ and checks what a release would ship.
#
#   1. goreleaser check, then goreleaser release --snapshot --clean --skip=publish
#   2. every expected archive exists, holds corvid + corvid-pg + corvid-tui + LICENSE + README.md, and is
#      listed in checksums.txt with its real sha256
#   3. the linux/amd64 binary taken from its archive prints the snapshot version
#   4. npm/build.sh --dist dist makes the npm tarballs (main + one per platform)
#   5. release/registry.js generates the ACP registry entry (dist/registry/corvid/)
#      and validates it and release/icon.svg; its selftest proves the validator rejects
#      broken entries
#
# GORELEASER overrides the goreleaser binary (default: goreleaser on PATH, then
# $(go env GOPATH)/bin/goreleaser).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)

gr=${GORELEASER:-}
if [ -z "$gr" ]; then
	if command -v goreleaser >/dev/null; then gr=goreleaser
	else gr="$(go env GOPATH)/bin/goreleaser"; fi
fi
[ -x "$(command -v "$gr")" ] || { echo "release/check.sh: goreleaser not found (go install github.com/goreleaser/goreleaser/v2@v2.15.1)" >&2; exit 1; }
fail() { echo "release/check.sh: FAIL: $*" >&2; exit 1; }

# The platforms a release ships. windows_amd64 joins once .goreleaser.yaml builds it.
expected=(linux_amd64 linux_arm64 darwin_amd64 darwin_arm64)
if grep -qE '^\s+- windows\s*$' .goreleaser.yaml; then expected+=(windows_amd64); fi

# GoReleaser reads the remote's URL and, when there is none (a bare CI checkout, an
# offline clone), drops the commit and date from the snapshot. Name the project's URL
# for this run only (git reads it from the environment; nothing is fetched).
if [ -z "$(git remote)" ]; then
	export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=remote.origin.url GIT_CONFIG_VALUE_0=https://github.com/corvid-agent/corvid.git
fi

echo "== goreleaser $("$gr" --version 2>/dev/null | awk '/GitVersion/{print $2}')"
"$gr" check
"$gr" release --snapshot --clean --skip=publish >dist.log 2>&1 || { cat dist.log >&2; rm -f dist.log; fail "goreleaser release --snapshot"; }
mv dist.log dist/goreleaser.log

version=$(node -p 'require("./dist/metadata.json").version')
[ -n "$version" ] || fail "no version in dist/metadata.json"
echo "== snapshot version $version"

echo "== archives and checksums"
[ -s dist/checksums.txt ] || fail "dist/checksums.txt missing"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for osarch in "${expected[@]}"; do
	ext=tar.gz exe=corvid pg=corvid-pg tui=corvid-tui
	case "$osarch" in windows_*) ext=zip exe=corvid.exe pg=corvid-pg.exe tui=corvid-tui.exe ;; esac
	name="corvid_${version}_${osarch}.${ext}"
	[ -f "dist/$name" ] || fail "missing archive dist/$name"
	want=$(awk -v n="$name" '$2 == n {print $1}' dist/checksums.txt)
	[ -n "$want" ] || fail "$name is not in checksums.txt"
	got=$(sha256sum "dist/$name" | cut -d' ' -f1)
	[ "$want" = "$got" ] || fail "$name: checksums.txt says $want, the file is $got"
	case "$ext" in
	zip) contents=$(unzip -Z1 "dist/$name" | sort) ;;
	*) contents=$(tar -tzf "dist/$name" | sort) ;;
	esac
	[ "$contents" = "$(printf '%s\n' LICENSE README.md "$exe" "$pg" "$tui" | sort)" ] ||
		fail "$name holds: $(echo $contents) (want $exe $pg $tui LICENSE README.md)"
	echo "ok  $name  $got"
done
listed=$(grep -c . dist/checksums.txt)
[ "$listed" -eq ${#expected[@]} ] || fail "checksums.txt lists $listed files, expected ${#expected[@]}"

echo "== the linux/amd64 binary from its archive"
tar -xzf "dist/corvid_${version}_linux_amd64.tar.gz" -C "$work"
if command -v file >/dev/null; then
	file "$work/corvid" | grep -q 'statically linked' || fail "not statically linked: $(file "$work/corvid")"
fi
line=$("$work/corvid" version)
echo "$line"
case "$line" in
"corvid $version (commit "*", built "*")") ;;
*) fail "corvid version printed: $line (want corvid $version (commit …, built …))" ;;
esac
stamped=${line#*(commit }
stamped=${stamped%%,*}
case "$(git rev-parse HEAD)" in "$stamped"*) ;; *) fail "commit not stamped from HEAD: $line" ;; esac
case "$line" in *"built at an unknown time"* | *"committed "*) fail "build date not stamped: $line" ;; esac
[ "$("$work/corvid" --version)" = "$line" ] || fail "--version differs from version"
# corvid-pg is the same program with the PostgreSQL driver: the same stamp, and
# bigger by that driver; the default corvid must not carry it (docs/store.md).
[ "$("$work/corvid-pg" version)" = "$line" ] || fail "corvid-pg version differs: $("$work/corvid-pg" version)"
if go version -m "$work/corvid" | grep -q 'github.com/jackc/pgx'; then fail "corvid links pgx; only corvid-pg may"; fi
go version -m "$work/corvid-pg" | grep -q 'github.com/jackc/pgx' || fail "corvid-pg does not link pgx"
echo "sizes: corvid $(wc -c <"$work/corvid") bytes, corvid-pg $(wc -c <"$work/corvid-pg") bytes, corvid-tui $(wc -c <"$work/corvid-tui") bytes"

echo "== npm packages from the archives"
bash npm/build.sh --version "$version" --out dist/npm --dist dist >/dev/null
npm_plat() { case "$1" in
	linux_amd64) echo linux-x64 ;; linux_arm64) echo linux-arm64 ;;
	darwin_amd64) echo darwin-x64 ;; darwin_arm64) echo darwin-arm64 ;;
	windows_amd64) echo win32-x64 ;; esac; }
tgz=("corvid-agent-corvid-$version.tgz")
for osarch in "${expected[@]}"; do tgz+=("corvid-agent-corvid-$(npm_plat "$osarch")-$version.tgz"); done
for t in "${tgz[@]}"; do [ -s "dist/npm/$t" ] || fail "missing npm tarball dist/npm/$t"; echo "ok  dist/npm/$t"; done
# The main package pins exactly this version of every platform package.
tar -xzf "dist/npm/corvid-agent-corvid-$version.tgz" -C "$work" package/package.json
node -e '
	const p = require(process.argv[1]), v = process.argv[2], want = process.argv.slice(3);
	const got = Object.keys(p.optionalDependencies || {}).sort();
	if (p.version !== v) throw new Error("version " + p.version);
	if (JSON.stringify(got) !== JSON.stringify(want.sort())) throw new Error("optionalDependencies " + got);
	for (const k of got) if (p.optionalDependencies[k] !== v) throw new Error(k + "@" + p.optionalDependencies[k]);
' "$work/package/package.json" "$version" $(for o in "${expected[@]}"; do echo "@corvid-agent/corvid-$(npm_plat "$o")"; done)

echo "== ACP registry entry"
node release/registry.js generate --version "$version" --checksums dist/checksums.txt --out dist/registry/corvid
node release/registry.js validate dist/registry/corvid/agent.json --icon dist/registry/corvid/icon.svg --checksums dist/checksums.txt
node release/registry.js selftest dist/registry/corvid/agent.json --icon release/icon.svg
n=$(node -p 'Object.keys(require("./dist/registry/corvid/agent.json").distribution.binary).length')
[ "$n" -eq ${#expected[@]} ] || fail "agent.json has $n binary targets, expected ${#expected[@]}"

echo "== release check passed in $(($(date +%s) - start))s"
