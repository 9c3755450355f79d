package security

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// vmRSSMiB is a process's resident set now, in MiB.
func vmRSSMiB(t *testing.T, pid int) float64 {
	t.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return float64(kb) / 1024
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// Memory bombs in a prompt (issue 29): a prompt over 16 MiB, or over 1,024
// content blocks, is refused with -32602 "Prompt too large" whose details
// name the limit, before it is decoded; the process stays up, gives the
// memory back, and the session goes on working.
func TestOversizedPromptsAreRefusedAndTheSessionGoesOn(t *testing.T) {
	c := rtStart(t, rtScript(t, rtText("still here")), testkit.Options{})
	sid := c.NewSession(c.ctx, c.workspace)
	idle := vmRSSMiB(t, c.PID())

	many := make([]any, 1025)
	for i := range many {
		many[i] = map[string]any{"type": "text", "text": "x"}
	}
	for _, tc := range []struct {
		name   string
		prompt []any
		limit  string
	}{
		{"one 17 MiB text", []any{map[string]any{"type": "text", "text": strings.Repeat("a", 17<<20)}}, "16 MiB"},
		{"1,025 blocks", many, "at most 1024"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, rerr := c.Call(c.ctx, "session/prompt", map[string]any{"sessionId": sid, "prompt": tc.prompt})
			if rerr == nil {
				t.Fatal("the prompt was accepted")
			}
			if rerr.Code != testkit.CodeInvalidParams || rerr.Message != "Prompt too large" || !strings.Contains(string(rerr.Data), tc.limit) {
				t.Errorf("error %d %q %s, want -32602 \"Prompt too large\" with details naming %q", rerr.Code, rerr.Message, rerr.Data, tc.limit)
			}
		})
	}
	// A 17 MiB line was read and refused: the process gave it back.
	if rss := vmRSSMiB(t, c.PID()); rss > idle+24 {
		t.Errorf("RSS %.0f MiB after the refused prompts, %.0f MiB before them: the memory was kept", rss, idle)
	}
	// A prompt under the limit runs; once answered, the process keeps
	// about the prompt (the model context holds it), not its copies.
	big := strings.Repeat("b", 12<<20)
	if _, rerr := c.Call(c.ctx, "session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": big}}}); rerr != nil {
		t.Fatalf("a 12 MiB prompt: %v", rerr)
	}
	if rss := vmRSSMiB(t, c.PID()); rss > idle+3*12 {
		t.Errorf("RSS %.0f MiB once a 12 MiB prompt was answered, %.0f MiB before: more than its size kept", rss, idle)
	}
	stop, rerr := c.Prompt(c.ctx, sid, "are you there?")
	if rerr != nil || stop != "end_turn" {
		t.Fatalf("the next prompt: %q %v", stop, rerr)
	}
	if got := testkit.TextOf(c.Updates(sid), "agent_message_chunk"); !strings.Contains(got, "still here") {
		t.Errorf("the next prompt's answer %q", got)
	}
}
