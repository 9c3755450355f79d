// Command floor is the fastest ACP agent a Go program can be: it answers
// initialize and session/new from fixed text and exits at stdin EOF. It is
// bench/compare.sh's floor: corvid's start-up, memory and exit are quoted
// as ratios to it, measured in the same run. Build it static
// (CGO_ENABLED=0); it uses no JSON decoder on purpose.
package main

import (
	"bufio"
	"bytes"
	"os"
)

func main() {
	in := bufio.NewReaderSize(os.Stdin, 64<<10)
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return // stdin EOF: exit 0
		}
		_, rest, ok := bytes.Cut(line, []byte(`"id":`))
		if !ok {
			continue // a notification
		}
		id := rest[:bytes.IndexAny(rest, ",}")]
		result := `{}`
		switch {
		case bytes.Contains(line, []byte(`"method":"initialize"`)):
			result = `{"protocolVersion":1,"agentCapabilities":{},"authMethods":[],"agentInfo":{"name":"floor","version":"0"}}`
		case bytes.Contains(line, []byte(`"method":"session/new"`)):
			result = `{"sessionId":"floor-1"}`
		}
		os.Stdout.WriteString(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + result + "}\n")
	}
}
