package e2e

import (
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// ARCHITECTURE.md §3 frames: no content.text over 64 KiB and no line of 1 MiB or more.
func TestLargeOutputIsSplitIntoSmallFrames(t *testing.T) {
	script := scriptFile(t, "three-megabytes")
	s := startCorvid(t, script, testkit.Options{})
	sid := s.ready(t, testkit.Zed())
	if stop, rerr := s.Prompt(s.ctx, sid, "big"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	if got := testkit.TextOf(s.Updates(sid), "agent_message_chunk"); got != strings.Repeat("0123456789abcdef", 200000) {
		t.Errorf("text arrived with %d bytes, want %d", len(got), 16*200000)
	}
	for _, u := range s.Updates(sid) {
		if len(u.Content.Text) > 64<<10 {
			t.Errorf("a chunk carries %d bytes of text (max 64 KiB)", len(u.Content.Text))
			break
		}
	}
	for _, l := range s.Transcript() {
		if l.Dir == testkit.FromAgent && len(l.Text) >= 1<<20 {
			t.Errorf("a %d-byte stdout line (Gas City drops lines of 1 MiB)", len(l.Text))
			break
		}
	}
}

func TestHugeInboundPromptIsAccepted(t *testing.T) {
	s := startCorvid(t, text("got it", 0), testkit.Options{})
	sid := s.ready(t, testkit.Zed())
	if stop, rerr := s.Prompt(s.ctx, sid, strings.Repeat("y", 8<<20)); rerr != nil || stop != "end_turn" {
		t.Fatalf("8 MiB prompt: %q %v", stop, rerr)
	}
}

// Zed cancels and at once sends the next prompt: that prompt waits for the cancelled
// turn to wind down and then runs (ARCHITECTURE.md §2), instead of being refused.
func TestCancelThenImmediateRePromptRuns(t *testing.T) {
	script := scriptFile(t, "slow-repeat-last")
	s := startCorvid(t, script, testkit.Options{})
	sid := s.ready(t, testkit.Zed())
	first := s.CallAsync("session/prompt", testkit.TextPrompt(sid, "one"))
	if _, err := s.WaitUpdate(s.ctx, testkit.Kind(sid, "agent_message_chunk")); err != nil {
		t.Fatal(err)
	}
	s.Cancel(sid)
	second := s.CallAsync("session/prompt", testkit.TextPrompt(sid, "two"))
	if res, rerr := first.Wait(s.ctx); rerr != nil || !strings.Contains(string(res), "cancelled") {
		t.Errorf("first prompt: %s %v, want cancelled", res, rerr)
	}
	if _, err := s.WaitUpdate(s.ctx, func(u testkit.Update) bool { return u.SessionID == sid && u.Seq > first.Seq() }); err != nil {
		t.Fatalf("the second prompt streamed nothing: %v", err)
	}
	s.Cancel(sid)
	if res, rerr := second.Wait(s.ctx); rerr != nil {
		t.Errorf("second prompt refused: %v", rerr)
	} else if !strings.Contains(string(res), "stopReason") {
		t.Errorf("second prompt: %s", res)
	}
}
