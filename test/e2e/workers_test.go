package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// Detached workers and drain turns (multitask, C64–C74; docs/subagents.md),
// through the built binary. A worker is a task call with background: true;
// its script is its own model, as a sub-agent's is.

// workerCall is a script part: a task call that starts a detached worker.
func workerCall(id, name, prompt, model string) map[string]any {
	c := taskCall(id, name, "work in the background", prompt, model)
	c["input"].(map[string]any)["background"] = true
	return c
}

// multitaskOn turns the session's multitask overlay on.
func (s *session) multitaskOn(t *testing.T, sid string) {
	t.Helper()
	if _, rerr := s.Call(s.ctx, "session/set_config_option", map[string]any{"sessionId": sid, "configId": "multitask", "type": "boolean", "value": true}); rerr != nil {
		t.Fatalf("set multitask: %v", rerr)
	}
}

// drainFrames are a drain turn's opener, content and closer.
type drainFrames struct {
	rid     string
	opener  testkit.Update
	content []testkit.Update
	closer  testkit.Update
}

// isOpener reports whether u opens a drain turn.
func isOpener(u testkit.Update) bool {
	return u.SessionUpdate == "session_info_update" && meta(u)["codebuddy.ai/unsolicitedTurn"] != nil
}

func isCloser(u testkit.Update) bool {
	return u.SessionUpdate == "session_info_update" && meta(u)["codebuddy.ai/sessionEnd"] != nil
}

// drains finds the drain turns among updates.
func drains(ups []testkit.Update) []drainFrames {
	var out []drainFrames
	var cur *drainFrames
	for _, u := range ups {
		switch {
		case isOpener(u):
			ut, _ := meta(u)["codebuddy.ai/unsolicitedTurn"].(map[string]any)
			rid, _ := ut["requestId"].(string)
			out = append(out, drainFrames{rid: rid, opener: u})
			cur = &out[len(out)-1]
		case cur != nil && isCloser(u):
			cur.closer = u
			cur = nil
		case cur != nil:
			cur.content = append(cur.content, u)
		}
	}
	return out
}

