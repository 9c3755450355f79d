package serve

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// notes counts the notifications of method c got so far.
func (c *client) notes(method string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, m := range c.note {
		if m["method"] == method {
			n++
		}
	}
	return n
}

// listMeta is the _meta session/list gives session sid.
func (c *client) listMeta(sid string) map[string]any {
	c.t.Helper()
	list := c.call("session/list", map[string]any{})
	for _, s := range list["sessions"].([]any) {
		if m := s.(map[string]any); m["sessionId"] == sid {
			meta, _ := m["_meta"].(map[string]any)
			return meta
		}
	}
	c.t.Fatalf("session/list lacks %s: %v", sid, list)
	return nil
}

// TestSessionsChangedGoesOnlyToClientsThatOptIn: a watcher that opted in
// at initialize hears _corvid/sessions_changed when another client creates
// a session, when its turn asks (the list then says waiting), and when the
// turn ends; a plain ACP client on the same daemon, holding the same
// session, never receives the extension notification.
func TestSessionsChangedGoesOnlyToClientsThatOptIn(t *testing.T) {
	root, err := testkit.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	d := startDaemon(t, 1, "-m", "script:"+filepath.Join(root, "examples", "edit.json"), "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	watcher := dial(t, d.sock)
	init := watcher.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{
		"_meta": map[string]any{"corvid.dev/sessionsChanged": true}}})
	if caps, _ := init["agentCapabilities"].(map[string]any); caps["_meta"].(map[string]any)["corvid.dev/sessionsChanged"] != true {
		t.Fatalf("initialize did not confirm the opt-in: %v", init)
	}
	plain := dial(t, d.sock)
	if caps, _ := plain.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})["agentCapabilities"].(map[string]any); caps["_meta"] != nil {
		if m, _ := caps["_meta"].(map[string]any); m["corvid.dev/sessionsChanged"] != nil {
			t.Fatalf("a plain client was told of sessions_changed: %v", caps)
		}
	}
	// A client that says false, or something else, is plain too.
	other := dial(t, d.sock)
	other.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{
		"_meta": map[string]any{"corvid.dev/sessionsChanged": "yes"}}})

	const method = "_corvid/sessions_changed"
	waitMore := func(than int, why string) int {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if n := watcher.notes(method); n > than {
				return n
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("no %s after %s", method, why)
		return 0
	}
	n := watcher.notes(method)
	sid := newSession(plain, dir)
	n = waitMore(n, "session/new")
	other.call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})

	answer := make(chan map[string]any, 1)
	go func() {
		answer <- plain.callErrOrResult("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("write the notes")})
	}()
	q := plain.waitRequest("session/request_permission")
	n = waitMore(n, "a question")
	m := watcher.listMeta(sid)
	if w, _ := m["corvid.dev/waiting"].([]any); len(w) != 1 || m["corvid.dev/running"] != true {
		t.Fatalf("while the question is open: %v; want waiting and running", m)
	}
	_ = plain.enc.Encode(map[string]any{"jsonrpc": "2.0", "id": q["id"], "result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}}})
	select {
	case m := <-answer:
		if stopReason(m) != "end_turn" {
			t.Fatalf("prompt: %v", m)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the turn did not end")
	}
	waitMore(n, "the turn's end")
	deadline := time.Now().Add(5 * time.Second)
	for {
		m := watcher.listMeta(sid)
		if m["corvid.dev/waiting"] == nil && m["corvid.dev/running"] == false {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the turn: %v; want neither waiting nor running", m)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // a notification still due would have arrived
	if k := plain.notes(method) + other.notes(method); k != 0 {
		t.Fatalf("clients that did not opt in got %d %s notifications", k, method)
	}
}

// TestSessionListGivesModelAndModeOfStoredSessions: a session no
// connection holds still shows the model and mode the store recorded.
func TestSessionListGivesModelAndModeOfStoredSessions(t *testing.T) {
	dir := t.TempDir()
	script := writeScript(t, dir, map[string]any{"responses": []any{map[string]any{"parts": []any{map[string]any{"type": "text", "text": "hi"}}}}})
	d := startDaemon(t, 1, "-m", "script:"+script, "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	a := dial(t, d.sock)
	initialize(a)
	sid := newSession(a, dir)
	a.call("session/close", map[string]any{"sessionId": sid})
	b := dial(t, d.sock)
	initialize(b)
	m := b.listMeta(sid)
	if m["corvid.dev/attached"] != float64(0) || m["corvid.dev/model"] != "script:"+script {
		t.Fatalf("a stored session nobody holds: %v; want 0 attached and its model", m)
	}
}
