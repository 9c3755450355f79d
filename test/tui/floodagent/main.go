// Command floodagent is a minimal ACP agent for the terminal UI's
// benchmarks (test/tui/bench_linux_test.go): each prompt is answered with
// agent_message_chunk notifications of one character at FLOOD_RATE per
// second (default 200,000) for FLOOD_SECONDS (default 5), sent in batches
// every millisecond; a prompt arriving while it floods is refused. When it
// ends a flood it writes the rate it reached (chunks per second, as the
// client took them: a client that reads slower holds the pipe up) to the
// file FLOOD_REPORT. With FLOOD_ANSWER set, a prompt is answered instead
// with a 20-line Markdown answer (a code block in it) that ends with
// end-of-turn-NNNNNN, the turn's number, and the number of turns
// answered is written to FLOOD_REPORT.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

var (
	mu  sync.Mutex
	out = bufio.NewWriterSize(os.Stdout, 1<<20)
)

func send(v any) {
	b, _ := json.Marshal(v)
	mu.Lock()
	out.Write(b)
	out.WriteByte('\n')
	out.Flush()
	mu.Unlock()
}

func answer(id json.RawMessage, result any) {
	send(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

func main() {
	rate, secs := envInt("FLOOD_RATE", 200000), envInt("FLOOD_SECONDS", 5)
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	var cancelled sync.Map
	turns := 0
	for in.Scan() {
		var m message
		if json.Unmarshal(in.Bytes(), &m) != nil {
			continue
		}
		switch m.Method {
		case "initialize":
			answer(m.ID, map[string]any{"protocolVersion": 1, "agentCapabilities": map[string]any{}, "authMethods": []any{}})
		case "session/new":
			answer(m.ID, map[string]any{"sessionId": "flood"})
		case "session/cancel":
			cancelled.Store("flood", true)
		case "session/prompt":
			if os.Getenv("FLOOD_ANSWER") != "" {
				turns++
				answerTurn(turns)
				answer(m.ID, map[string]any{"stopReason": "end_turn"})
				if f := os.Getenv("FLOOD_REPORT"); f != "" {
					_ = os.WriteFile(f+".tmp", []byte(strconv.Itoa(turns)), 0o644)
					_ = os.Rename(f+".tmp", f)
				}
				continue
			}
			cancelled.Delete("flood")
			go func(id json.RawMessage) {
				stop := flood(rate, secs, &cancelled)
				answer(id, map[string]any{"stopReason": stop})
			}(m.ID)
		default:
			if m.ID != nil {
				send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "Method not found"}})
			}
		}
	}
}

// flood sends one-character chunks at rate per second for secs seconds.
func flood(rate, secs int, cancelled *sync.Map) string {
	chunk := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"flood","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}}` + "\n")
	start := time.Now()
	sent := 0
	stop := "end_turn"
	for time.Since(start) < time.Duration(secs)*time.Second {
		if _, ok := cancelled.Load("flood"); ok {
			stop = "cancelled"
			break
		}
		due := int(time.Since(start).Seconds() * float64(rate))
		mu.Lock()
		for ; sent < due; sent++ {
			out.Write(chunk)
		}
		out.Flush()
		mu.Unlock()
		time.Sleep(time.Millisecond)
	}
	took := time.Since(start).Seconds()
	if f := os.Getenv("FLOOD_REPORT"); f != "" {
		_ = os.WriteFile(f, []byte(fmt.Sprintf("%d %.3f\n", sent, took)), 0o644)
	}
	return stop
}

// answerTurn streams a Markdown answer in chunks of about 40 bytes.
func answerTurn(n int) {
	var text string
	text += fmt.Sprintf("## Turn %d\n\nHere is **what** you asked, with `code` and a [link](https://example.com).\n\n", n)
	for i := 0; i < 6; i++ {
		text += fmt.Sprintf("- item %d of the list, with some *emphasis* in it\n", i)
	}
	text += "\n```go\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n```\n\n"
	text += fmt.Sprintf("end-of-turn-%06d\n", n)
	for len(text) > 0 {
		k := min(40, len(text))
		send(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{"sessionId": "flood",
			"update": map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": text[:k]}}}})
		text = text[k:]
	}
}
