#!/usr/bin/env bash
# Build corvid's npm packages: one per platform holding that platform's
# binary, and @corvid-agent/corvid, whose launcher (bin/corvid.js) runs the
# right one. The packages are written as tarballs (npm pack) into OUT.
#
#   npm/build.sh --version 1.2.3 --out OUT --dist dist/
#       takes the binaries from GoReleaser's archives in dist/
#   npm/build.sh --version 1.2.3 --out OUT --binary linux-x64=./corvid [...]
#       takes the named binaries (tests, local builds)
#
# Publishing is `npm publish OUT/<tarball>` for each platform tarball first,
# then the main one.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
version="" out="" dist=""
declare -a binaries=()
while [ $# -gt 0 ]; do
	case "$1" in
	--version) version=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--dist) dist=$2; shift 2 ;;
	--binary) binaries+=("$2"); shift 2 ;;
	*) echo "npm/build.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
if [ -z "$version" ] || [ -z "$out" ] || { [ -z "$dist" ] && [ ${#binaries[@]} -eq 0 ]; }; then
	echo "usage: npm/build.sh --version V --out DIR (--dist DIR | --binary PLATFORM=PATH ...)" >&2
	exit 2
fi
version=${version#v}
mkdir -p "$out"
out=$(cd "$out" && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

# GoReleaser's os_arch → npm's platform-arch.
npm_platform() {
	case "$1" in
	linux_amd64) echo linux-x64 ;;
	linux_arm64) echo linux-arm64 ;;
	darwin_amd64) echo darwin-x64 ;;
	darwin_arm64) echo darwin-arm64 ;;
	windows_amd64) echo win32-x64 ;;
	*) return 1 ;;
	esac
}

if [ -n "$dist" ]; then
	for a in "$dist"/corvid_*_*_*.tar.gz "$dist"/corvid_*_*_*.zip; do
		[ -e "$a" ] || continue
		base=$(basename "$a")
		base=${base%.tar.gz}
		base=${base%.zip}
		osarch=${base#corvid_*_}
		plat=$(npm_platform "$osarch") || continue
		x="$stage/extract-$plat"
		mkdir -p "$x"
		case "$a" in
		*.zip) unzip -q "$a" -d "$x" ;;
		*) tar -xzf "$a" -C "$x" ;;
		esac
		bin=$(find "$x" -maxdepth 2 -type f \( -name corvid -o -name corvid.exe \) | head -1)
		[ -n "$bin" ] || { echo "npm/build.sh: no corvid binary in $a" >&2; exit 1; }
		binaries+=("$plat=$bin")
	done
	[ ${#binaries[@]} -gt 0 ] || { echo "npm/build.sh: no archives in $dist" >&2; exit 1; }
fi

platforms=()
for spec in "${binaries[@]}"; do
	plat=${spec%%=*}
	bin=${spec#*=}
	os=${plat%-*}
	cpu=${plat#*-}
	dir="$stage/$plat"
	mkdir -p "$dir/bin"
	exe=corvid
	[ "$os" = win32 ] && exe=corvid.exe
	cp "$bin" "$dir/bin/$exe"
	chmod 0755 "$dir/bin/$exe"
	# The terminal UI and corvid-pg (corvid with the PostgreSQL store's
	# driver) ship beside corvid, which finds them there.
	for extra in corvid-tui corvid-pg; do
		if [ -f "$(dirname "$bin")/$extra${exe#corvid}" ]; then
			cp "$(dirname "$bin")/$extra${exe#corvid}" "$dir/bin/"
			chmod 0755 "$dir/bin/$extra${exe#corvid}"
		fi
	done
	cp "$root/LICENSE" "$dir/"
	node -e '
		const fs = require("fs");
		const [tmpl, dst, plat, os, cpu, version] = process.argv.slice(1);
		const p = JSON.parse(fs.readFileSync(tmpl, "utf8"));
		p.name = p.name.replace("PLATFORM", plat);
		p.description = p.description.replace("PLATFORM", plat);
		p.version = version;
		p.os = [os];
		p.cpu = [cpu];
		fs.writeFileSync(dst, JSON.stringify(p, null, 2) + "\n");
	' "$here/platform/package.json" "$dir/package.json" "$plat" "$os" "$cpu" "$version"
	(cd "$dir" && npm pack --silent --pack-destination "$out" >/dev/null)
	platforms+=("$plat")
done

main="$stage/corvid"
mkdir -p "$main/bin"
cp "$here/corvid/bin/corvid.js" "$main/bin/"
cp "$root/LICENSE" "$main/"
cat >"$main/README.md" <<'README'
# corvid

A coding agent for editors that speak the [Agent Client Protocol](https://agentclientprotocol.com).

    npx @corvid-agent/corvid acp

runs it; in Zed, JetBrains, Neovim or Emacs add an agent whose command is
`npx` with the arguments `["-y", "@corvid-agent/corvid", "acp"]`, or install it
globally (`npm i -g @corvid-agent/corvid`) and use the command `corvid` with
`["acp"]`. `corvid auth login` stores a provider key; `corvid --help` lists
the rest. Source and documentation: https://github.com/corvid-agent/corvid
README
node -e '
	const fs = require("fs");
	const [tmpl, dst, version, ...plats] = process.argv.slice(1);
	const p = JSON.parse(fs.readFileSync(tmpl, "utf8"));
	p.version = version;
	p.optionalDependencies = {};
	for (const plat of plats) p.optionalDependencies["@corvid-agent/corvid-" + plat] = version;
	fs.writeFileSync(dst, JSON.stringify(p, null, 2) + "\n");
' "$here/corvid/package.json" "$main/package.json" "$version" "${platforms[@]}"
(cd "$main" && npm pack --silent --pack-destination "$out" >/dev/null)
ls "$out"
