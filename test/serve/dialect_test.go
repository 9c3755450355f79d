package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

const turnID = "0198a1b2c3d47e5f8a9b0c1d2e3f4a5b"

// updatesOf are the session/update notifications of sid c got so far.
func (c *client) updatesOf(sid string) []map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []map[string]any
	for _, n := range c.note {
		p, _ := n["params"].(map[string]any)
		if n["method"] != "session/update" || p == nil || p["sessionId"] != sid {
			continue
		}
		u, _ := p["update"].(map[string]any)
		out = append(out, u)
	}
	return out
}

// Clients of one session in different dialects (docs/serve.md,
// "Dialects"): each declares its own in initialize's
// _meta["corvid.dev/dialect"], and each gets the same turn spelled its
// way. The CodeBuddy client gets the root-level capability flags, its turn
// id on every update and session_end; the plain ACP client gets the same
// updates with no CodeBuddy key at all; a Gas City client that only
// watches gets the message text as top-level content too.
func TestTwoDialectsOnOneSessionEachGetTheirOwnFrames(t *testing.T) {
	dir := t.TempDir()
	script := writeScript(t, dir, slowScript())
	d := startDaemon(t, 1, "-m", "script:"+script, "--yolo", "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	cb := dial(t, d.sock)
	cbInit := cb.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{},
		"_meta": map[string]any{"corvid.dev/dialect": "codebuddy"}})
	plain := dial(t, d.sock)
	plainInit := plain.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{},
		"_meta": map[string]any{"corvid.dev/dialect": "acp"}})
	if caps, _ := cbInit["agentCapabilities"].(map[string]any); caps["multitaskSupport"] != true {
		t.Errorf("CodeBuddy client's agentCapabilities %v: want the root-level multitaskSupport", caps)
	}
	if b, _ := json.Marshal(plainInit); strings.Contains(string(b), "codebuddy.ai") || strings.Contains(string(b), "multitaskSupport") {
		t.Errorf("plain client's initialize result speaks CodeBuddy: %s", b)
	}
	gc := dial(t, d.sock)
	gc.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{},
		"_meta": map[string]any{"corvid.dev/dialect": "gascity"}})
	sid := newSession(cb, dir)
	plain.call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
	gc.call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
	res := cb.call("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("go"),
		"_meta": map[string]any{"codebuddy.ai/conversationRequestId": turnID}})
	if res["stopReason"] != "end_turn" {
		t.Fatalf("prompt: %v", res)
	}
	waitExact(t, plain, sid, fullSlowAnswer())
	waitExact(t, cb, sid, fullSlowAnswer())
	if !cb.waitNote("session/update", func(p map[string]any) bool {
		u, _ := p["update"].(map[string]any)
		return u["sessionUpdate"] == "session_end"
	}) {
		t.Errorf("the CodeBuddy client got no session_end")
	}
	chunks := 0
	for _, u := range cb.updatesOf(sid) {
		if u["sessionUpdate"] != "agent_message_chunk" {
			continue
		}
		chunks++
		if m, _ := u["_meta"].(map[string]any); m["codebuddy.ai/conversationRequestId"] != turnID {
			t.Errorf("CodeBuddy client's chunk %v lacks its turn id", u)
		}
	}
	if chunks == 0 {
		t.Fatal("the CodeBuddy client got no chunk")
	}
	plainChunks := 0
	for _, u := range plain.updatesOf(sid) {
		b, _ := json.Marshal(u)
		if strings.Contains(string(b), "codebuddy.ai") || u["sessionUpdate"] == "session_end" {
			t.Errorf("plain client got CodeBuddy's dialect: %s", b)
		}
		if u["sessionUpdate"] == "agent_message_chunk" {
			plainChunks++
		}
	}
	if plainChunks != chunks {
		t.Errorf("plain client got %d chunks, the CodeBuddy client %d: want the same updates", plainChunks, chunks)
	}
	topLevel := func(c *client) string {
		c.mu.Lock()
		defer c.mu.Unlock()
		var b strings.Builder
		for _, n := range c.note {
			p, _ := n["params"].(map[string]any)
			blocks, _ := p["content"].([]any)
			for _, x := range blocks {
				blk, _ := x.(map[string]any)
				s, _ := blk["text"].(string)
				b.WriteString(s)
			}
		}
		return b.String()
	}
	// The Gas City client is shown the CodeBuddy client's prompt, then the
	// answer, each mirrored as a load's replay mirrors them.
	deadline := time.Now().Add(10 * time.Second)
	for topLevel(gc) != "go"+fullSlowAnswer() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := topLevel(gc); got != "go"+fullSlowAnswer() {
		t.Errorf("Gas City client's top-level content %q, want the prompt and the whole answer", got)
	}
	if got := topLevel(plain) + topLevel(cb); got != "" {
		t.Errorf("the other clients got top-level content %q", got)
	}
}

