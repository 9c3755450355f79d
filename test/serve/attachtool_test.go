package serve

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A client that attaches while the session's turn runs a tool call is
// replayed that call as running, not as interrupted (nothing stopped it),
// and then sees it complete live.
func TestAttachDuringAToolCallReplaysItRunning(t *testing.T) {
	dir := t.TempDir()
	script := writeScript(t, dir, map[string]any{"responses": []any{
		map[string]any{"parts": []any{map[string]any{"type": "tool_call", "name": "shell",
			"input": map[string]any{"command": "sleep 3 && echo slept"}}}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "finished"}}},
	}})
	d := startDaemon(t, 1, "-m", "script:"+script, "--yolo", "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	a := dial(t, d.sock)
	initialize(a)
	sid := newSession(a, dir)
	a.send("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("run it")})
	if !a.waitNote("session/update", func(p map[string]any) bool {
		u, _ := p["update"].(map[string]any)
		return u["sessionUpdate"] == "tool_call"
	}) {
		t.Fatal("the tool call never started")
	}
	time.Sleep(200 * time.Millisecond)
	b := dial(t, d.sock)
	initialize(b)
	b.call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
	b.mu.Lock()
	replay := append([]map[string]any(nil), b.note...)
	b.mu.Unlock()
	sawCall := false
	for _, n := range replay {
		p, _ := n["params"].(map[string]any)
		u, _ := p["update"].(map[string]any)
		if u["sessionUpdate"] == "tool_call" {
			sawCall = true
		}
		if u["status"] == "completed" {
			t.Fatalf("the load came after the call ended; lengthen the sleep")
		}
		if u["status"] == "failed" || strings.Contains(strings.ToLower(toJSON(u)), "interrupted") {
			t.Fatalf("the replay shows the running call as interrupted: %v", u)
		}
	}
	if !sawCall {
		t.Fatal("the replay lacks the tool call")
	}
	if !b.waitNote("session/update", func(p map[string]any) bool {
		u, _ := p["update"].(map[string]any)
		return u["status"] == "completed"
	}) {
		t.Fatal("the attached client never saw the call complete")
	}
	b.waitText(sid, "finished")
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
