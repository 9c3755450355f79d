package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// Team members and workers as sessions (docs/serve.md, CodeBuddy's C40):
// a member's session id, from the team update, can be loaded from any
// connection: its history, then live.

// memberWords is what the member's script streams, slowly.
func memberWords(n int) string {
	var words []string
	for i := range n {
		words = append(words, fmt.Sprintf("m-%02d", i))
	}
	return strings.Join(words, " ") + " DONE"
}

// teamScripts writes the parent's script (one task call to member
// "writer", whose model plays the child's script, then an answer) and the
// child's (memberWords, streamed over about delay×n).
func teamScripts(t *testing.T, dir string, words, delayMs int) (parent string) {
	t.Helper()
	child := filepath.Join(dir, "child.json")
	writeJSON(t, child, map[string]any{"chunkSize": 5, "delayMs": delayMs, "responses": []any{
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": memberWords(words)}}},
	}})
	parent = filepath.Join(dir, "parent.json")
	writeJSON(t, parent, map[string]any{"responses": []any{
		map[string]any{"parts": []any{map[string]any{"type": "tool_call", "id": "call-1", "name": "task",
			"input": map[string]any{"description": "write the words", "prompt": "write them", "name": "writer", "model": "script:" + child}}}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "parent done."}}},
	}})
	return parent
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err = os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// memberSession waits for a team update on c that names member name's
// session, and returns that session id.
func (c *client) memberSession(sid, name string) string {
	c.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		c.mu.Lock()
		for _, n := range c.note {
			p, _ := n["params"].(map[string]any)
			if p["sessionId"] != sid {
				continue
			}
			u, _ := p["update"].(map[string]any)
			m, _ := u["_meta"].(map[string]any)
			tu, _ := m["codebuddy.ai/teamUpdate"].(map[string]any)
			ms, _ := tu["members"].([]any)
			for _, x := range ms {
				mm, _ := x.(map[string]any)
				if id, _ := mm["sessionId"].(string); mm["name"] == name && id != "" {
					c.mu.Unlock()
					return id
				}
			}
		}
		c.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	c.t.Fatalf("no team update named member %s", name)
	return ""
}

// memberText is the text of the root's updates tagged as member name's.
func (c *client) memberText(sid, name string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for _, n := range c.note {
		p, _ := n["params"].(map[string]any)
		u, _ := p["update"].(map[string]any)
		m, _ := u["_meta"].(map[string]any)
		if p["sessionId"] != sid || u["sessionUpdate"] != "agent_message_chunk" || m["codebuddy.ai/memberEvent"] != name {
			continue
		}
		ct, _ := u["content"].(map[string]any)
		s, _ := ct["text"].(string)
		b.WriteString(s)
	}
	return b.String()
}

// userText is the user message text of the session's updates so far.
func (c *client) userText(sid string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for _, n := range c.note {
		p, _ := n["params"].(map[string]any)
		u, _ := p["update"].(map[string]any)
		if p["sessionId"] != sid || u["sessionUpdate"] != "user_message_chunk" {
			continue
		}
		ct, _ := u["content"].(map[string]any)
		s, _ := ct["text"].(string)
		b.WriteString(s)
	}
	return b.String()
}

// loadErr sends session/load and returns its error object (nil: none).
func (c *client) loadErr(sid, cwd string) map[string]any {
	m := c.callErrOrResult("session/load", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}})
	e, _ := m["error"].(map[string]any)
	return e
}

