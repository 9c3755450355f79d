package serve

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// shown is one user or agent message chunk a client was sent: its kind
// (user / agent), text and messageId.
type shown struct{ kind, text, id string }

// chunks are the user and agent message chunks of the session c was sent,
// in order.
func (c *client) chunks(sid string) []shown {
	var out []shown
	for _, u := range c.updatesOf(sid) {
		kind := strings.TrimSuffix(u["sessionUpdate"].(string), "_message_chunk")
		if kind != "user" && kind != "agent" {
			continue
		}
		ct, _ := u["content"].(map[string]any)
		text, _ := ct["text"].(string)
		id, _ := u["messageId"].(string)
		out = append(out, shown{kind, text, id})
	}
	return out
}

// transcript is chunks as "user:one|agent:first answer.|…", chunks of one
// message merged.
func transcript(cs []shown) string {
	var parts []string
	for i, c := range cs {
		if i > 0 && cs[i-1].kind == c.kind && cs[i-1].id == c.id {
			parts[len(parts)-1] += c.text
			continue
		}
		parts = append(parts, c.kind+":"+c.text)
	}
	return strings.Join(parts, "|")
}

func waitTranscript(t *testing.T, c *client, sid, want string) []shown {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if got := transcript(c.chunks(sid)); got == want {
			return c.chunks(sid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("session transcript %q\nwant %q", transcript(c.chunks(sid)), want)
	return nil
}

// userID is the messageId of the user message whose text is text.
func userID(t *testing.T, cs []shown, text string) string {
	t.Helper()
	for _, c := range cs {
		if c.kind == "user" && c.text == text {
			return c.id
		}
	}
	t.Fatalf("no user chunk %q in %v", text, cs)
	return ""
}

// TestPromptReachesTheOtherAttachmentsBeforeItsTurn: A, B and C hold one
// session. Each prompt is shown to the other attachments, once, as the
// user_message_chunk a later load replays (same messageId), before its
// turn's first update; the client that sent it is not sent it back.
func TestPromptReachesTheOtherAttachmentsBeforeItsTurn(t *testing.T) {
	dir := t.TempDir()
	script := writeScript(t, dir, map[string]any{"responses": []any{
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "first answer."}}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "second answer."}}},
	}})
	d := startDaemon(t, 1, "-m", "script:"+script, "--yolo", "--listen", "unix:"+dir+"/s.sock")
	a := dial(t, d.sock)
	initialize(a)
	sid := newSession(a, dir)
	b := dial(t, d.sock)
	initialize(b)
	b.call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
	if r := a.call("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("one")}); r["stopReason"] != "end_turn" {
		t.Fatalf("A's prompt: %v", r)
	}
	bSaw := waitTranscript(t, b, sid, "user:one|agent:first answer.")
	c := dial(t, d.sock)
	initialize(c)
	c.call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
	if r := b.call("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("two")}); r["stopReason"] != "end_turn" {
		t.Fatalf("B's prompt: %v", r)
	}
	aSaw := waitTranscript(t, a, sid, "agent:first answer.|user:two|agent:second answer.")
	cSaw := waitTranscript(t, c, sid, "user:one|agent:first answer.|user:two|agent:second answer.")
	waitTranscript(t, b, sid, "user:one|agent:first answer.|agent:second answer.")
	// What each was shown live is what a load replays.
	e := dial(t, d.sock)
	initialize(e)
	e.call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
	eSaw := waitTranscript(t, e, sid, "user:one|agent:first answer.|user:two|agent:second answer.")
	if got, want := userID(t, bSaw, "one"), userID(t, eSaw, "one"); got != want {
		t.Errorf("B was shown prompt one as message %q, a load replays %q", got, want)
	}
	for name, saw := range map[string][]shown{"A": aSaw, "C": cSaw} {
		if got, want := userID(t, saw, "two"), userID(t, eSaw, "two"); got != want {
			t.Errorf("%s was shown prompt two as message %q, a load replays %q", name, got, want)
		}
	}
}

// TestClientAttachingMidTurnGetsThePromptOnce: a client that loads a
// session while its turn runs gets the prompt in the replay, not again live.
func TestClientAttachingMidTurnGetsThePromptOnce(t *testing.T) {
	d, dir, sid, _, answer := runningOnA(t)
	b := dial(t, d.sock)
	initialize(b)
	b.call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
	waitExact(t, b, sid, fullSlowAnswer())
	<-answer
	var n int
	for _, c := range b.chunks(sid) {
		if c.kind == "user" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("B was shown %d user chunks, want the prompt once: %v", n, transcript(b.chunks(sid)))
	}
}

// TestPromptCancelledBeforeItsTurnShowsAnythingReachesTheOthers: a prompt
// whose turn is cancelled before its first update (the model had not
// answered yet) is still shown live to the other attachments, as a load
// would replay it.
func TestPromptCancelledBeforeItsTurnShowsAnythingReachesTheOthers(t *testing.T) {
	for _, wait := range []int{0, 1, 5, 300} {
		t.Run(fmt.Sprint(wait, "ms"), func(t *testing.T) { promptCancelledAfter(t, wait) })
	}
}

func promptCancelledAfter(t *testing.T, wait int) {
	dir := t.TempDir()
	script := writeScript(t, dir, map[string]any{"responses": []any{
		map[string]any{"delayMs": 10000, "parts": []any{map[string]any{"type": "text", "text": "too late."}}},
	}})
	d := startDaemon(t, 1, "-m", "script:"+script, "--yolo", "--listen", "unix:"+dir+"/s.sock")
	a := dial(t, d.sock)
	initialize(a)
	sid := newSession(a, dir)
	b := dial(t, d.sock)
	initialize(b)
	b.call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
	// The prompt, then (after wait) the cancel, in that order on A's
	// connection.
	a.mu.Lock()
	a.next++
	id := a.next
	answer := make(chan map[string]any, 1)
	a.wait[id] = answer
	a.mu.Unlock()
	if err := a.enc.Encode(map[string]any{"jsonrpc": "2.0", "id": id, "method": "session/prompt", "params": map[string]any{"sessionId": sid, "prompt": prompt("never mind")}}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Duration(wait) * time.Millisecond)
	if err := a.enc.Encode(map[string]any{"jsonrpc": "2.0", "method": "session/cancel", "params": map[string]any{"sessionId": sid}}); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-answer:
		if r, _ := m["result"].(map[string]any); r["stopReason"] != "cancelled" {
			t.Fatalf("A's prompt: %v", m)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the cancelled prompt did not end")
	}
	bSaw := waitTranscript(t, b, sid, "user:never mind")
	e := dial(t, d.sock)
	initialize(e)
	e.call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
	eSaw := waitTranscript(t, e, sid, "user:never mind")
	if got, want := userID(t, bSaw, "never mind"), userID(t, eSaw, "never mind"); got != want {
		t.Errorf("B was shown the prompt as message %q, a load replays %q", got, want)
	}
}
