package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
)

func TestTenConcurrentSessionsKeepTheirStreamsApart(t *testing.T) {
	script := scriptFile(t, "thinking-then-text")
	s := startCorvid(t, script, testkit.Options{})
	first := s.ready(t, testkit.Zed())
	ids := []string{first}
	for range 9 {
		ids = append(ids, s.NewSession(s.ctx, s.workspace))
	}
	var prompts []*testkit.Pending
	for i, id := range ids {
		prompts = append(prompts, s.CallAsync("session/prompt", testkit.TextPrompt(id, fmt.Sprint("prompt ", i))))
	}
	for i, p := range prompts {
		res, rerr := p.Wait(s.ctx)
		if rerr != nil || !strings.Contains(string(res), "end_turn") {
			t.Errorf("session %d: %s %v", i, res, rerr)
			continue
		}
		ups := s.Updates(ids[i])
		if got := testkit.TextOf(ups, "agent_message_chunk"); got != "each session gets this" {
			t.Errorf("session %d text %q", i, got)
		}
		if got := testkit.TextOf(ups, "agent_thought_chunk"); got != "thinking hard" {
			t.Errorf("session %d thought %q", i, got)
		}
		if lastSeq(ups) > p.Seq() {
			t.Errorf("session %d: update after its prompt response", i)
		}
	}
}

// ARCHITECTURE.md §2: a prompt that collides with a live, uncancelled turn is refused.
func TestPromptDuringALiveTurnIsRefused(t *testing.T) {
	script := scriptFile(t, "busy")
	s := startCorvid(t, script, testkit.Options{})
	sid := s.ready(t, testkit.Zed())
	first := s.CallAsync("session/prompt", testkit.TextPrompt(sid, "one"))
	if _, err := s.WaitUpdate(s.ctx, testkit.Kind(sid, "agent_message_chunk")); err != nil {
		t.Fatal(err)
	}
	if _, rerr := s.CallAsync("session/prompt", testkit.TextPrompt(sid, "two")).Wait(s.ctx); rerr == nil {
		t.Error("a second prompt during a live turn was accepted")
	}
	s.Cancel(sid)
	if res, rerr := first.Wait(s.ctx); rerr != nil || !strings.Contains(string(res), "cancelled") {
		t.Errorf("first prompt: %s %v", res, rerr)
	}
}