// TestMemberSessionAttachesMidRunThenReloadsAfterTheTurnAndARestart is
// C40 through the daemon: B loads the member's session while the member
// streams and gets its whole text exactly once (replay, then live), none
// of the root's; after the turn a new client's load gets the same
// timeline, and so does one of a restarted daemon; a member id is not
// found in another daemon's home; a prompt to it is refused.
func TestMemberSessionAttachesMidRunThenReloadsAfterTheTurnAndARestart(t *testing.T) {
	dir := t.TempDir()
	parent := teamScripts(t, dir, 120, 25)
	home, err := os.MkdirTemp("", "cs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	sock := filepath.Join(dir, "s.sock")
	d := startDaemonIn(t, home, 1, "-m", "script:"+parent, "--yolo", "--listen", "unix:"+sock)
	a := dial(t, d.sock)
	initialize(a)
	sid := newSession(a, dir)
	answer := make(chan map[string]any, 1)
	go func() {
		answer <- a.callErrOrResult("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("go")})
	}()
	mid := a.memberSession(sid, "writer")
	if !strings.HasPrefix(mid, sid+".sub_") {
		t.Fatalf("member session id %q does not name its root %s", mid, sid)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(a.memberText(sid, "writer"), "m-03") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}

	b := dial(t, d.sock)
	initialize(b)
	r := b.call("session/load", map[string]any{"sessionId": mid, "cwd": dir, "mcpServers": []any{}})
	rm, _ := r["_meta"].(map[string]any)
	info, _ := rm["corvid.dev/member"].(map[string]any)
	if info["parentSessionId"] != sid || info["name"] != "writer" || info["status"] != "running" {
		t.Fatalf("load answer's corvid.dev/member = %v (want the running member writer of %s)", rm, sid)
	}
	// Replay, then live: every word once, in order, and nothing of the root.
	waitExact(t, b, mid, memberWords(120))
	if got := b.userText(mid); got != "write them" {
		t.Fatalf("the member's session opens with user text %q, want its task's prompt", got)
	}
	if m := <-answer; stopReason(m) != "end_turn" {
		t.Fatalf("A's prompt: %v", m)
	}
	if got := b.text(sid); got != "" {
		t.Fatalf("B, which loaded only the member, got the root's text %q", got)
	}
	if e := b.callErrOrResult("session/prompt", map[string]any{"sessionId": mid, "prompt": prompt("hi")}); !isInvalidParamsWithDetails(e) {
		t.Fatalf("a prompt to the member's session: %v (want -32602 with error.data.details)", e)
	}

	// After the turn, from a new connection: the whole timeline again.
	c := dial(t, d.sock)
	initialize(c)
	c.call("session/load", map[string]any{"sessionId": mid, "cwd": dir, "mcpServers": []any{}})
	waitExact(t, c, mid, memberWords(120))
	list := c.call("session/list", map[string]any{"_meta": map[string]any{"corvid.dev/members": true}})
	if !listsMember(list, mid, sid) {
		t.Fatalf("session/list with corvid.dev/members does not list %s under %s: %v", mid, sid, list)
	}
	for _, x := range list["sessions"].([]any) {
		if e, _ := x.(map[string]any); e["sessionId"] == mid {
			m, _ := e["_meta"].(map[string]any)
			if m["corvid.dev/attached"] != float64(2) || m["corvid.dev/running"] != false {
				t.Fatalf("the member's list _meta %v: want 2 connections viewing it (B and C), not running", m)
			}
		}
	}
	if listsMember(c.call("session/list", map[string]any{}), mid, sid) {
		t.Fatal("a plain session/list lists the member")
	}

	// The daemon stops; a new one on the same home serves the member.
	_ = d.cmd.Process.Signal(os.Interrupt)
	<-d.done
	d2 := startDaemonIn(t, home, 1, "-m", "script:"+parent, "--yolo", "--listen", "unix:"+sock)
	e := dial(t, d2.sock)
	initialize(e)
	e.call("session/load", map[string]any{"sessionId": mid, "cwd": dir, "mcpServers": []any{}})
	waitExact(t, e, mid, memberWords(120))
	if got := e.userText(mid); got != "write them" {
		t.Fatalf("after the restart the member's session opens with user text %q, want its task's prompt", got)
	}
	if !listsMember(e.call("session/list", map[string]any{"_meta": map[string]any{"corvid.dev/members": true}}), mid, sid) {
		t.Fatal("after the restart, session/list with corvid.dev/members does not list the stored member")
	}

	// Another home does not know it, nor a member its root never had.
	other := startDaemon(t, 1, "-m", "script:"+parent, "--listen", "unix:"+filepath.Join(dir, "o.sock"))
	o := dial(t, other.sock)
	initialize(o)
	for _, id := range []string{mid, sid + ".sub_000000000000000000000000"} {
		target := o
		if id != mid {
			target = e
		}
		if err := target.loadErr(id, dir); err == nil || err["code"] != float64(-32002) {
			t.Fatalf("load of %s: error %v, want -32002 (session not found)", id, err)
		}
	}
}

func isInvalidParamsWithDetails(m map[string]any) bool {
	e, _ := m["error"].(map[string]any)
	data, _ := e["data"].(map[string]any)
	details, _ := data["details"].(string)
	return e["code"] == float64(-32602) && details != ""
}

// listsMember reports whether a session/list result has member mid with
// its parent sid in corvid.dev/member, after sid.
func listsMember(list map[string]any, mid, sid string) bool {
	ss, _ := list["sessions"].([]any)
	seenRoot := false
	for _, x := range ss {
		s, _ := x.(map[string]any)
		if s["sessionId"] == sid {
			seenRoot = true
		}
		m, _ := s["_meta"].(map[string]any)
		info, _ := m["corvid.dev/member"].(map[string]any)
		if s["sessionId"] == mid && seenRoot && info["parentSessionId"] == sid && info["name"] == "writer" {
			return true
		}
	}
	return false
}

// TestCancelOfAMemberSessionStopsThatMemberOnly: a client that views a
// member sends session/cancel for it; the member's task ends cancelled,
// and the root's turn goes on to its answer.
func TestCancelOfAMemberSessionStopsThatMemberOnly(t *testing.T) {
	dir := t.TempDir()
	parent := teamScripts(t, dir, 2000, 40)
	d := startDaemon(t, 1, "-m", "script:"+parent, "--yolo", "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	a := dial(t, d.sock)
	initialize(a)
	sid := newSession(a, dir)
	answer := make(chan map[string]any, 1)
	go func() {
		answer <- a.callErrOrResult("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("go")})
	}()
	mid := a.memberSession(sid, "writer")
	b := dial(t, d.sock)
	initialize(b)
	b.call("session/load", map[string]any{"sessionId": mid, "cwd": dir, "mcpServers": []any{}})
	b.waitText(mid, "m-01")
	_ = b.enc.Encode(map[string]any{"jsonrpc": "2.0", "method": "session/cancel", "params": map[string]any{"sessionId": mid}})
	select {
	case m := <-answer:
		if stopReason(m) != "end_turn" {
			t.Fatalf("A's prompt after the member's cancel: %v (want end_turn: only the member stops)", m)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the root's turn did not end after the member was cancelled")
	}
	a.waitText(sid, "parent done.")
	if strings.Contains(b.text(mid), "DONE") {
		t.Fatal("the member streamed to its end after its cancel")
	}
}

// TestResumeOfAMemberSessionFollowsItWithoutReplay: session/resume of a
// running member's session attaches without the history: B gets the rest
// of the member's text live, a suffix of it, with nothing before.
func TestResumeOfAMemberSessionFollowsItWithoutReplay(t *testing.T) {
	dir := t.TempDir()
	parent := teamScripts(t, dir, 80, 25)
	d := startDaemon(t, 1, "-m", "script:"+parent, "--yolo", "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	a := dial(t, d.sock)
	initialize(a)
	sid := newSession(a, dir)
	answer := make(chan map[string]any, 1)
	go func() {
		answer <- a.callErrOrResult("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("go")})
	}()
	mid := a.memberSession(sid, "writer")
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(a.memberText(sid, "writer"), "m-05") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	b := dial(t, d.sock)
	initialize(b)
	b.call("session/resume", map[string]any{"sessionId": mid, "cwd": dir, "mcpServers": []any{}})
	if m := <-answer; stopReason(m) != "end_turn" {
		t.Fatalf("A's prompt: %v", m)
	}
	b.waitText(mid, "DONE")
	got, full := b.text(mid), memberWords(80)
	if !strings.HasSuffix(full, got) || strings.Contains(got, "m-00") || b.userText(mid) != "" {
		t.Fatalf("resumed member text %q (user %q): want a suffix of %q without the start or the prompt", got, b.userText(mid), full)
	}
}

// TestWebSocketClientFollowsAMemberSessionMidRun is C40's web host: a
// WebSocket client loads a running member's session and gets exactly the
// member's text (replay, then live), and no update of any other session.
func TestWebSocketClientFollowsAMemberSessionMidRun(t *testing.T) {
	dir := t.TempDir()
	parent := teamScripts(t, dir, 120, 25)
	d := startDaemon(t, 2, "-m", "script:"+parent, "--yolo", "--listen", "127.0.0.1:0", "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	a := dial(t, d.sock)
	initialize(a)
	sid := newSession(a, dir)
	a.send("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("go")})
	mid := a.memberSession(sid, "writer")
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(a.memberText(sid, "writer"), "m-03") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(d.url, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	ws.SetReadLimit(1 << 24)
	for i, req := range []map[string]any{
		{"method": "initialize", "params": map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}},
		{"method": "session/load", "params": map[string]any{"sessionId": mid, "cwd": dir, "mcpServers": []any{}}},
	} {
		req["jsonrpc"], req["id"] = "2.0", i+1
		b, _ := json.Marshal(req)
		if err := ws.Write(ctx, websocket.MessageText, b); err != nil {
			t.Fatal(err)
		}
	}
	want := memberWords(120)
	var text strings.Builder
	for text.String() != want {
		_, b, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("read: %v (text so far %q)", err, text.String())
		}
		var m struct {
			ID     any            `json:"id"`
			Method string         `json:"method"`
			Error  map[string]any `json:"error"`
			Params struct {
				SessionID string `json:"sessionId"`
				Update    struct {
					SessionUpdate string `json:"sessionUpdate"`
					Content       struct {
						Text string `json:"text"`
					} `json:"content"`
				} `json:"update"`
			} `json:"params"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("frame %s: %v", b, err)
		}
		switch {
		case m.Error != nil:
			t.Fatalf("request %v: %v", m.ID, m.Error)
		case m.Method == "session/update" && m.Params.SessionID != mid:
			t.Fatalf("the member's client got an update of session %s: %s", m.Params.SessionID, b)
		case m.Method == "session/update" && m.Params.Update.SessionUpdate == "agent_message_chunk":
			text.WriteString(m.Params.Update.Content.Text)
			if !strings.HasPrefix(want, text.String()) {
				t.Fatalf("member text %q is not a prefix of %q (a gap or a duplicate)", text.String(), want)
			}
		}
	}
}

// memberSessions are the distinct session ids the team updates on c gave
// member name, in order.
func (c *client) memberSessions(sid, name string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, n := range c.note {
		p, _ := n["params"].(map[string]any)
		u, _ := p["update"].(map[string]any)
		m, _ := u["_meta"].(map[string]any)
		tu, _ := m["codebuddy.ai/teamUpdate"].(map[string]any)
		ms, _ := tu["members"].([]any)
		for _, x := range ms {
			mm, _ := x.(map[string]any)
			if id, _ := mm["sessionId"].(string); p["sessionId"] == sid && mm["name"] == name && id != "" && !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	return out
}

// TestEarlierRunOfAMemberLoadsAfterARestartWhileItsRootIsLive: member
// writer runs two tasks, each a session; after a restart, with the root
// loaded (live, its roster naming only the second run), the first run's
// session still loads from the log, and an id of that root it never had
// is not found.
func TestEarlierRunOfAMemberLoadsAfterARestartWhileItsRootIsLive(t *testing.T) {
	dir := t.TempDir()
	task := func(id, text string) map[string]any {
		child := filepath.Join(dir, id+".json")
		writeJSON(t, child, map[string]any{"responses": []any{map[string]any{"parts": []any{map[string]any{"type": "text", "text": text}}}}})
		return map[string]any{"parts": []any{map[string]any{"type": "tool_call", "id": id, "name": "task",
			"input": map[string]any{"description": "run " + id, "prompt": "do " + id, "name": "writer", "model": "script:" + child}}}}
	}
	parent := filepath.Join(dir, "parent.json")
	writeJSON(t, parent, map[string]any{"responses": []any{task("one", "first run."), task("two", "second run."),
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "both done."}}}}})
	home, err := os.MkdirTemp("", "cs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	sock := filepath.Join(dir, "s.sock")
	d := startDaemonIn(t, home, 1, "-m", "script:"+parent, "--yolo", "--listen", "unix:"+sock)
	a := dial(t, d.sock)
	initialize(a)
	sid := newSession(a, dir)
	if r := a.call("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("go")}); r["stopReason"] != "end_turn" {
		t.Fatalf("prompt: %v", r)
	}
	runs := a.memberSessions(sid, "writer")
	if len(runs) != 2 {
		t.Fatalf("writer's runs: %v, want two sessions", runs)
	}
	_ = d.cmd.Process.Signal(os.Interrupt)
	<-d.done

	d2 := startDaemonIn(t, home, 1, "-m", "script:"+parent, "--yolo", "--listen", "unix:"+sock)
	b := dial(t, d2.sock)
	initialize(b)
	b.call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
	for i, want := range []string{"first run.", "second run."} {
		c := dial(t, d2.sock)
		initialize(c)
		c.call("session/load", map[string]any{"sessionId": runs[i], "cwd": dir, "mcpServers": []any{}})
		if got := c.text(runs[i]); got != want {
			t.Fatalf("run %d (%s) replayed %q, want %q", i+1, runs[i], got, want)
		}
	}
	if err := b.loadErr(sid+".sub_000000000000000000000000", dir); err == nil || err["code"] != float64(-32002) {
		t.Fatalf("load of a member its live root never had: error %v, want -32002", err)
	}
}
