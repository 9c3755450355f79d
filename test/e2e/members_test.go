package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// Team members and workers as sessions in plain `corvid acp` (docs/serve.md,
// C40): a worker's session id, from the team update, is loaded on the
// connection that runs it while it works, and in a new process after.

// workerText is what the slow worker streams.
func workerText() string {
	var words []string
	for i := range 100 {
		words = append(words, fmt.Sprintf("w-%02d", i))
	}
	return strings.Join(words, " ") + " END"
}

// memberID waits for a team update of sid that gives member name a session.
func (s *session) memberID(t *testing.T, sid, name string) string {
	t.Helper()
	u, err := s.WaitUpdate(s.ctx, func(u testkit.Update) bool {
		if u.SessionID != sid {
			return false
		}
		for _, tu := range teamUpdates([]testkit.Update{u}) {
			if id, _ := membersByName(tu)[name]["sessionId"].(string); id != "" {
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("no team update gave %s a session: %v", name, err)
	}
	id, _ := membersByName(teamUpdates([]testkit.Update{u})[0])[name]["sessionId"].(string)
	return id
}

// TestWorkerSessionLoadsLiveOnStdioAndFromTheStoreAfterwards: the parent
// starts a slow worker and ends its turn; the editor loads the worker's
// session while it streams and gets its whole text once (replay, then
// live); a new `corvid acp` on the same store replays it; a prompt to it
// is refused with -32602 and details.
func TestWorkerSessionLoadsLiveOnStdioAndFromTheStoreAfterwards(t *testing.T) {
	worker := "script:" + testkit.WriteScript(t, map[string]any{"chunkSize": 5, "delayMs": 30, "responses": []any{
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": workerText()}}},
	}})
	parent := map[string]any{"responses": []any{
		map[string]any{"parts": []any{workerCall("t1", "w", "Write the words", worker)}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "dispatched"}}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "the worker is done"}}},
	}}
	home := t.TempDir()
	opts := testkit.Options{Env: []string{"CORVID_HOME=" + home}}
	s := startCorvid(t, parent, opts)
	opts.Dir = s.workspace
	sid := s.ready(t, testkit.Zed())
	s.multitaskOn(t, sid)
	if stop, rerr := s.Prompt(s.ctx, sid, "start a worker"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	mid := s.memberID(t, sid, "w")
	if !strings.HasPrefix(mid, sid+".sub_") {
		t.Fatalf("worker session id %q does not name its root %s", mid, sid)
	}
	if _, err := s.WaitUpdate(s.ctx, func(u testkit.Update) bool {
		return u.SessionID == sid && strings.Contains(u.Content.Text, "w-02")
	}); err != nil {
		t.Fatal("the worker never streamed")
	}
	res, rerr := s.Call(s.ctx, "session/load", map[string]any{"sessionId": mid, "cwd": s.workspace, "mcpServers": []any{}})
	if rerr != nil {
		t.Fatalf("session/load of the worker: %v", rerr)
	}
	if !strings.Contains(string(res), `"status":"running"`) {
		t.Fatalf("load answer %s: want the worker running (loaded mid-run)", res)
	}
	if _, err := s.WaitUpdate(s.ctx, func(u testkit.Update) bool {
		return u.SessionID == mid && strings.Contains(u.Content.Text, "END")
	}); err != nil {
		t.Fatalf("the worker's session never showed its end: %q", testkit.TextOf(s.Updates(mid), "agent_message_chunk"))
	}
	if got := testkit.TextOf(s.Updates(mid), "agent_message_chunk"); got != workerText() {
		t.Fatalf("worker session text %q\nwant %q", got, workerText())
	}
	_, rerr = s.Call(s.ctx, "session/prompt", map[string]any{"sessionId": mid, "prompt": []any{map[string]any{"type": "text", "text": "hi"}}})
	if rerr == nil || rerr.Code != -32602 || !strings.Contains(string(rerr.Data), "details") {
		t.Fatalf("a prompt to the worker's session: %v (want -32602 with details)", rerr)
	}
	if code, _ := s.Close(); code != 0 {
		t.Fatalf("exit %d\n%s", code, s.Stderr())
	}

	s2 := startCorvid(t, parent, opts)
	if _, rerr := s2.Initialize(s2.ctx, testkit.Zed()); rerr != nil {
		t.Fatalf("initialize: %v", rerr)
	}
	if _, rerr := s2.Call(s2.ctx, "session/load", map[string]any{"sessionId": mid, "cwd": s.workspace, "mcpServers": []any{}}); rerr != nil {
		t.Fatalf("session/load of the worker in a new process: %v", rerr)
	}
	if got := testkit.TextOf(s2.Updates(mid), "agent_message_chunk"); got != workerText() {
		t.Fatalf("replayed worker text %q\nwant %q", got, workerText())
	}
	if got := testkit.TextOf(s2.Updates(mid), "user_message_chunk"); got != "Write the words" {
		t.Fatalf("the worker's session opens with user text %q, want its task's prompt", got)
	}
}