// bigScript answers with about 8 MiB of text in 64 KiB chunks, far more
// than a socket's buffer holds.
func bigScript() map[string]any {
	text := strings.Repeat(strings.Repeat("x", 1023)+"\n", 8<<10) + "END"
	return map[string]any{"chunkSize": 64 << 10, "responses": []any{
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": text}}},
	}}
}

// A client that stops reading never holds up another client of the same
// session: each connection has its own outbound queue (internal/serve),
// so the turn's updates go on reaching the reading client in full while
// the stalled one's socket is full.
func TestStalledClientDoesNotDelayAnotherClientsFrames(t *testing.T) {
	dir := t.TempDir()
	script := writeScript(t, dir, bigScript())
	d := startDaemon(t, 1, "-m", "script:"+script, "--yolo", "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	// The stalled client: it opens the session and then reads nothing.
	nc, err := net.Dial("unix", d.sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	enc := json.NewEncoder(nc)
	rd := bufio.NewReader(nc)
	answer := func(id int) map[string]any {
		for {
			line, err := rd.ReadBytes('\n')
			if err != nil {
				t.Fatalf("stalled client, before it stalls: %v", err)
			}
			var m map[string]any
			if json.Unmarshal(line, &m) == nil && m["id"] == float64(id) && m["method"] == nil {
				return m
			}
		}
	}
	_ = enc.Encode(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}})
	answer(1)
	_ = enc.Encode(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": map[string]any{"cwd": dir, "mcpServers": []any{}}})
	r, _ := answer(2)["result"].(map[string]any)
	sid, _ := r["sessionId"].(string)
	if sid == "" {
		t.Fatalf("session/new: %v", r)
	}
	// From here on the stalled client reads nothing.
	b := dial(t, d.sock)
	initialize(b)
	b.call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
	done := make(chan map[string]any, 1)
	go func() {
		done <- b.callErrOrResult("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("go")})
	}()
	select {
	case m := <-done:
		if stopReason(m) != "end_turn" {
			t.Fatalf("prompt: %v", m)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("the reading client's turn did not end while the other client stalled; it has %d bytes of text", len(b.text(sid)))
	}
	want := bigScript()["responses"].([]any)[0].(map[string]any)["parts"].([]any)[0].(map[string]any)["text"].(string)
	if got := b.text(sid); got != want {
		t.Fatalf("the reading client got %d bytes of text, want %d", len(got), len(want))
	}
}

// A CodeBuddy host launches `corvid --acp`; with --connect that line
// reaches a daemon, and the relay declares the dialect in the host's
// initialize, so this connection alone gets CodeBuddy's frames: a Zed
// relaying to the same daemon with `corvid acp --connect` does not. The
// fake editor checks every other frame against the ACP v1 schema.
func TestRelayOfCorvidACPDeclaresCodeBuddysDialectForItsConnectionOnly(t *testing.T) {
	dir := t.TempDir()
	script := writeScript(t, dir, map[string]any{"onExhausted": "repeat", "responses": []any{
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "hi"}}},
	}})
	d := startDaemon(t, 1, "-m", "script:"+script, "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	for _, c := range []struct {
		name    string
		args    []string
		dialect string
	}{
		{"codebuddy", []string{"--acp", "--connect", "unix:" + d.sock}, "codebuddy"},
		{"zed", []string{"acp", "--connect", "unix:" + d.sock}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			e := testkit.Start(t, testkit.BuildCorvid(t), testkit.Options{Args: c.args, Dialect: c.dialect})
			res, rerr := e.Initialize(ctx, testkit.Zed())
			if rerr != nil {
				t.Fatal(rerr)
			}
			var caps map[string]json.RawMessage
			_ = json.Unmarshal(res.AgentCapabilities, &caps)
			if _, root := caps["multitaskSupport"]; root != (c.dialect == "codebuddy") {
				t.Errorf("root-level multitaskSupport present %v, want %v: %s", root, c.dialect == "codebuddy", res.AgentCapabilities)
			}
			sid := e.NewSession(ctx, dir)
			if stop, rerr := e.Prompt(ctx, sid, "hello"); rerr != nil || stop != "end_turn" {
				t.Fatalf("prompt: %q %v", stop, rerr)
			}
			if n := len(testkit.OfKind(e.Updates(sid), "session_end")); n != map[bool]int{true: 1}[c.dialect == "codebuddy"] {
				t.Errorf("%d session_end updates through the relay of %v", n, c.args)
			}
			if code, _ := e.Close(); code != 0 {
				t.Fatalf("relay exit %d:\n%s", code, e.Stderr())
			}
		})
	}
}
