package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// Two processes prompt one session at the same moment, round after round.
// A turn takes its lease from a read and writes it with its first rows
// (store.AcquireTurn), so the two may both start: whatever the timing,
// the turns never overlap in the stored log, a refused prompt streams no
// answer and says another process holds the session, and every prompt
// that was answered is in the log once, followed by its answer.
func TestPromptsFromTwoProcessesAtOnceNeverInterleave(t *testing.T) {
	st := newSharedHome(t, map[string]any{
		"onExhausted": "repeat-last",
		"responses": []any{map[string]any{"chunkSize": 1, "delayMs": 1,
			"parts": []any{map[string]any{"type": "text", "text": "ab", "repeat": 20}}}},
	})
	a := st.start(t, testkit.Minimal())
	b := st.start(t, testkit.Minimal())
	sid := a.NewSession(a.ctx, st.workspace)
	b.load(t, sid)

	var answered []string
	for round := range 12 {
		procs := map[string]*session{"A": a, "B": b}
		pending := map[string]*testkit.Pending{}
		before := map[string]int{}
		for name, p := range procs {
			before[name] = len(p.Updates(sid))
		}
		for _, name := range []string{"A", "B"} {
			pending[name] = procs[name].CallAsync("session/prompt", testkit.TextPrompt(sid, fmt.Sprintf("%s%d", name, round)))
		}
		ok := 0
		for _, name := range []string{"A", "B"} {
			p := procs[name]
			_, rerr := pending[name].Wait(p.ctx)
			// A round trip, so that every update of the turn is read.
			p.MustCall(p.ctx, "session/list", map[string]any{}, nil)
			streamed := 0
			for _, u := range p.Updates(sid)[before[name]:] {
				if u.SessionUpdate == "agent_message_chunk" {
					streamed++
				}
			}
			if rerr != nil {
				if !strings.Contains(strings.ToLower(rerr.Message+" "+string(rerr.Data)), "another corvid process") {
					t.Errorf("round %d: %s's prompt failed with %v, not the cross-process refusal", round, name, rerr)
				}
				if streamed != 0 {
					t.Errorf("round %d: %s's refused prompt streamed %d chunks", round, name, streamed)
				}
				continue
			}
			ok++
			answered = append(answered, fmt.Sprintf("%s%d", name, round))
			if streamed == 0 {
				t.Errorf("round %d: %s's prompt was answered without a chunk", round, name)
			}
		}
		if ok == 0 {
			t.Errorf("round %d: both prompts were refused", round)
		}
	}

	// The log read by a third process: each answered prompt once, each
	// followed by one whole answer, nothing of a refused prompt.
	c := st.start(t, testkit.Minimal())
	var got []string
	for _, u := range testkit.History(c.load(t, sid)) {
		switch u.SessionUpdate {
		case "user_message_chunk":
			got = append(got, u.Content.Text)
		case "agent_message_chunk":
			got = append(got, u.Content.Text)
		}
	}
	answer := strings.Repeat("ab", 20)
	left := map[string]int{}
	for _, p := range answered {
		left[p]++
	}
	for i := 0; i < len(got); i += 2 {
		if left[got[i]] != 1 || i+1 == len(got) || got[i+1] != answer {
			t.Fatalf("stored log (prompt|answer ...) %s\nis not each of the answered prompts %v once, each followed by its whole answer", strings.Join(got, "|"), answered)
		}
		left[got[i]]--
	}
	if len(got) != 2*len(answered) {
		t.Errorf("stored log %s, want the %d answered prompts %v", strings.Join(got, "|"), len(answered), answered)
	}
}
