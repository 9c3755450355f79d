package serve

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// initializeWith initializes c with the given clientCapabilities.
func initializeWith(c *client, caps map[string]any) {
	c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": caps})
}

// editorCaps are an editor's client-side tools: fs and terminal.
var editorCaps = map[string]any{"fs": map[string]any{"readTextFile": true, "writeTextFile": true}, "terminal": true}

// serveClientTools answers, until the test ends, every fs/* and terminal/*
// request the agent sends c, as an editor would: reads give content.
func serveClientTools(t *testing.T, c *client, content string) {
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	go func() {
		answered := 0
		for {
			select {
			case <-done:
				return
			case <-c.gone:
				return
			case <-time.After(5 * time.Millisecond):
			}
			c.mu.Lock()
			reqs := c.reqs[answered:]
			answered = len(c.reqs)
			c.mu.Unlock()
			for _, r := range reqs {
				var result any = map[string]any{}
				switch r["method"] {
				case "fs/read_text_file":
					result = map[string]any{"content": content}
				case "terminal/create":
					result = map[string]any{"terminalId": "term-1"}
				case "terminal/wait_for_exit":
					result = map[string]any{"exitCode": 0}
				case "terminal/output":
					result = map[string]any{"output": "ran-in-the-editor\n", "truncated": false, "exitStatus": map[string]any{"exitCode": 0}}
				}
				b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": r["id"], "result": result})
				_, _ = c.conn.Write(append(b, '\n'))
			}
		}
	}()
}

// clientToolRequests are the fs/* and terminal/* requests c was sent.
func (c *client) clientToolRequests() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, r := range c.reqs {
		m, _ := r["method"].(string)
		if strings.HasPrefix(m, "fs/") || strings.HasPrefix(m, "terminal/") {
			out = append(out, m)
		}
	}
	return out
}

// toolOutputs is the text of every tool_call(_update) of sid on c.
func (c *client) toolOutputs(sid string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for _, n := range c.note {
		p, _ := n["params"].(map[string]any)
		if p == nil || p["sessionId"] != sid {
			continue
		}
		u, _ := p["update"].(map[string]any)
		if k := u["sessionUpdate"]; k == "tool_call" || k == "tool_call_update" {
			out, _ := json.Marshal(u)
			b.Write(out)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// Capabilities are per connection (docs/serve.md): a session opened by an
// editor with client-side tools reads and runs through that editor; a
// second client attached to it without them is never sent an fs/* or
// terminal/* request, even when it prompts, and sees the tool calls. When
// the editor leaves, the session's tools go to disk instead of a client
// that is gone.
func TestClientToolsGoOnlyToTheConnectionThatNegotiatedThem(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("from-disk\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	read := map[string]any{"type": "tool_call", "name": "read", "input": map[string]any{"path": "a.txt"}}
	shell := map[string]any{"type": "tool_call", "name": "shell", "input": map[string]any{"command": "echo ran-on-disk"}}
	text := func(s string) map[string]any {
		return map[string]any{"parts": []any{map[string]any{"type": "text", "text": s}}}
	}
	script := writeScript(t, dir, map[string]any{"responses": []any{
		map[string]any{"parts": []any{read, shell}}, text("turn one done"),
		map[string]any{"parts": []any{read, shell}}, text("turn two done"),
	}})
	d := startDaemon(t, 1, "-m", "script:"+script, "--yolo", "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	a := dial(t, d.sock)
	initializeWith(a, editorCaps)
	serveClientTools(t, a, "from-the-editor")
	sid := newSession(a, dir)
	b := dial(t, d.sock)
	initializeWith(b, map[string]any{})
	b.call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})

	if r := b.call("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("go")}); r["stopReason"] != "end_turn" {
		t.Fatalf("B's prompt: %v", r)
	}
	if got := b.clientToolRequests(); len(got) != 0 {
		t.Errorf("B advertised no client tools and was sent %v", got)
	}
	want := []string{"fs/read_text_file", "terminal/create"}
	got := strings.Join(a.clientToolRequests(), " ")
	for _, m := range want {
		if !strings.Contains(got, m) {
			t.Errorf("A (the editor that opened the session) was sent %q; want %s among them", got, m)
		}
	}
	for name, c := range map[string]*client{"A": a, "B": b} {
		c.waitText(sid, "turn one done")
		if out := c.toolOutputs(sid); !strings.Contains(out, "from-the-editor") {
			t.Errorf("%s's tool calls %s; want the read through the editor shown", name, out)
		}
	}

	// The editor leaves; B's next turn reads and runs on disk.
	a.conn.Close()
	<-a.gone
	waitAttached(t, b, sid, 1)
	if r := b.call("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("again")}); r["stopReason"] != "end_turn" {
		t.Fatalf("B's prompt after A left: %v", r)
	}
	if got := b.clientToolRequests(); len(got) != 0 {
		t.Errorf("B advertised no client tools and was sent %v", got)
	}
	out := b.toolOutputs(sid)
	if !strings.Contains(out, "from-disk") || !strings.Contains(out, "ran-on-disk") {
		t.Errorf("B's tool calls after the editor left: %s\nwant the read and the command on disk", out)
	}
}

// The other way round: a session opened by a client without client-side
// tools reads and runs on disk, and an editor that attaches with fs and
// terminal and prompts it is sent no fs/* or terminal/* request.
func TestAttachingEditorIsNotSentAnotherSessionsToolRequests(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("from-disk\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	script := writeScript(t, dir, map[string]any{"responses": []any{
		map[string]any{"parts": []any{
			map[string]any{"type": "tool_call", "name": "read", "input": map[string]any{"path": "a.txt"}},
			map[string]any{"type": "tool_call", "name": "shell", "input": map[string]any{"command": "echo ran-on-disk"}},
		}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "done"}}},
	}})
	d := startDaemon(t, 1, "-m", "script:"+script, "--yolo", "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	b := dial(t, d.sock)
	initializeWith(b, map[string]any{})
	sid := newSession(b, dir)
	a := dial(t, d.sock)
	initializeWith(a, editorCaps)
	serveClientTools(t, a, "from-the-editor")
	a.call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
	if r := a.call("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("go")}); r["stopReason"] != "end_turn" {
		t.Fatalf("A's prompt: %v", r)
	}
	for name, c := range map[string]*client{"A": a, "B": b} {
		if got := c.clientToolRequests(); len(got) != 0 {
			t.Errorf("%s was sent %v for a session opened without client tools", name, got)
		}
		c.waitText(sid, "done")
		if out := c.toolOutputs(sid); !strings.Contains(out, "from-disk") || !strings.Contains(out, "ran-on-disk") {
			t.Errorf("%s's tool calls %s; want the read and the command on disk, shown", name, out)
		}
	}
}

// waitAttached waits until session/list, asked on c, says n clients hold
// sid (the daemon noticed a client that left).
func waitAttached(t *testing.T, c *client, sid string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		list := c.call("session/list", map[string]any{})
		sessions, _ := list["sessions"].([]any)
		for _, s := range sessions {
			m, _ := s.(map[string]any)
			meta, _ := m["_meta"].(map[string]any)
			if m["sessionId"] == sid && meta["corvid.dev/attached"] == float64(n) {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("session/list never said %d clients hold %s", n, sid)
}
