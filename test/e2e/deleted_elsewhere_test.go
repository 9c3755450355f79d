package e2e

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// A session deleted by another process (session/delete over ACP there)
// while this process runs a turn of it: the turn stops, with an error
// that says the session was deleted elsewhere, never end_turn, and the
// tool it was running is stopped with it. Two corvid processes share one
// CORVID_HOME.
func TestSessionDeletedByAnotherProcessEndsTheTurnWithAnError(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("finds processes through /proc")
	}
	marker := fmt.Sprintf("corvid-e2e-deleted-%d-%d", os.Getpid(), time.Now().UnixNano())
	cases := []struct {
		name   string
		script map[string]any
		// started waits until the turn is under way in A; it returns the
		// processes of a tool it runs.
		started func(t *testing.T, a *session, sid string) []int
	}{
		{"while streaming", map[string]any{"responses": []any{map[string]any{"chunkSize": 1, "delayMs": 5,
			"parts": []any{map[string]any{"type": "text", "text": "word ", "repeat": 2000}}}}},
			func(t *testing.T, a *session, sid string) []int {
				if _, err := a.WaitUpdate(a.ctx, testkit.Kind(sid, "agent_message_chunk")); err != nil {
					t.Fatal(err)
				}
				return nil
			}},
		{"while a tool runs", map[string]any{"responses": []any{
			map[string]any{"parts": []any{map[string]any{"type": "tool_call", "name": "shell",
				"input": map[string]any{"command": "sleep 60 && echo " + marker}}}},
			map[string]any{"parts": []any{map[string]any{"type": "text", "text": "finished"}}},
		}},
			func(t *testing.T, a *session, sid string) []int { return waitShell(t, marker) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := newSharedHome(t, c.script)
			// Minimal advertises no terminal: the shell runs inside corvid.
			a := st.start(t, testkit.Minimal(), "--yolo")
			b := st.start(t, testkit.Minimal())
			sid := a.NewSession(a.ctx, st.workspace)
			p := a.CallAsync("session/prompt", testkit.TextPrompt(sid, "go on at length"))
			pids := c.started(t, a, sid)
			b.MustCall(b.ctx, "session/delete", map[string]any{"sessionId": sid}, nil)

			res, rerr := p.Wait(a.ctx)
			if rerr == nil {
				t.Fatalf("the turn of a session deleted in another process answered %s, want an error saying it was deleted", res)
			}
			if rerr.Code != testkit.CodeResourceNotFound || !strings.Contains(strings.ToLower(rerr.Message), "deleted elsewhere") {
				t.Errorf("prompt error %d %q (%s), want -32002 saying the session was deleted elsewhere", rerr.Code, rerr.Message, rerr.Data)
			}
			if len(pids) > 0 {
				testkit.WaitGone(t, "after the session was deleted", pids...)
			}
			// A is still up and says the session is gone.
			if _, rerr := a.Call(a.ctx, "session/load", map[string]any{"sessionId": sid, "cwd": st.workspace, "mcpServers": []any{}}); rerr == nil || rerr.Code != testkit.CodeResourceNotFound {
				t.Errorf("load of the deleted session in A: %v, want -32002", rerr)
			}
		})
	}
}
