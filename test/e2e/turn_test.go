package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

func TestCancelMidStreamAnswersCancelledAndSendsNothingAfter(t *testing.T) {
	script := scriptFile(t, "cancel-ticks")
	s := startCorvid(t, script, testkit.Options{})
	sid := s.ready(t, testkit.Zed())
	p := s.CallAsync("session/prompt", testkit.TextPrompt(sid, "count"))
	if _, err := s.WaitUpdate(s.ctx, testkit.Kind(sid, "agent_message_chunk")); err != nil {
		t.Fatalf("no chunk: %v", err)
	}
	start := time.Now()
	s.Cancel(sid)
	res, rerr := p.Wait(s.ctx)
	if rerr != nil {
		t.Fatalf("a cancelled prompt must not be an error: %v", rerr)
	}
	if took := time.Since(start); took > hangLimit {
		t.Errorf("cancel → response took %v", took)
	}
	if !strings.Contains(string(res), `"stopReason":"cancelled"`) {
		t.Errorf("result %s, want stopReason cancelled", res)
	}
	// Barrier: a round trip after the response; any straggler update is in by then.
	s.stillUsable(t)
	for _, u := range s.Updates(sid) {
		if u.Seq > p.Seq() {
			t.Errorf("update after the prompt response: %s", u.Raw)
		}
	}
	if got := testkit.TextOf(s.Updates(sid), "agent_message_chunk"); len(got) >= len("tick ")*2000 {
		t.Errorf("the whole text streamed; cancel did not stop it")
	}
	// The session takes a new prompt after the cancelled one.
	if stop, rerr := s.Prompt(s.ctx, sid, "again"); rerr != nil || stop == "" {
		t.Errorf("prompt after cancel: %q %v", stop, rerr)
	}
}

func TestTwoConcurrentSessionsStreamIndependently(t *testing.T) {
	script := scriptFile(t, "parallel-reply")
	s := startCorvid(t, script, testkit.Options{})
	a := s.ready(t, testkit.Zed())
	b := s.NewSession(s.ctx, s.workspace)
	if a == b {
		t.Fatalf("two sessions share id %s", a)
	}
	pa := s.CallAsync("session/prompt", testkit.TextPrompt(a, "one"))
	pb := s.CallAsync("session/prompt", testkit.TextPrompt(b, "two"))
	for _, p := range []*testkit.Pending{pa, pb} {
		if res, rerr := p.Wait(s.ctx); rerr != nil || !strings.Contains(string(res), "end_turn") {
			t.Errorf("prompt: %s %v", res, rerr)
		}
	}
	for _, sid := range []string{a, b} {
		if got := testkit.TextOf(s.Updates(sid), "agent_message_chunk"); got != "parallel reply" {
			t.Errorf("session %s text %q", sid, got)
		}
	}
	if lastSeq(s.Updates(a)) > pa.Seq() || lastSeq(s.Updates(b)) > pb.Seq() {
		t.Error("an update came after its session's prompt response")
	}
}

func TestStdinCloseExitsPromptly(t *testing.T) {
	s := startCorvid(t, text("x", 0), testkit.Options{})
	s.ready(t, testkit.Zed())
	code, took := s.Close()
	if code != 0 || took > hangLimit {
		t.Errorf("exit %d after %v, want 0 without hanging", code, took)
	}
}

func TestStdinCloseMidTurnExitsPromptly(t *testing.T) {
	script := scriptFile(t, "slow-stream")
	s := startCorvid(t, script, testkit.Options{})
	sid := s.ready(t, testkit.Zed())
	s.CallAsync("session/prompt", testkit.TextPrompt(sid, "go"))
	if _, err := s.WaitUpdate(s.ctx, testkit.Kind(sid, "agent_message_chunk")); err != nil {
		t.Fatal(err)
	}
	code, took := s.Close()
	if code != 0 || took > hangLimit {
		t.Errorf("exit %d after %v, want 0 without hanging", code, took)
	}
}
