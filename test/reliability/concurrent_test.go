package reliability

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

const concurrentSessions = 50

// Fifty sessions of one process stream a turn with a shell tool call at the
// same time (--yolo). Every turn ends with end_turn, every session's stream is
// exactly the script's (an update routed to the wrong session would double one
// stream and starve another), and after session/close of all fifty the process
// is back to its baseline.
//
// What "baseline" measures: goroutines are invisible from outside the process
// (and /proc's Threads counts OS threads, which the Go runtime keeps), so the
// test compares what leaks would leave behind instead: the process's open file
// descriptors (/proc/PID/fd: pipes to shells, database handles, sockets) and
// its live descendant processes (shells not reaped or not killed). The baseline
// is taken after one warm-up session was opened, prompted and closed, so the
// store and other lazily opened files are already counted.
func TestFiftyConcurrentSessionsStreamApartAndReleaseEverything(t *testing.T) {
	needProc(t)
	answer := "Fifty sessions, one process, each with its own stream."
	st := newStore(t, map[string]any{"responses": []any{
		map[string]any{"chunkSize": 4, "delayMs": 1, "parts": []any{
			part("thinking", "Run the command."),
			map[string]any{"type": "tool_call", "name": "shell", "input": map[string]any{"command": "echo shell-ran && sleep 0.05"}},
		}},
		map[string]any{"chunkSize": 4, "delayMs": 1, "parts": []any{part("text", answer)}},
	}})
	a := st.start(t, "--yolo")
	pid := a.PID()

	warm := a.newSession(t)
	if stop, rerr := a.Prompt(a.ctx, warm, "warm up"); rerr != nil || stop != "end_turn" {
		t.Fatalf("warm-up prompt: %q %v", stop, rerr)
	}
	a.MustCall(a.ctx, "session/close", map[string]any{"sessionId": warm}, nil)
	var baseFDs []string
	eventually(2*time.Second, func() bool { return len(testkit.Descendants(pid)) == 0 })
	baseFDs = openFDs(pid)
	t.Logf("baseline: %d open fds, %d descendants", len(baseFDs), len(testkit.Descendants(pid)))

	ids := make([]string, concurrentSessions)
	for i := range ids {
		ids[i] = a.newSession(t)
	}
	start := time.Now()
	var wg sync.WaitGroup
	for i, sid := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stop, rerr := a.Prompt(a.ctx, sid, fmt.Sprintf("session %d", i))
			if rerr != nil || stop != "end_turn" {
				t.Errorf("session %d: stop %q, error %v", i, stop, rerr)
			}
		}()
	}
	wg.Wait()
	t.Logf("%d concurrent turns took %v; when they ended the process held %d fds", concurrentSessions, time.Since(start), len(openFDs(pid)))

	known := map[string]bool{warm: true}
	for _, sid := range ids {
		known[sid] = true
	}
	for _, n := range a.Notifications() {
		if n.Method != "session/update" {
			continue
		}
		if s := string(n.Params); !strings.Contains(s, `"sessionId"`) {
			t.Errorf("session/update without a sessionId: %s", shorten(s))
		}
	}
	for i, sid := range ids {
		ups := a.Updates(sid)
		if got := testkit.TextOf(ups, "agent_message_chunk"); got != answer {
			t.Errorf("session %d streamed %q, want %q exactly once", i, shorten(got), answer)
		}
		if got := testkit.TextOf(ups, "agent_thought_chunk"); got != "Run the command." {
			t.Errorf("session %d thought %q", i, got)
		}
		calls := testkit.OfKind(ups, "tool_call")
		if len(calls) != 1 {
			t.Errorf("session %d has %d tool calls, want 1", i, len(calls))
			continue
		}
		var done bool
		for _, u := range testkit.OfKind(ups, "tool_call_update") {
			if u.ToolCallID != calls[0].ToolCallID {
				t.Errorf("session %d got an update of tool call %s, not its own %s", i, u.ToolCallID, calls[0].ToolCallID)
			}
			done = done || u.Status == "completed"
		}
		if !done {
			t.Errorf("session %d: its shell call never completed", i)
		}
	}
	for _, u := range a.Updates("") {
		if !known[u.SessionID] {
			t.Errorf("update %s for unknown session %q", u.SessionUpdate, u.SessionID)
		}
	}

	for _, sid := range ids {
		a.MustCall(a.ctx, "session/close", map[string]any{"sessionId": sid}, nil)
	}
	if !eventually(5*time.Second, func() bool { return len(testkit.Descendants(pid)) == 0 }) {
		t.Errorf("child processes left after closing every session: %v", testkit.Descendants(pid))
	}
	var left []string
	if !eventually(5*time.Second, func() bool { left = extra(baseFDs, openFDs(pid)); return len(left) == 0 }) {
		t.Errorf("after closing every session the process holds %d fds more than its baseline: %v", len(left), left)
	}
	if code, took := a.Close(); code != 0 || took > hangLimit {
		t.Errorf("exit %d after %v on stdin EOF", code, took)
	}
}
