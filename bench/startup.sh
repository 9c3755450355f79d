#!/usr/bin/env bash
# Time corvid's start-up as an editor sees it: spawn `corvid acp`, send initialize,
# read the response. Budget (ARCHITECTURE.md §7): median ≤ 10 ms on 2 cores, ceiling 15 ms.
#
#   bench/startup.sh            # builds ./cmd/corvid, 100 runs
#   RUNS=300 CORVID_BIN=/path/to/corvid bench/startup.sh
#
# Two measurements:
#   1. a bash loop: spawn → initialize response line, per run (includes bash's fork of
#      the coprocess, well under 1 ms); prints the median, p90 and max;
#   2. hyperfine, if it is installed or can be installed with apt-get (set
#      CORVID_BENCH_INSTALL=0 to forbid): `corvid acp < initialize-line`, i.e.
#      spawn → initialize → stdin EOF → exit, with hyperfine's shell overhead subtracted.
# Every run gets an isolated HOME, CORVID_HOME and XDG dirs, and no provider keys.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${RUNS:-100}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

bin=${CORVID_BIN:-}
if [[ -z $bin ]]; then
  bin=$tmp/corvid
  (cd "$root" && go build -o "$bin" ./cmd/corvid)
fi

# Isolate: nothing from the real home, config, store, keyring or providers.
while read -r var; do unset "$var"; done < <(compgen -e | grep -E '^(XDG_|CORVID_)|_API_KEY$|_BASE_URL$' || true)
export HOME=$tmp/home CORVID_HOME=$tmp/home/.corvid CORVID_KEYRING=off
export XDG_CONFIG_HOME=$HOME/.config XDG_DATA_HOME=$HOME/.local/share XDG_STATE_HOME=$HOME/.local/state
export XDG_CACHE_HOME=$HOME/.cache XDG_RUNTIME_DIR=$HOME/run
mkdir -p "$HOME"
cd "$tmp"

script=$tmp/script.json
printf '%s\n' '{"responses":[{"parts":[{"type":"text","text":"hi"}]}]}' > "$script"
init=$tmp/initialize.jsonl
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}' > "$init"
initialize=$(<"$init")

now_us() { local t=${EPOCHREALTIME//[.,]/}; echo "$t"; }

# one run: microseconds from spawn to the initialize response line
spawn_initialize() {
  local t0 t1 line
  t0=$(now_us)
  coproc CORVID { exec "$bin" acp -m "script:$script" 2>/dev/null; }
  printf '%s\n' "$initialize" >&"${CORVID[1]}"
  IFS= read -r line <&"${CORVID[0]}"
  t1=$(now_us)
  exec {CORVID[1]}>&-
  wait "$CORVID_PID"
  case $line in *'"id":1,"result"'*) ;; *) echo "bad initialize response: $line" >&2; exit 1 ;; esac
  echo $((t1 - t0))
}

spawn_initialize >/dev/null # warm the page cache and create the store
samples=$tmp/samples
for ((i = 0; i < runs; i++)); do spawn_initialize; done > "$samples"
sort -n "$samples" | awk -v runs="$runs" '
  { v[NR] = $1 }
  END {
    med = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    p90 = v[int(NR * 0.9) > 0 ? int(NR * 0.9) : 1]
    printf "spawn → initialize response (%d runs): median %.2f ms, p90 %.2f ms, max %.2f ms (budget: median ≤ 10 ms, ceiling 15 ms)\n", runs, med / 1000, p90 / 1000, v[NR] / 1000
  }'

if ! command -v hyperfine >/dev/null && [[ ${CORVID_BENCH_INSTALL:-1} != 0 ]] && command -v apt-get >/dev/null; then
  sudo=; [[ $(id -u) == 0 ]] || sudo=sudo
  $sudo apt-get install -y -qq hyperfine >/dev/null 2>&1 || true
fi
if command -v hyperfine >/dev/null; then
  hyperfine --style basic --warmup 5 --runs "$runs" --export-json "$tmp/hyperfine.json" \
    --command-name 'corvid acp < initialize (spawn → initialize → EOF exit)' \
    "'$bin' acp -m 'script:$script' < '$init' > /dev/null 2>&1"
  if command -v jq >/dev/null; then
    jq -r '.results[0] | "hyperfine spawn → initialize → exit (\(.times | length) runs): median \(.median * 1000 * 100 | round / 100) ms"' "$tmp/hyperfine.json"
  fi
else
  echo "hyperfine not available; only the loop above was measured"
fi
