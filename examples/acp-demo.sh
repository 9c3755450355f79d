#!/usr/bin/env bash
# Drive `corvid acp` by hand, as an editor would: initialize, session/new,
# one prompt; every frame corvid writes is printed as it arrives.
#   examples/acp-demo.sh [corvid binary] [script file] [prompt]
# Needs only bash and the binary (go build -o corvid ./cmd/corvid).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-./corvid}
script=${2:-$here/hello.json}
prompt=${3:-Hello, corvid!}

coproc AGENT { exec "$bin" acp -m "script:$script"; }
send() { printf '%s\n' "$1" >&"${AGENT[1]}"; echo ">> $1"; }
# read frames until the response with "id":$1 arrives; print each. A
# permission request from corvid is answered "allow once", as a user would.
await() {
  local line rid
  while IFS= read -r line <&"${AGENT[0]}"; do
    echo "<< $line"
    case $line in
      *'"method":"session/request_permission"'*)
        rid=$(sed -E 's/^\{"jsonrpc":"2.0","id":([0-9]+),.*/\1/' <<<"$line")
        send "{\"jsonrpc\":\"2.0\",\"id\":$rid,\"result\":{\"outcome\":{\"outcome\":\"selected\",\"optionId\":\"allow_once\"}}}" ;;
      *"\"id\":$1,"*'"result"'*|*"\"id\":$1,"*'"error"'*) REPLY_LINE=$line; return 0 ;;
    esac
  done
  return 1
}

send '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false},"clientInfo":{"name":"acp-demo","version":"1"}}}'
await 1
send "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/new\",\"params\":{\"cwd\":\"$PWD\",\"mcpServers\":[]}}"
await 2
sid=$(sed -E 's/.*"sessionId":"([^"]+)".*/\1/' <<<"$REPLY_LINE")
send "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"session/prompt\",\"params\":{\"sessionId\":\"$sid\",\"prompt\":[{\"type\":\"text\",\"text\":\"$prompt\"}]}}"
await 3
exec {AGENT[1]}>&-
wait "$AGENT_PID"