// The seed's multitask-worker-wakeup scenario, with C72–C74: the parent
// starts a worker and ends its turn; the worker's question reaches the
// editor as the parent session's session/request_permission and is only
// answered after the parent's prompt has its end_turn answer; the worker
// then finishes and exactly one drain turn runs, opened and closed with the
// right _meta, its content tagged with its requestId.
func TestWorkerOutlivesTurnAsksAfterItAndWakesOneDrainTurn(t *testing.T) {
	worker := childModel(t,
		map[string]any{"parts": []any{map[string]any{"type": "tool_call", "id": "w1", "name": "write", "input": map[string]any{"path": "notes.txt", "content": "from the worker\n"}}}},
		textResponse("worker done: notes.txt written", 3, 2))
	parent := map[string]any{"responses": []any{
		map[string]any{"parts": []any{workerCall("t1", "w", "Write notes.txt", worker)}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "dispatched"}}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "the worker wrote notes.txt"}}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "second answer"}}},
	}}
	turnEnded := make(chan struct{})
	home := t.TempDir()
	opts := testkit.Options{Dialect: "codebuddy", Env: []string{"CORVID_HOME=" + home}, Permission: func(ctx context.Context, req testkit.PermissionRequest) (testkit.PermissionOutcome, error) {
		select {
		case <-turnEnded:
			return testkit.PermissionOutcome{OptionID: "allow_once"}, nil
		case <-ctx.Done():
			return testkit.PermissionOutcome{Cancelled: true}, nil
		}
	}}
	s := startCorvid(t, parent, opts, "--compat", "codebuddy")
	opts.Dir = s.workspace
	sid := s.ready(t, testkit.Zed())
	s.multitaskOn(t, sid)

	stop, rerr := s.Prompt(s.ctx, sid, "start a worker")
	if rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	ended := lastSeq(s.Updates(sid))
	for _, u := range s.Updates(sid) {
		if u.ToolCallID == "t1" && u.Status == "completed" {
			if len(u.ToolContent) != 1 || !strings.Contains(u.ToolContent[0].Content.Text, "Started background worker w") {
				t.Errorf("the worker's task call completed with %+v, want the started message", u.ToolContent)
			}
		}
	}
	// The question is open across the end of the parent's turn (C73, C74).
	if _, err := s.WaitPermission(s.ctx); err != nil {
		t.Fatalf("the worker's question never came: %v", err)
	}
	close(turnEnded)

	closer, err := s.WaitUpdate(s.ctx, isCloser)
	if err != nil {
		t.Fatalf("no drain turn closed: %v\n%s", err, s.TranscriptString())
	}
	perms := s.Permissions()
	if len(perms) != 1 || perms[0].Request.SessionID != sid || !strings.HasPrefix(perms[0].Request.Title, "[w] ") {
		t.Fatalf("permission requests %+v: want one, from worker w, through the parent session", perms)
	}
	if b, err := os.ReadFile(filepath.Join(s.workspace, "notes.txt")); err != nil || string(b) != "from the worker\n" {
		t.Errorf("notes.txt = %q, %v: the answer given after the turn ended did not let the write run", b, err)
	}

	// One more prompt: it runs as usual, and no second drain turn came.
	if stop, rerr := s.Prompt(s.ctx, sid, "and now?"); rerr != nil || stop != "end_turn" {
		t.Fatalf("second prompt: %q %v", stop, rerr)
	}
	ups := s.Updates(sid)
	ds := drains(ups)
	if len(ds) != 1 {
		t.Fatalf("%d drain turns, want exactly 1\n%s", len(ds), s.TranscriptString())
	}
	d := ds[0]
	if d.opener.Seq <= ended || d.closer.Seq != closer.Seq {
		t.Errorf("drain turn at %d..%d, the parent's turn ended at %d", d.opener.Seq, d.closer.Seq, ended)
	}
	om := meta(d.opener)
	if ut, _ := om["codebuddy.ai/unsolicitedTurn"].(map[string]any); len(d.rid) != 32 || ut["reason"] != "background_drain" || om["codebuddy.ai/requestId"] != d.rid {
		t.Errorf("opener _meta %v: want unsolicitedTurn {requestId (32 hex), reason background_drain} and the same codebuddy.ai/requestId", om)
	}
	cm := meta(d.closer)
	if se, _ := cm["codebuddy.ai/sessionEnd"].(map[string]any); se["requestId"] != d.rid || se["stopReason"] != "end_turn" || cm["codebuddy.ai/requestId"] != d.rid {
		t.Errorf("closer _meta %v: want sessionEnd {requestId, stopReason end_turn} and the requestId", cm)
	}
	var drainText string
	for _, u := range d.content {
		if memberOf(u) != "" {
			continue // a worker frame, emitted meanwhile
		}
		if meta(u)["codebuddy.ai/requestId"] != d.rid {
			t.Errorf("drain turn frame without its requestId: %s", u.Raw)
		}
		if u.SessionUpdate == "agent_message_chunk" {
			drainText += u.Content.Text
		}
		if u.SessionUpdate == "user_message_chunk" {
			t.Errorf("the drain turn has a user message: %s", u.Raw)
		}
	}
	if drainText != "the worker wrote notes.txt" {
		t.Errorf("drain turn text %q", drainText)
	}
	// Under --compat codebuddy the dialect's session_end follows the closer.
	var sessionEnds int
	for _, l := range s.Transcript() {
		if l.Dir == testkit.FromAgent && l.Seq > d.closer.Seq && strings.Contains(l.Text, `"session_end"`) && strings.Contains(l.Text, d.rid) {
			sessionEnds++
		}
	}
	if sessionEnds != 1 {
		t.Errorf("%d session_end frames after the drain turn's closer carry its requestId, want 1", sessionEnds)
	}

	// The worker's frames after the parent's turn are tagged and stored like
	// a sub-agent's.
	var workerAfter bool
	for _, u := range ups {
		if u.Seq > ended && memberOf(u) == "w" && u.SessionUpdate == "agent_message_chunk" {
			workerAfter = true
		}
		if memberOf(u) == "w" {
			// It belongs to no turn: no turn id, a background flag.
			m := meta(u)
			if sub, _ := m["corvid.dev/subagent"].(map[string]any); sub["background"] != true || sub["parentToolCallId"] != "t1" {
				t.Errorf("worker frame corvid.dev/subagent %v, want background true and parentToolCallId t1", sub)
			}
			if m["codebuddy.ai/conversationRequestId"] != nil || m["codebuddy.ai/requestId"] != nil {
				t.Errorf("worker frame tagged with a turn: %s", u.Raw)
			}
		}
	}
	if !workerAfter {
		t.Error("no tagged worker message after the parent's turn ended")
	}
	if got := testkit.TextOf(ups, "agent_message_chunk"); !strings.HasSuffix(got, "second answer") {
		t.Errorf("text %q", got)
	}

	// Stored: a load in a new process replays the drain turn, opener,
	// tagged text and closer, and no user message for it.
	if code, _ := s.Close(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	s2 := startCorvid(t, parent, opts)
	if _, rerr := s2.Initialize(s2.ctx, testkit.Zed()); rerr != nil {
		t.Fatalf("initialize: %v", rerr)
	}
	if _, rerr := s2.Call(s2.ctx, "session/load", map[string]any{"sessionId": sid, "cwd": s.workspace, "mcpServers": []any{}}); rerr != nil {
		t.Fatalf("session/load: %v", rerr)
	}
	rds := drains(s2.Updates(sid))
	if len(rds) != 1 || rds[0].rid != d.rid || rds[0].closer.Seq == 0 {
		t.Fatalf("replayed drain turns %+v, want the one with requestId %s, closed", rds, d.rid)
	}
	var replayed string
	for _, u := range rds[0].content {
		if u.SessionUpdate == "agent_message_chunk" && memberOf(u) == "" && meta(u)["codebuddy.ai/requestId"] == d.rid {
			replayed += u.Content.Text
		}
		if u.SessionUpdate == "user_message_chunk" {
			t.Errorf("replayed drain turn has a user message: %s", u.Raw)
		}
	}
	if replayed != "the worker wrote notes.txt" {
		t.Errorf("replayed drain text tagged with its requestId: %q", replayed)
	}
}

