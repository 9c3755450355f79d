package serve

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// callErr sends a request and returns its error object (nil on success).
func (c *client) callErr(method string, params any) map[string]any {
	c.t.Helper()
	c.mu.Lock()
	c.next++
	id := c.next
	ch := make(chan map[string]any, 1)
	c.wait[id] = ch
	c.mu.Unlock()
	_ = c.enc.Encode(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	select {
	case m := <-ch:
		e, _ := m["error"].(map[string]any)
		return e
	case <-time.After(30 * time.Second):
		c.t.Fatalf("%s: no answer", method)
	}
	return nil
}

func TestPromptToASessionRunningOnAnotherConnectionIsRefused(t *testing.T) {
	dir := t.TempDir()
	script := writeScript(t, dir, slowScript())
	d := startDaemon(t, 1, "-m", "script:"+script, "--yolo", "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	a := dial(t, d.sock)
	initialize(a)
	sid := newSession(a, dir)
	a.send("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("go")})
	a.waitText(sid, "part-02")
	b := dial(t, d.sock)
	initialize(b)
	b.call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
	e := b.callErr("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("again")})
	out, _ := json.Marshal(e)
	t.Logf("error: %s", out)
	if e == nil || e["code"] != float64(-32602) || !strings.Contains(e["message"].(string), "already running") {
		t.Fatalf("second prompt: %s; want -32602", out)
	}
	data, _ := e["data"].(map[string]any)
	if data["details"] == nil {
		t.Fatalf("second prompt: %s; want error.data.details", out)
	}
}

// runningOnA starts the slow turn on a first connection and returns it,
// the session id, and where its prompt's answer arrives.
func runningOnA(t *testing.T) (d *daemon, dir, sid string, a *client, answer chan map[string]any) {
	t.Helper()
	dir = t.TempDir()
	script := writeScript(t, dir, slowScript())
	d = startDaemon(t, 1, "-m", "script:"+script, "--yolo", "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	a = dial(t, d.sock)
	initialize(a)
	sid = newSession(a, dir)
	answer = make(chan map[string]any, 1)
	go func() {
		answer <- a.callErrOrResult("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("go")})
	}()
	a.waitText(sid, "part-02")
	return d, dir, sid, a, answer
}

// callErrOrResult sends a request and returns its whole answer.
func (c *client) callErrOrResult(method string, params any) map[string]any {
	c.mu.Lock()
	c.next++
	id := c.next
	ch := make(chan map[string]any, 1)
	c.wait[id] = ch
	c.mu.Unlock()
	_ = c.enc.Encode(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	select {
	case m := <-ch:
		return m
	case <-time.After(30 * time.Second):
		return nil
	}
}

func stopReason(m map[string]any) any {
	r, _ := m["result"].(map[string]any)
	return r["stopReason"]
}

func TestCancelFromAnotherConnectionStopsTheTurn(t *testing.T) {
	d, dir, sid, _, answer := runningOnA(t)
	b := dial(t, d.sock)
	initialize(b)
	b.call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
	_ = b.enc.Encode(map[string]any{"jsonrpc": "2.0", "method": "session/cancel", "params": map[string]any{"sessionId": sid}})
	select {
	case m := <-answer:
		if stopReason(m) != "cancelled" {
			t.Fatalf("A's prompt ended %v; want cancelled", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("session/cancel from the second connection did not reach the turn")
	}
}

func TestCloseOnOneConnectionLeavesTheOtherRunning(t *testing.T) {
	d, dir, sid, a, answer := runningOnA(t)
	b := dial(t, d.sock)
	initialize(b)
	b.call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
	b.call("session/close", map[string]any{"sessionId": sid})
	select {
	case m := <-answer:
		if stopReason(m) != "end_turn" || !strings.Contains(a.text(sid), "part-39 END") {
			t.Fatalf("A's prompt ended %v with %q; want end_turn and the whole answer", m, a.text(sid))
		}
	case <-time.After(20 * time.Second):
		t.Fatal("A's turn never ended")
	}
}

func TestSessionListSaysWhatRunsAndHowManyHoldIt(t *testing.T) {
	d, dir, sid, _, _ := runningOnA(t)
	b := dial(t, d.sock)
	initialize(b)
	meta := func() map[string]any {
		list := b.call("session/list", map[string]any{})
		for _, s := range list["sessions"].([]any) {
			if m := s.(map[string]any); m["sessionId"] == sid {
				meta, _ := m["_meta"].(map[string]any)
				return meta
			}
		}
		t.Fatalf("session/list lacks %s: %v", sid, list)
		return nil
	}
	if m := meta(); m["corvid.dev/running"] != true || m["corvid.dev/attached"] != float64(1) {
		t.Fatalf("while A runs: %v; want running, 1 attached", m)
	}
	b.call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
	if m := meta(); m["corvid.dev/attached"] != float64(2) {
		t.Fatalf("after B loads: %v; want 2 attached", m)
	}
}
