package serve

import (
	"strings"
	"testing"
	"time"
)

// session/resume of a session another connection runs attaches without a
// replay: the client gets what the turn shows from then on, once each, in
// order, up to its end, and nothing shown before.
func TestResumeOfARunningSessionAttachesWithoutAReplay(t *testing.T) {
	d, dir, sid, _, answer := runningOnA(t)
	b := dial(t, d.sock)
	initialize(b)
	b.call("session/resume", map[string]any{"sessionId": sid, "cwd": dir, "mcpServers": []any{}})
	if m := <-answer; stopReason(m) != "end_turn" {
		t.Fatalf("A's prompt: %v", m)
	}
	want := fullSlowAnswer()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.HasSuffix(b.text(sid), "END") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	got := b.text(sid)
	if strings.Contains(got, "part-00") {
		t.Errorf("resume replayed what was shown before it: %q", got)
	}
	if got == "" || !strings.HasSuffix(want, got) {
		t.Errorf("after resume, B's text %q\nwant a tail of %q, with no gap or duplicate", got, want)
	}
}