// A prompt that arrives during a drain turn waits for it: it is not
// refused as busy, and its answer and updates come after the closer.
func TestPromptDuringDrainTurnWaitsForIt(t *testing.T) {
	worker := childModel(t, textResponse("worker answer", 1, 1))
	parent := map[string]any{"responses": []any{
		map[string]any{"parts": []any{workerCall("t1", "w", "say something", worker)}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "dispatched"}}},
		map[string]any{"chunkSize": 1, "delayMs": 15, "parts": []any{map[string]any{"type": "text", "text": "draining slowly", "repeat": 4}}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "after the drain"}}},
	}}
	s := startCorvid(t, parent, testkit.Options{})
	sid := s.ready(t, testkit.Zed())
	s.multitaskOn(t, sid)
	if stop, rerr := s.Prompt(s.ctx, sid, "start a worker"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	if _, err := s.WaitUpdate(s.ctx, isOpener); err != nil {
		t.Fatalf("no drain turn opened: %v", err)
	}
	p := s.CallAsync("session/prompt", testkit.TextPrompt(sid, "hello during the drain"))
	raw, rerr := p.Wait(s.ctx)
	if rerr != nil || !strings.Contains(string(raw), `"end_turn"`) {
		t.Fatalf("prompt during the drain turn: %s %v, want it to wait and end_turn", raw, rerr)
	}
	ups := s.Updates(sid)
	ds := drains(ups)
	if len(ds) != 1 || ds[0].closer.Seq == 0 {
		t.Fatalf("drain turns %d (want 1, closed)", len(ds))
	}
	var respSeq int
	for _, l := range s.Transcript() {
		if l.Dir == testkit.FromAgent && strings.Contains(l.Text, `"stopReason":"end_turn"`) && !strings.Contains(l.Text, "session/update") {
			respSeq = l.Seq
		}
	}
	if respSeq < ds[0].closer.Seq {
		t.Errorf("the waiting prompt answered at %d, before the drain turn closed at %d", respSeq, ds[0].closer.Seq)
	}
	for _, u := range ups {
		if u.SessionUpdate == "agent_message_chunk" && strings.Contains(u.Content.Text, "after the drain") && u.Seq < ds[0].closer.Seq {
			t.Errorf("the waiting prompt's text came before the drain turn closed")
		}
	}
	if got := testkit.TextOf(ups, "agent_message_chunk"); !strings.HasSuffix(got, "draining slowlydraining slowlydraining slowlydraining slowlyafter the drain") {
		t.Errorf("text %q", got)
	}
}

