package bench

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// BenchmarkCancelWithSubagents measures session/cancel → the prompt's
// response while two sub-agents stream (ARCHITECTURE.md §7: cancel ≤ 100 ms):
// the cancel has to reach both children through their parent's turn.
// Reported as ms/cancel; the loop's other work (the prompt, waiting for both
// children to stream) is not timed.
func BenchmarkCancelWithSubagents(b *testing.B) {
	bin := testkit.BuildCorvid(b)
	home, workspace := b.TempDir(), b.TempDir()
	slow := "script:" + testkit.WriteScript(b, map[string]any{"responses": []any{map[string]any{"chunkSize": 1, "delayMs": 5,
		"parts": []any{map[string]any{"type": "text", "text": "x", "repeat": 1000000}}}}})
	task := func(id, name string) map[string]any {
		return map[string]any{"type": "tool_call", "id": id, "name": "task",
			"input": map[string]any{"description": "stream", "prompt": "stream", "name": name, "model": slow}}
	}
	parent := testkit.WriteScript(b, map[string]any{"onExhausted": "repeat-last", "responses": []any{
		map[string]any{"parts": []any{task("t1", "a"), task("t2", "b")}}}})
	a := startAgent(b, bin, home, workspace, "acp", "-m", "script:"+parent)
	res, _ := a.call("session/new", map[string]any{"cwd": workspace, "mcpServers": []any{}})
	var sess struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(res, &sess); err != nil || sess.SessionID == "" {
		b.Fatalf("session/new: %s %v", res, err)
	}
	var total time.Duration
	b.ResetTimer()
	for range b.N {
		id := a.send("session/prompt", map[string]any{"sessionId": sess.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "go"}}})
		seen := map[string]bool{}
		for !seen[`memberEvent":"a"`] || !seen[`memberEvent":"b"`] {
			l := a.line()
			for _, tag := range []string{`memberEvent":"a"`, `memberEvent":"b"`} {
				if bytes.Contains(l, []byte(`"agent_message_chunk"`)) && bytes.Contains(l, []byte(tag)) {
					seen[tag] = true
				}
			}
		}
		start := time.Now()
		a.send("session/cancel", map[string]any{"sessionId": sess.SessionID})
		for {
			l := a.line()
			if bytes.Contains(l, []byte(`"id":`+itoa(id)+`,"result"`)) {
				if !bytes.Contains(l, []byte(`"cancelled"`)) {
					b.Fatalf("prompt response %s, want cancelled", l)
				}
				break
			}
		}
		total += time.Since(start)
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/cancel")
}

// send writes a request (a notification when method is session/cancel)
// and returns its id.
func (a *agent) send(method string, params any) int {
	a.tb.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
	id := 0
	if method != "session/cancel" {
		a.nextID++
		id = a.nextID
		msg["id"] = id
	}
	line, err := json.Marshal(msg)
	if err != nil {
		a.tb.Fatal(err)
	}
	if _, err := a.stdin.Write(append(line, '\n')); err != nil {
		a.tb.Fatalf("%s: write: %v", method, err)
	}
	return id
}

// line reads one line of the agent's output.
func (a *agent) line() []byte {
	a.tb.Helper()
	l, err := a.out.ReadBytes('\n')
	if err != nil {
		a.tb.Fatalf("read: %v", err)
	}
	return l
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
