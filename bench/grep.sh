#!/usr/bin/env bash
# bench/grep.sh — time corvid's grep tool against ripgrep on the same
# generated 50k-file tree and print the ratio (ARCHITECTURE.md §7: ≤ 2×).
#
# Usage: bench/grep.sh [rounds]            (default 7 rounds per case)
#        bench/grep.sh modcache [rounds]   the Go module cache instead (issue 18: ≤ 1.1×)
#
# Both tools run interleaved, round by round, and the medians are compared,
# so that load from other processes hits both alike. The corvid side is
# BenchmarkGrep50k (internal/tool/grep_bench_test.go): the grep tool's Run,
# as the model calls it, in files mode; ripgrep runs with -l, its nearest
# equivalent (both honour .gitignore and skip binary files).
set -euo pipefail
cd "$(dirname "$0")/.."
modcache=""
if [ "${1:-}" = modcache ]; then
	modcache=1
	shift
fi
rounds=${1:-7}

if ! command -v rg >/dev/null 2>&1; then
	echo "installing ripgrep…" >&2
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	$sudo apt-get install -y ripgrep >/dev/null 2>&1 ||
		{ $sudo apt-get update >/dev/null && $sudo apt-get install -y ripgrep >/dev/null; }
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tree=$work/tree
go test -c -o "$work/tool.test" ./internal/tool
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

if [ -n "$modcache" ]; then
	# The module cache: real code in many small files, .gitignore files,
	# zip archives. Each round runs rg and one search of
	# BenchmarkGrepModCache as whole processes, alternately, and takes
	# their CPU time (user+sys) and wall time from bash's time; rg runs
	# with the options that give corvid's rules (the same as
	# TestGrepMatchesRipgrepOnModuleCache).
	GOMODCACHE=$(go env GOMODCACHE)
	export GOMODCACHE
	TIMEFORMAT='%U %S %R'
	rgargs=(--files-with-matches --hidden --no-require-git --no-ignore-global --no-ignore-dot
		--no-ignore-parent --no-messages)
	printf '%-10s %8s %8s %6s %8s %8s %6s\n' case corvid_s rg_s cpu× corvid_s rg_s wall×
	for case in literal ignorecase regexp rare; do
		flags=()
		case $case in
		literal) pattern='func NewClient\(' ;;
		ignorecase) pattern='context\.withcancel' flags=(--ignore-case) ;;
		regexp) pattern='func \(\w+ \*\w+\) Close\(\) error' ;;
		rare) pattern='corvidNeedleThatIsNowhere' ;;
		esac
		: >"$work/rg.t"
		: >"$work/go.t"
		for _ in $(seq "$rounds"); do
			{ time (cd "$GOMODCACHE" && rg "${rgargs[@]}" "${flags[@]}" -- "$pattern" . >/dev/null || true); } 2>>"$work/rg.t"
			{ time "$work/tool.test" -test.run '^$' -test.bench "BenchmarkGrepModCache/$case\$" -test.benchtime 1x >/dev/null; } 2>>"$work/go.t"
		done
		gc=$(awk '{print $1+$2}' "$work/go.t" | median)
		rc=$(awk '{print $1+$2}' "$work/rg.t" | median)
		gw=$(awk '{print $3}' "$work/go.t" | median)
		rw=$(awk '{print $3}' "$work/rg.t" | median)
		awk -v c="$case" -v gc="$gc" -v rc="$rc" -v gw="$gw" -v rw="$rw" \
			'BEGIN {printf "%-10s %8.2f %8.2f %5.2fx %8.2f %8.2f %5.2fx\n", c, gc, rc, gc/rc, gw, rw, gw/rw}'
	done
	echo "CPU and wall seconds, medians of $rounds interleaved rounds; load average: $(cut -d' ' -f1-3 /proc/loadavg), cores: $(nproc)"
	exit 0
fi
export CORVID_GREP_BENCH_DIR=$tree
echo "generating 50k files in $tree…"
"$work/tool.test" -test.run '^$' -test.bench 'BenchmarkGrep50k/literal' -test.benchtime 1x >/dev/null

printf '%-10s %10s %10s %7s  %s\n' case corvid_ms rg_ms ratio pattern
for case in literal ignorecase regexp; do
	flags=-l
	case $case in
	literal) pattern='corvidNeedle' ;;
	ignorecase) pattern='corvidneedle' flags=-il ;;
	regexp) pattern='func Handle\w+Request\(' ;;
	esac
	rg_n=$(cd "$tree" && rg $flags "$pattern" . | wc -l)
	: >"$work/rg.ms"
	: >"$work/go.ms"
	for _ in $(seq "$rounds"); do
		for _ in 1 2 3; do
			start=$(date +%s%N)
			(cd "$tree" && rg $flags "$pattern" . >/dev/null)
			end=$(date +%s%N)
			echo $(((end - start) / 1000)) | awk '{printf "%.1f\n", $1/1000}' >>"$work/rg.ms"
		done
		"$work/tool.test" -test.run '^$' -test.bench "BenchmarkGrep50k/$case\$" -test.benchtime 3x |
			awk '/ns\/op/ {printf "%.1f\n", $3/1e6; print $5 >"'"$work/go.n"'"}' >>"$work/go.ms"
	done
	go_ms=$(median <"$work/go.ms")
	rg_ms=$(median <"$work/rg.ms")
	ratio=$(awk -v g="$go_ms" -v r="$rg_ms" 'BEGIN {printf "%.2f", g/r}')
	go_n=$(cat "$work/go.n")
	printf '%-10s %10s %10s %6sx  %s (files: corvid %s, rg %d)\n' "$case" "$go_ms" "$rg_ms" "$ratio" "$pattern" "$go_n" "$rg_n"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), cores: $(nproc)"