// Without the multitask overlay a background task is refused with a
// reason, and nothing runs.
func TestWorkerNeedsMultitask(t *testing.T) {
	worker := childModel(t, textResponse("never", 1, 1))
	parent := map[string]any{"responses": []any{
		map[string]any{"parts": []any{workerCall("t1", "w", "say something", worker)}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "ok"}}},
	}}
	s := startCorvid(t, parent, testkit.Options{})
	sid := s.ready(t, testkit.Zed())
	if stop, rerr := s.Prompt(s.ctx, sid, "start a worker"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	var failed string
	for _, u := range s.Updates(sid) {
		if u.ToolCallID == "t1" && u.Status == "failed" && len(u.ToolContent) > 0 {
			failed = u.ToolContent[0].Content.Text
		}
		if memberOf(u) == "w" {
			t.Errorf("the worker ran: %s", u.Raw)
		}
	}
	if !strings.Contains(failed, "multitask") {
		t.Errorf("background task without multitask: failure %q, want the reason", failed)
	}
}

// A worker still running when the session closes (stdin EOF) is stopped,
// its open question ends, and it is recorded as interrupted: a load in a
// new process shows the note and the member's status.
func TestWorkerRunningAtExitIsRecordedInterrupted(t *testing.T) {
	home := t.TempDir()
	worker := childModel(t,
		map[string]any{"parts": []any{map[string]any{"type": "tool_call", "id": "w1", "name": "write", "input": map[string]any{"path": "never.txt", "content": "x"}}}},
		textResponse("not reached", 1, 1))
	parent := map[string]any{"responses": []any{
		map[string]any{"parts": []any{workerCall("t1", "w", "write never.txt", worker)}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "dispatched"}}},
	}}
	opts := testkit.Options{Env: []string{"CORVID_HOME=" + home}, Permission: func(ctx context.Context, _ testkit.PermissionRequest) (testkit.PermissionOutcome, error) {
		<-ctx.Done() // never answered
		return testkit.PermissionOutcome{Cancelled: true}, nil
	}}
	s := startCorvid(t, parent, opts)
	opts.Dir = s.workspace
	sid := s.ready(t, testkit.Zed())
	s.multitaskOn(t, sid)
	if stop, rerr := s.Prompt(s.ctx, sid, "start a worker"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	if _, err := s.WaitPermission(s.ctx); err != nil {
		t.Fatalf("the worker's question never came: %v", err)
	}
	if code, _ := s.Close(); code != 0 {
		t.Fatalf("exit %d\n%s", code, s.Stderr())
	}
	if _, err := os.Stat(filepath.Join(s.workspace, "never.txt")); err == nil {
		t.Error("the worker's unanswered write ran")
	}

	s2 := startCorvid(t, parent, opts)
	if _, rerr := s2.Initialize(s2.ctx, testkit.Zed()); rerr != nil {
		t.Fatalf("initialize: %v", rerr)
	}
	if _, rerr := s2.Call(s2.ctx, "session/load", map[string]any{"sessionId": sid, "cwd": s.workspace, "mcpServers": []any{}}); rerr != nil {
		t.Fatalf("session/load: %v", rerr)
	}
	ups := s2.Updates(sid)
	if got := testkit.TextOf(ups, "agent_message_chunk"); !strings.Contains(got, "background worker w (id "+sid+".sub_") || !strings.Contains(got, "was interrupted") {
		t.Errorf("replayed text %q: want the stored note that worker w was interrupted", got)
	}
	tus := teamUpdates(ups)
	if len(tus) == 0 {
		t.Fatal("no team status after load")
	}
	if ms := membersByName(tus[len(tus)-1]); ms["w"]["status"] != "interrupted" {
		t.Errorf("member w after load: %v, want interrupted", ms["w"])
	}
}

