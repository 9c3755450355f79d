package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

const (
	cancelSessions  = 4
	cancelPerSesson = 25 // 100 trials in all
)

// A session/cancel at a random point of a turn (0–30 ms after the prompt:
// while it streams text, while the shell tool starts, while `sleep 30` runs)
// always ends the prompt with cancelled or end_turn within 5 s, never an
// error; no session/update of the session follows the prompt response; and
// no process of the shell command survives. Four corvid processes (one
// session each, each with its own marker) run their trials at the same time.
func TestCancelAtRandomPointsEndsCleanlyAndKillsTheShell(t *testing.T) {
	needProc(t)
	rng := seeded(t)
	var mu sync.Mutex
	outcomes := map[string]int{}
	var wg sync.WaitGroup
	for s := range cancelSessions {
		// The sleep's argument is the marker: the shell's and sleep's command
		// lines carry it, and no other process's does.
		marker := fmt.Sprintf("30.%09d", rng.IntN(1e9))
		var delays []time.Duration
		for range cancelPerSesson {
			delays = append(delays, time.Duration(rng.IntN(31))*time.Millisecond)
		}
		st := newStore(t, map[string]any{"onExhausted": "repeat-last", "responses": []any{
			map[string]any{"chunkSize": 2, "delayMs": 1, "parts": []any{
				part("text", "Starting the long command now."),
				map[string]any{"type": "tool_call", "name": "shell", "input": map[string]any{"command": "sleep " + marker + " && echo finished"}},
			}},
		}})
		a := st.start(t, "--yolo")
		sid := a.newSession(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, d := range delays {
				stop := cancelTrial(t, a, sid, d, marker)
				mu.Lock()
				outcomes[stop]++
				mu.Unlock()
				if t.Failed() {
					t.Errorf("session %d trial %d (cancel after %v) failed; the seed above replays it", s, i, d)
					return
				}
			}
			if code, took := a.Close(); code != 0 || took > hangLimit {
				t.Errorf("session %d: exit %d after %v on stdin EOF", s, code, took)
			}
		}()
	}
	wg.Wait()
	t.Logf("outcomes of %d cancels: %v", cancelSessions*cancelPerSesson, outcomes)
}

// cancelTrial prompts sid, cancels after d and checks the outcome. It returns
// the stop reason (or "error") and whether the shell had started.
func cancelTrial(t *testing.T, a *agent, sid string, d time.Duration, marker string) string {
	ctx, cancel := context.WithTimeout(a.ctx, 5*time.Second)
	defer cancel()
	before := len(a.Updates(sid))
	p := a.CallAsync("session/prompt", testkit.TextPrompt(sid, "run the long command"))
	time.Sleep(d)
	a.Cancel(sid)
	res, rerr := p.Wait(ctx)
	if rerr != nil {
		t.Errorf("cancel after %v: prompt answered error %v, want a stop reason", d, rerr)
		return "error"
	}
	var out struct {
		StopReason string `json:"stopReason"`
	}
	_ = json.Unmarshal(res, &out)
	if out.StopReason != "cancelled" && out.StopReason != "end_turn" {
		t.Errorf("cancel after %v: stop reason %q, want cancelled or end_turn", d, out.StopReason)
	}
	// ARCHITECTURE.md §7: child processes are gone by the response; give the
	// kernel a moment to reap them.
	testkit.WaitGone(t, fmt.Sprintf("cancel after %v: the shell command of the cancelled turn", d), testkit.ProcessesMatching(marker)...)
	// A round trip, then no update of the session may follow the response.
	a.MustCall(ctx, "session/list", map[string]any{"cwd": a.st.workspace}, nil)
	for _, u := range a.Updates(sid) {
		if u.Seq > p.Seq() {
			t.Errorf("cancel after %v: %s of session %s arrived after the prompt response", d, u.SessionUpdate, sid)
		}
	}
	stage := "while streaming text"
	for _, u := range a.Updates(sid)[before:] {
		if u.SessionUpdate == "tool_call_update" && u.Status == "in_progress" {
			stage = "while the shell ran"
		}
	}
	return out.StopReason + " " + stage
}
