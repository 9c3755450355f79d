package serve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// fullSlowAnswer is what slowScript's turn shows, whole.
func fullSlowAnswer() string {
	var words []string
	for i := range 40 {
		words = append(words, "part-"+string(rune('0'+i/10))+string(rune('0'+i%10)))
	}
	return strings.Join(words, " ") + " END"
}

// waitExact waits until the session's text on c is exactly want (a
// duplicate or a gap at the replay/live boundary never gets there).
func waitExact(t *testing.T, c *client, sid, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if got := c.text(sid); got == want {
			return
		} else if len(got) > len(want) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("session text %q\nwant %q", c.text(sid), want)
}

func TestLoadOfARunningSessionFollowsItsTurn(t *testing.T) {
	d, dir, sid, a, answer := runningOnA(t)
	b := dial(t, d.sock)
	initialize(b)
	b.call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
	// B got the replay of what was shown so far, then the rest live:
	// every word once, in order.
	waitExact(t, b, sid, fullSlowAnswer())
	if m := <-answer; stopReason(m) != "end_turn" {
		t.Fatalf("A's prompt: %v", m)
	}
	waitExact(t, a, sid, fullSlowAnswer())
}

func TestAttachedClientFollowsTheTurnAfterTheFirstLeaves(t *testing.T) {
	d, dir, sid, a, _ := runningOnA(t)
	b := dial(t, d.sock)
	initialize(b)
	b.call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
	a.conn.Close()
	waitExact(t, b, sid, fullSlowAnswer())
}

func TestPromptFromAnAttachedClientReachesEveryAttachment(t *testing.T) {
	dir := t.TempDir()
	script := writeScript(t, dir, map[string]any{"responses": []any{
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "first answer."}}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "second answer."}}},
	}})
	d := startDaemon(t, 1, "-m", "script:"+script, "--yolo", "--listen", "unix:"+dir+"/s.sock")
	a := dial(t, d.sock)
	initialize(a)
	sid := newSession(a, dir)
	a.call("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("one")})
	b := dial(t, d.sock)
	initialize(b)
	b.call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
	if r := b.call("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("two")}); r["stopReason"] != "end_turn" {
		t.Fatalf("B's prompt: %v", r)
	}
	waitExact(t, b, sid, "first answer.second answer.")
	waitExact(t, a, sid, "first answer.second answer.")
}

// TestQuestionGoesToEveryAttachmentAndTheFirstAnswerWins: A and B hold
// one session; A's turn asks permission; both are asked, B answers first,
// A's question is withdrawn with $/cancel_request, and the write happens.
func TestQuestionGoesToEveryAttachmentAndTheFirstAnswerWins(t *testing.T) {
	root, err := testkit.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	d := startDaemon(t, 1, "-m", "script:"+filepath.Join(root, "examples", "edit.json"), "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	a := dial(t, d.sock)
	initialize(a)
	sid := newSession(a, dir)
	b := dial(t, d.sock)
	initialize(b)
	b.call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
	answer := make(chan map[string]any, 1)
	go func() {
		answer <- a.callErrOrResult("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("write the notes")})
	}()
	qa := a.waitRequest("session/request_permission")
	qb := b.waitRequest("session/request_permission")
	_ = b.enc.Encode(map[string]any{"jsonrpc": "2.0", "id": qb["id"], "result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}}})
	if !a.waitNote("$/cancel_request", func(p map[string]any) bool { return p["requestId"] == qa["id"] }) {
		t.Fatalf("A's question was not withdrawn; A got %v", a.note)
	}
	select {
	case m := <-answer:
		if stopReason(m) != "end_turn" {
			t.Fatalf("A's prompt: %v", m)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the turn did not end after B's answer")
	}
	if b, err := os.ReadFile(filepath.Join(dir, "notes.txt")); err != nil || string(b) != "written by corvid\n" {
		t.Fatalf("notes.txt: %q %v", b, err)
	}
}

// TestClientThatAttachesWhileAQuestionIsOpenIsAskedToo: A's turn asks;
// A does not answer; B loads the session, is asked after its load answer,
// and its answer lets the write happen.
func TestClientThatAttachesWhileAQuestionIsOpenIsAskedToo(t *testing.T) {
	root, err := testkit.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	d := startDaemon(t, 1, "-m", "script:"+filepath.Join(root, "examples", "edit.json"), "--listen", "unix:"+filepath.Join(dir, "s.sock"))
	a := dial(t, d.sock)
	initialize(a)
	sid := newSession(a, dir)
	a.send("session/prompt", map[string]any{"sessionId": sid, "prompt": prompt("write the notes")})
	qa := a.waitRequest("session/request_permission")
	b := dial(t, d.sock)
	initialize(b)
	b.call("session/load", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
	qb := b.waitRequest("session/request_permission")
	_ = b.enc.Encode(map[string]any{"jsonrpc": "2.0", "id": qb["id"], "result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}}})
	if !a.waitNote("$/cancel_request", func(p map[string]any) bool { return p["requestId"] == qa["id"] }) {
		t.Fatal("A's question was not withdrawn")
	}
	waitExact(t, b, sid, "I will create notes.txt.Done: notes.txt now exists.")
	if got, err := os.ReadFile(filepath.Join(dir, "notes.txt")); err != nil || string(got) != "written by corvid\n" {
		t.Fatalf("notes.txt: %q %v", got, err)
	}
}