// A worker's question stays open across turns until the worker is stopped
// (the team tool's stop, here at the user's request in a later prompt):
// the stop withdraws the question ($/cancel_request), the member ends
// cancelled, its write never runs, and no drain turn follows.
func TestStoppingAWorkerWithdrawsItsQuestion(t *testing.T) {
	worker := childModel(t,
		map[string]any{"parts": []any{map[string]any{"type": "tool_call", "id": "w1", "name": "write", "input": map[string]any{"path": "never.txt", "content": "x"}}}},
		textResponse("not reached", 1, 1))
	parent := map[string]any{"responses": []any{
		map[string]any{"parts": []any{workerCall("t1", "w", "write never.txt", worker)}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "dispatched"}}},
		map[string]any{"parts": []any{map[string]any{"type": "tool_call", "id": "s1", "name": "team", "input": map[string]any{"action": "stop", "name": "w"}}}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "stopped it"}}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "third"}}},
	}}
	withdrawn := make(chan struct{})
	opts := testkit.Options{Permission: func(ctx context.Context, _ testkit.PermissionRequest) (testkit.PermissionOutcome, error) {
		<-ctx.Done()
		close(withdrawn)
		return testkit.PermissionOutcome{Cancelled: true}, nil
	}}
	s := startCorvid(t, parent, opts)
	sid := s.ready(t, testkit.Zed())
	s.multitaskOn(t, sid)
	if stop, rerr := s.Prompt(s.ctx, sid, "start a worker"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	if _, err := s.WaitPermission(s.ctx); err != nil {
		t.Fatalf("the worker's question never came: %v", err)
	}
	if stop, rerr := s.Prompt(s.ctx, sid, "stop the worker"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	select {
	case <-withdrawn:
	case <-s.ctx.Done():
		t.Fatal("the stopped worker's question was never withdrawn")
	}
	if _, err := s.WaitUpdate(s.ctx, func(u testkit.Update) bool {
		tus := teamUpdates([]testkit.Update{u})
		return len(tus) == 1 && membersByName(tus[0])["w"]["status"] == "cancelled"
	}); err != nil {
		t.Fatalf("member w never ended cancelled: %v", err)
	}
	if stop, rerr := s.Prompt(s.ctx, sid, "anything else?"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	ups := s.Updates(sid)
	if n := len(drains(ups)); n != 0 {
		t.Errorf("%d drain turns after a stopped worker, want none", n)
	}
	for _, u := range ups {
		if u.ToolCallID == "s1" && u.Status == "failed" {
			t.Errorf("team stop failed: %s", u.Raw)
		}
	}
	if _, err := os.Stat(filepath.Join(s.workspace, "never.txt")); err == nil {
		t.Error("the stopped worker's write ran")
	}
}

// Two workers that finish while the parent's turn still runs make one
// batch: after the turn's answer, exactly one drain turn runs for both.
func TestWorkersFinishedDuringATurnGetOneDrainTurn(t *testing.T) {
	a := childModel(t, textResponse("a's answer", 1, 1))
	b := childModel(t, textResponse("b's answer", 1, 1))
	parent := map[string]any{"responses": []any{
		map[string]any{"parts": []any{workerCall("t1", "a", "say a", a), workerCall("t2", "b", "say b", b)}},
		map[string]any{"parts": []any{map[string]any{"type": "tool_call", "id": "p1", "name": "write", "input": map[string]any{"path": "parent.txt", "content": "p"}}}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "parent done"}}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "both reported"}}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "next"}}},
	}}
	bothDone := make(chan struct{})
	opts := testkit.Options{Permission: func(ctx context.Context, _ testkit.PermissionRequest) (testkit.PermissionOutcome, error) {
		select { // the parent's write: held until both workers finished
		case <-bothDone:
			return testkit.PermissionOutcome{OptionID: "allow_once"}, nil
		case <-ctx.Done():
			return testkit.PermissionOutcome{Cancelled: true}, nil
		}
	}}
	s := startCorvid(t, parent, opts)
	sid := s.ready(t, testkit.Zed())
	s.multitaskOn(t, sid)
	p := s.CallAsync("session/prompt", testkit.TextPrompt(sid, "start two workers"))
	if _, err := s.WaitUpdate(s.ctx, func(u testkit.Update) bool {
		tus := teamUpdates([]testkit.Update{u})
		if len(tus) != 1 {
			return false
		}
		ms := membersByName(tus[0])
		return ms["a"]["status"] == "completed" && ms["b"]["status"] == "completed"
	}); err != nil {
		t.Fatalf("the workers never both finished: %v", err)
	}
	close(bothDone)
	if raw, rerr := p.Wait(s.ctx); rerr != nil || !strings.Contains(string(raw), `"end_turn"`) {
		t.Fatalf("prompt: %s %v", raw, rerr)
	}
	if _, err := s.WaitUpdate(s.ctx, isCloser); err != nil {
		t.Fatalf("no drain turn: %v", err)
	}
	if stop, rerr := s.Prompt(s.ctx, sid, "next?"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	ups := s.Updates(sid)
	ds := drains(ups)
	if len(ds) != 1 {
		t.Fatalf("%d drain turns for one batch of two workers, want 1", len(ds))
	}
	var text string
	for _, u := range ds[0].content {
		if u.SessionUpdate == "agent_message_chunk" && memberOf(u) == "" {
			text += u.Content.Text
		}
	}
	if text != "both reported" {
		t.Errorf("drain turn text %q", text)
	}
	if got := testkit.TextOf(ups, "agent_message_chunk"); !strings.HasSuffix(got, "parent doneboth reportednext") {
		t.Errorf("text %q: want the parent's answer, the drain turn's, then the next prompt's", got)
	}
}

