package serve

import (
	"strings"
	"testing"
	"time"
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
