package sdkclient

import (
	"context"
	"errors"
	"github.com/corvid-agent/corvid/internal/testkit"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// Scenarios of how editors really end and chain turns: Zed cancels and re-prompts at
// once, clients cancel while a permission question is open, and editors quit mid-turn.

func TestCancelThenImmediatePromptRuns(t *testing.T) {
	const second = "Second turn, answered."
	script := testkit.WriteScript(t, map[string]any{
		"chunkSize": 4, "delayMs": 20, "onExhausted": "repeat-last",
		"responses": []any{
			map[string]any{"parts": []any{map[string]any{"type": "text", "text": "slow answer ", "repeat": 40}}},
			map[string]any{"delayMs": 0, "parts": []any{map[string]any{"type": "text", "text": second}}},
		},
	})
	c := start(t, script, startOpts{})
	ctx := testContext(t)
	sid := c.ready(ctx, t, noCaps)

	first := promptAsync(ctx, c, sid, "one")
	if err := c.client.waitFor(ctx, sid, func(ns []acp.SessionNotification) bool { return len(messageChunks(ns)) >= 2 }); err != nil {
		t.Fatalf("waiting for the stream to start: %v", err)
	}
	// As Zed does: the cancel notification and the next prompt back to back, without
	// waiting for the cancelled prompt's response.
	if err := c.Cancel(ctx, acp.CancelNotification{SessionId: sid}); err != nil {
		t.Fatalf("session/cancel: %v", err)
	}
	next := promptAsync(ctx, c, sid, "two")

	r1 := <-first
	if r1.err != nil || r1.resp.StopReason != acp.StopReasonCancelled {
		t.Errorf("cancelled prompt: stopReason %q, err %v; want cancelled", r1.resp.StopReason, r1.err)
	}
	r2 := <-next
	if r2.err != nil {
		t.Fatalf("prompt sent right after session/cancel was refused: %v (it must wait for the cancelled turn, then run)", r2.err)
	}
	if r2.resp.StopReason != acp.StopReasonEndTurn {
		t.Errorf("second prompt: stopReason = %q, want end_turn", r2.resp.StopReason)
	}
	if r2.at.Before(r1.at) {
		t.Errorf("second prompt answered %v before the cancelled one", r1.at.Sub(r2.at))
	}
	if got := strings.Join(messageChunks(c.client.snapshot(sid)), ""); !strings.HasSuffix(got, second) {
		t.Errorf("transcript ends %q, want the second turn's text %q", got[max(0, len(got)-60):], second)
	}
}

func TestCancelWhilePermissionPendingRejects(t *testing.T) {
	// The client sends session/cancel, then answers the open question "cancelled", in
	// that order on the wire. corvid must end the turn cancelled and not run the tool. A
	// wrong order of handling inside corvid shows only sometimes, so try several sessions.
	const attempts = 10
	c := start(t, writeScriptFile(t), startOpts{})
	asked := make(chan struct{})
	answer := make(chan struct{})
	c.client.onPermission(func(ctx context.Context, _ acp.RequestPermissionRequest) acp.RequestPermissionResponse {
		asked <- struct{}{}
		<-answer
		// What the spec asks of a client that sent session/cancel with a question open.
		return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Cancelled: &acp.RequestPermissionOutcomeCancelled{}}}
	})
	ctx := testContext(t)
	c.ready(ctx, t, noCaps)

	wrong := 0
	for i := range attempts {
		sid := c.newSession(ctx, t)
		done := promptAsync(ctx, c, sid, "Create notes.txt.")
		select {
		case <-asked:
		case <-ctx.Done():
			t.Fatalf("attempt %d: no session/request_permission", i)
		}
		if err := c.Cancel(ctx, acp.CancelNotification{SessionId: sid}); err != nil {
			t.Fatalf("session/cancel: %v", err)
		}
		answer <- struct{}{}
		r := <-done
		if r.err != nil {
			t.Fatalf("attempt %d: session/prompt: %v", i, r.err)
		}
		if r.resp.StopReason != acp.StopReasonCancelled {
			wrong++
			t.Logf("attempt %d: stopReason = %q, message %q", i, r.resp.StopReason, strings.Join(messageChunks(c.client.snapshot(sid)), ""))
		}
		calls := toolCalls(c.client.snapshot(sid))
		if len(calls) != 1 {
			t.Fatalf("attempt %d: got %d tool calls, want 1", i, len(calls))
		}
		if s := calls[0].last(); s == acp.ToolCallStatusPending || s == acp.ToolCallStatusInProgress || s == acp.ToolCallStatusCompleted {
			t.Errorf("attempt %d: tool call %s: statuses %v; a cancelled question must leave it failed, not %s", i, calls[0].id, calls[0].statuses, s)
		}
	}
	if wrong > 0 {
		t.Errorf("%d of %d turns cancelled while a permission question was open ended with a stop reason other than cancelled", wrong, attempts)
	}
	if _, err := os.Stat(filepath.Join(c.workspace, "notes.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("notes.txt after cancelled permission questions: %v, want it absent", err)
	}
}

func TestAllowAlwaysIsRememberedForTheSession(t *testing.T) {
	write := func(path string) map[string]any {
		return map[string]any{"parts": []any{map[string]any{"type": "tool_call", "name": "write", "input": map[string]any{"path": path, "content": path + "\n"}}}}
	}
	script := testkit.WriteScript(t, map[string]any{"responses": []any{
		write("a.txt"), write("b.txt"),
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "Both written."}}},
	}})
	c := start(t, script, startOpts{})
	c.client.answerPermissions(acp.PermissionOptionKindAllowAlways)
	ctx := testContext(t)
	sid := c.ready(ctx, t, noCaps)

	if resp := c.prompt(ctx, t, sid, "Write two files."); resp.StopReason != acp.StopReasonEndTurn {
		t.Errorf("stopReason = %q, want end_turn", resp.StopReason)
	}
	if n := len(c.client.permissionRequests()); n != 1 {
		t.Errorf("got %d session/request_permission, want 1: allow_always covers the second write", n)
	}
	for _, name := range []string{"a.txt", "b.txt"} {
		if b, err := os.ReadFile(filepath.Join(c.workspace, name)); err != nil || string(b) != name+"\n" {
			t.Errorf("%s: %q, %v", name, b, err)
		}
	}
}

func TestStdinEOFMidTurnExits(t *testing.T) {
	c := start(t, slowScript(t), startOpts{})
	ctx := testContext(t)
	sid := c.ready(ctx, t, noCaps)
	promptAsync(ctx, c, sid, "Talk slowly.")
	if err := c.client.waitFor(ctx, sid, func(ns []acp.SessionNotification) bool { return len(messageChunks(ns)) >= 2 }); err != nil {
		t.Fatalf("waiting for the stream to start: %v", err)
	}
	closed := time.Now()
	c.stdin.Close()
	select {
	case <-c.exited:
		t.Logf("stdin EOF mid-turn → exit: %v (%v)", time.Since(closed), c.waitErr)
	case <-time.After(5 * time.Second):
		t.Error("corvid still running 5s after stdin EOF during a turn")
	}
	// stop (the cleanup) checks the exit status.
}