// A worker's ask_user question (CodeBuddy's AskUserQuestion, C73) goes to
// the parent session's session/request_permission after the parent's turn
// ended, about the worker's tool call as the editor saw it and titled with
// its name; the answer reaches the worker, whose answer the drain turn gets.
func TestWorkerAskUserAfterTheTurnEnded(t *testing.T) {
	worker := childModel(t,
		map[string]any{"parts": []any{map[string]any{"type": "tool_call", "id": "q1", "name": "ask_user", "input": map[string]any{"questions": []any{dbQuestion}}}}},
		textResponse("the user picked a database", 1, 1))
	parent := map[string]any{"responses": []any{
		map[string]any{"parts": []any{workerCall("t1", "w", "ask about the database", worker)}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "dispatched"}}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "noted"}}},
	}}
	turnEnded := make(chan struct{})
	opts := testkit.Options{Permission: func(ctx context.Context, req testkit.PermissionRequest) (testkit.PermissionOutcome, error) {
		select {
		case <-turnEnded:
			return testkit.PermissionOutcome{OptionID: req.Options[1].OptionID}, nil // SQLite
		case <-ctx.Done():
			return testkit.PermissionOutcome{Cancelled: true}, nil
		}
	}}
	s := startCorvid(t, parent, opts)
	sid := s.ready(t, testkit.Zed())
	s.multitaskOn(t, sid)
	if stop, rerr := s.Prompt(s.ctx, sid, "start a worker"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	q, err := s.WaitPermission(s.ctx)
	if err != nil {
		t.Fatalf("the worker's question never came: %v", err)
	}
	close(turnEnded)
	if _, err := s.WaitUpdate(s.ctx, isCloser); err != nil {
		t.Fatalf("no drain turn: %v", err)
	}
	if q.SessionID != sid || !strings.HasPrefix(q.Title, "[w] ") {
		t.Errorf("question session %q title %q: want the parent session, titled [w]", q.SessionID, q.Title)
	}
	var askCall *testkit.Update
	ups := s.Updates(sid)
	for i, u := range ups {
		if u.SessionUpdate == "tool_call" && memberOf(u) == "w" && strings.HasSuffix(u.ToolCallID, "/q1") {
			askCall = &ups[i]
		}
	}
	if askCall == nil || q.ToolCallID != askCall.ToolCallID {
		t.Errorf("question about %q, the worker's ask_user call was %+v", q.ToolCallID, askCall)
	}
	var answered bool
	for _, u := range ups {
		if askCall != nil && u.ToolCallID == askCall.ToolCallID && u.Status == "completed" && strings.Contains(string(u.RawOutput), "SQLite") {
			answered = true
		}
	}
	if !answered {
		t.Errorf("the worker's ask_user call did not complete with the answer\n%s", s.TranscriptString())
	}
}
