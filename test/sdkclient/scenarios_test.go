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

// afterBarrier returns sid's updates once a later request has been answered. corvid
// answers requests in the order it writes, and the SDK hands a response over only after
// every notification read before it, so an update corvid sent after the prompt
// response (a defect) is recorded by then: no wall-clock window is needed.
func (c *corvid) afterBarrier(ctx context.Context, t *testing.T, sid acp.SessionId) []acp.SessionNotification {
	t.Helper()
	c.newSession(ctx, t)
	return c.client.snapshot(sid)
}

// noCaps is a client that advertises nothing, so every tool runs inside corvid.
var noCaps = acp.ClientCapabilities{}

func TestInitializeAnswersProtocolV1AsCorvid(t *testing.T) {
	for _, asked := range []int{1, 2} {
		c := start(t, testkit.WriteScript(t, textScript("", "hi", 0, 0)), startOpts{})
		ctx := testContext(t)
		resp, err := c.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersion(asked), ClientCapabilities: noCaps})
		if err != nil {
			t.Fatalf("initialize (client asks for v%d): %v", asked, err)
		}
		if resp.ProtocolVersion != 1 {
			t.Errorf("client asks for v%d: protocolVersion = %d, want 1", asked, resp.ProtocolVersion)
		}
		if resp.AgentInfo == nil || resp.AgentInfo.Name != "corvid" {
			t.Errorf("agentInfo = %+v, want name \"corvid\"", resp.AgentInfo)
		}
	}
}

func TestNewSessionReturnsDistinctIDs(t *testing.T) {
	c := start(t, testkit.WriteScript(t, textScript("", "hi", 0, 0)), startOpts{})
	ctx := testContext(t)
	first := c.ready(ctx, t, noCaps)
	second := c.newSession(ctx, t)
	if first == second {
		t.Errorf("two session/new calls both returned %q", first)
	}
}

func TestStreamedTurnDeliversChunksBeforePromptReturns(t *testing.T) {
	const (
		thinking = "The user wants a pangram; I know one."
		text     = "The quick brown fox jumps over the lazy dog. Ünïcödé survives chunking too."
	)
	c := start(t, testkit.WriteScript(t, textScript(thinking, text, 5, 0)), startOpts{})
	ctx := testContext(t)
	sid := c.ready(ctx, t, noCaps)

	resp := c.prompt(ctx, t, sid, "Say a pangram.")
	atReturn := c.client.snapshot(sid)
	later := c.afterBarrier(ctx, t, sid)

	if resp.StopReason != acp.StopReasonEndTurn {
		t.Errorf("stopReason = %q, want %q", resp.StopReason, acp.StopReasonEndTurn)
	}
	if len(later) != len(atReturn) {
		t.Errorf("%d session/update arrived after the prompt response (first: %+v); all must come before it",
			len(later)-len(atReturn), later[len(atReturn)].Update)
	}
	msgs := messageChunks(atReturn)
	if got := strings.Join(msgs, ""); got != text {
		t.Errorf("agent_message_chunk texts concatenate to %q, want %q", got, text)
	}
	if len(msgs) < 2 {
		t.Errorf("got %d agent_message_chunk, want the text streamed in several chunks", len(msgs))
	}
	for i, m := range msgs {
		if n := len([]rune(m)); n > 5 {
			t.Errorf("agent_message_chunk %d has %d runes, script chunkSize is 5: %q", i, n, m)
		}
	}
	thoughts := thoughtChunks(atReturn)
	if got := strings.Join(thoughts, ""); got != thinking {
		t.Errorf("agent_thought_chunk texts concatenate to %q, want %q", got, thinking)
	}
	// The script streams the thinking first: no message chunk may precede a thought chunk.
	seenMsg := false
	for _, n := range atReturn {
		if n.Update.AgentMessageChunk != nil {
			seenMsg = true
		}
		if n.Update.AgentThoughtChunk != nil && seenMsg {
			t.Errorf("agent_thought_chunk after an agent_message_chunk; script order is thinking, then text")
			break
		}
	}
}

func TestToolCallRoundTripCompletes(t *testing.T) {
	root, err := testkit.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	c := start(t, filepath.Join(root, "examples", "hello.json"), startOpts{})
	readme := "# sdkclient workspace\nsecond line\nthird line\nfourth line\n"
	if err := os.WriteFile(filepath.Join(c.workspace, "README.md"), []byte(readme), 0o644); err != nil {
		t.Fatal(err)
	}
	c.client.answerPermissions(acp.PermissionOptionKindAllowOnce)
	ctx := testContext(t)
	sid := c.ready(ctx, t, noCaps)

	resp := c.prompt(ctx, t, sid, "Hello, corvid!")
	if resp.StopReason != acp.StopReasonEndTurn {
		t.Errorf("stopReason = %q, want %q", resp.StopReason, acp.StopReasonEndTurn)
	}
	ns := c.client.snapshot(sid)
	calls := toolCalls(ns)
	if len(calls) != 1 {
		t.Fatalf("got %d tool calls, want 1 (the script's read): %+v", len(calls), calls)
	}
	tc := calls[0]
	if !tc.announced {
		t.Errorf("tool call %s: a tool_call_update came before its tool_call", tc.id)
	}
	if tc.kind != acp.ToolKindRead {
		t.Errorf("tool call %s: kind = %q, want %q", tc.id, tc.kind, acp.ToolKindRead)
	}
	if tc.last() != acp.ToolCallStatusCompleted {
		t.Errorf("tool call %s: statuses %v, want the last to be completed", tc.id, tc.statuses)
	}
	if got := strings.Join(tc.texts, "\n"); !strings.Contains(got, "# sdkclient workspace") {
		t.Errorf("tool call %s: result %q does not show README.md's first line", tc.id, got)
	}
	const answer = "Hello! I am corvid, playing a scripted model: no API key needed. I just read the first lines of README.md through my `read` tool."
	if got := strings.Join(messageChunks(ns), ""); got != answer {
		t.Errorf("message text = %q, want %q", got, answer)
	}
}

// writeScriptFile is the permission scenarios' script: a write tool call, then a closing text.
func writeScriptFile(t *testing.T) string {
	return testkit.WriteScript(t, map[string]any{"responses": []any{
		map[string]any{"parts": []any{
			map[string]any{"type": "text", "text": "I will create notes.txt."},
			map[string]any{"type": "tool_call", "name": "write", "input": map[string]any{"path": "notes.txt", "content": "written by corvid\n"}},
		}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "Finished."}}},
	}})
}

func TestPermissionAnswerDecidesWrite(t *testing.T) {
	for _, tt := range []struct {
		name     string
		answer   acp.PermissionOptionKind
		clientFS bool // advertise fs.writeTextFile, so an allowed write goes through the client
		want     acp.ToolCallStatus
	}{
		{"AllowInProcess", acp.PermissionOptionKindAllowOnce, false, acp.ToolCallStatusCompleted},
		{"RejectInProcess", acp.PermissionOptionKindRejectOnce, false, acp.ToolCallStatusFailed},
		{"AllowThroughClientFS", acp.PermissionOptionKindAllowOnce, true, acp.ToolCallStatusCompleted},
		{"RejectThroughClientFS", acp.PermissionOptionKindRejectOnce, true, acp.ToolCallStatusFailed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := start(t, writeScriptFile(t), startOpts{})
			c.client.answerPermissions(tt.answer)
			caps := noCaps
			caps.Fs = acp.FileSystemCapabilities{ReadTextFile: tt.clientFS, WriteTextFile: tt.clientFS}
			ctx := testContext(t)
			sid := c.ready(ctx, t, caps)

			resp := c.prompt(ctx, t, sid, "Create notes.txt.")
			if resp.StopReason != acp.StopReasonEndTurn {
				t.Errorf("stopReason = %q, want %q", resp.StopReason, acp.StopReasonEndTurn)
			}
			ns := c.client.snapshot(sid)
			calls := toolCalls(ns)
			if len(calls) != 1 {
				t.Fatalf("got %d tool calls, want 1: %+v", len(calls), calls)
			}
			tc := calls[0]
			perms := c.client.permissionRequests()
			if len(perms) != 1 {
				t.Fatalf("got %d session/request_permission, want 1", len(perms))
			}
			if perms[0].SessionId != sid || perms[0].ToolCall.ToolCallId != tc.id {
				t.Errorf("permission asked for session %q tool call %q, want %q %q", perms[0].SessionId, perms[0].ToolCall.ToolCallId, sid, tc.id)
			}
			if tc.last() != tt.want {
				t.Errorf("tool call %s: statuses %v, want the last to be %s", tc.id, tc.statuses, tt.want)
			}

			path := filepath.Join(c.workspace, "notes.txt")
			b, err := os.ReadFile(path)
			allowed := tt.answer == acp.PermissionOptionKindAllowOnce
			switch {
			case allowed && err != nil:
				t.Errorf("allowed write: %v", err)
			case allowed && string(b) != "written by corvid\n":
				t.Errorf("allowed write: notes.txt = %q", b)
			case !allowed && !errors.Is(err, os.ErrNotExist):
				t.Errorf("rejected write: notes.txt exists (err %v, content %q)", err, b)
			}

			writes := c.client.fsWrites()
			switch {
			case tt.clientFS && allowed:
				if len(writes) != 1 || writes[0].Path != path || writes[0].SessionId != sid {
					t.Errorf("client advertised fs.writeTextFile: fs/write_text_file calls %+v, want one for %s", writes, path)
				}
			case len(writes) != 0:
				t.Errorf("fs/write_text_file called %d times, want none: %+v", len(writes), writes)
			}
			if got := strings.Join(messageChunks(ns), ""); !strings.HasSuffix(got, "Finished.") {
				t.Errorf("message text = %q, want the script's second response after the tool result", got)
			}
		})
	}
}

// slowScript streams ~2,700 characters 4 at a time, 20 ms apart: about 13 s if not cancelled.
func slowScript(t *testing.T) string {
	return testkit.WriteScript(t, map[string]any{
		"chunkSize": 4, "delayMs": 20,
		"responses": []any{map[string]any{"parts": []any{
			map[string]any{"type": "text", "text": "This answer streams slowly so that you can cancel it. ", "repeat": 50},
		}}},
	})
}

func TestCancelMidStreamStopsWithCancelled(t *testing.T) {
	c := start(t, slowScript(t), startOpts{})
	ctx := testContext(t)
	sid := c.ready(ctx, t, noCaps)

	done := promptAsync(ctx, c, sid, "Talk slowly.")
	if err := c.client.waitFor(ctx, sid, func(ns []acp.SessionNotification) bool { return len(messageChunks(ns)) >= 3 }); err != nil {
		t.Fatalf("waiting for the stream to start: %v", err)
	}
	cancelAt := time.Now()
	if err := c.Cancel(ctx, acp.CancelNotification{SessionId: sid}); err != nil {
		t.Fatalf("session/cancel: %v", err)
	}
	var r promptResult
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("no session/prompt response 10s after session/cancel")
	}
	if r.err != nil {
		t.Fatalf("session/prompt after cancel: %v (a cancelled turn must answer with stopReason cancelled, not an error)", r.err)
	}
	t.Logf("session/cancel → prompt response: %v", r.at.Sub(cancelAt))
	if r.resp.StopReason != acp.StopReasonCancelled {
		t.Errorf("stopReason = %q, want %q", r.resp.StopReason, acp.StopReasonCancelled)
	}
	atReturn := c.client.snapshot(sid)
	if later := c.afterBarrier(ctx, t, sid); len(later) != len(atReturn) {
		t.Errorf("%d session/update arrived after the cancelled prompt's response", len(later)-len(atReturn))
	}
	full := strings.Repeat("This answer streams slowly so that you can cancel it. ", 50)
	got := strings.Join(messageChunks(atReturn), "")
	if !strings.HasPrefix(full, got) || len(got) >= len(full) {
		t.Errorf("streamed %d of %d characters; want a strict prefix of the scripted text", len(got), len(full))
	}
}

func TestTwoConcurrentSessionsStreamIndependently(t *testing.T) {
	const text = "Forty characters of text, two at a time."
	c := start(t, testkit.WriteScript(t, textScript("", text, 2, 5)), startOpts{})
	ctx := testContext(t)
	a := c.ready(ctx, t, noCaps)
	b := c.newSession(ctx, t)

	doneA := promptAsync(ctx, c, a, "first")
	doneB := promptAsync(ctx, c, b, "second")
	for name, done := range map[string]<-chan promptResult{"A": doneA, "B": doneB} {
		r := <-done
		if r.err != nil {
			t.Fatalf("session %s: session/prompt: %v", name, r.err)
		}
		if r.resp.StopReason != acp.StopReasonEndTurn {
			t.Errorf("session %s: stopReason = %q, want end_turn", name, r.resp.StopReason)
		}
	}
	for name, sid := range map[string]acp.SessionId{"A": a, "B": b} {
		if got := strings.Join(messageChunks(c.client.snapshot(sid)), ""); got != text {
			t.Errorf("session %s: message text = %q, want %q", name, got, text)
		}
	}
	// 20 chunks 5 ms apart each: turns that really run at the same time interleave.
	var order []acp.SessionId
	for _, n := range c.client.all() {
		if n.Update.AgentMessageChunk != nil {
			order = append(order, n.SessionId)
		}
	}
	switches := 0
	for i := 1; i < len(order); i++ {
		if order[i] != order[i-1] {
			switches++
		}
	}
	if switches < 2 {
		t.Errorf("the two sessions' chunks switched %d times; the turns ran one after the other, not concurrently", switches)
	}
}

func TestTwoProcessesShareOneStore(t *testing.T) {
	const text = "Both processes stream into one store."
	home := t.TempDir()
	script := testkit.WriteScript(t, textScript("", text, 3, 2))
	var done []<-chan promptResult
	var procs []*corvid
	var sids []acp.SessionId
	for range 2 {
		c := start(t, script, startOpts{home: home})
		ctx := testContext(t)
		sid := c.ready(ctx, t, noCaps)
		procs, sids = append(procs, c), append(sids, sid)
		done = append(done, promptAsync(ctx, c, sid, "go"))
	}
	for i, ch := range done {
		r := <-ch
		if r.err != nil {
			t.Fatalf("process %d: session/prompt: %v", i, r.err)
		}
		if r.resp.StopReason != acp.StopReasonEndTurn {
			t.Errorf("process %d: stopReason = %q, want end_turn", i, r.resp.StopReason)
		}
		if got := strings.Join(messageChunks(procs[i].client.snapshot(sids[i])), ""); got != text {
			t.Errorf("process %d: message text = %q, want %q", i, got, text)
		}
	}
}

func TestPromptForUnknownSessionFails(t *testing.T) {
	c := start(t, testkit.WriteScript(t, textScript("", "still alive", 0, 0)), startOpts{})
	ctx := testContext(t)
	c.ready(ctx, t, noCaps)

	_, err := c.Prompt(ctx, acp.PromptRequest{SessionId: "sess_does_not_exist", Prompt: []acp.ContentBlock{acp.TextBlock("hello?")}})
	var rerr *acp.RequestError
	if !errors.As(err, &rerr) {
		t.Fatalf("prompt for an unknown session: err = %v, want a JSON-RPC error", err)
	}
	t.Logf("unknown session: %v", rerr)
	if rerr.Code != -32602 && rerr.Code != -32002 {
		t.Errorf("unknown session answered with code %d; want invalid params (-32602) or resource not found (-32002)", rerr.Code)
	}

	// The connection survives the error.
	sid := c.newSession(ctx, t)
	if resp := c.prompt(ctx, t, sid, "still there?"); resp.StopReason != acp.StopReasonEndTurn {
		t.Errorf("after the error: stopReason = %q, want end_turn", resp.StopReason)
	}
}

func TestLargeTextIsSplitUnder64KiB(t *testing.T) {
	// One 300 KiB part with no chunkSize: the model hands corvid the whole text at once,
	// and corvid must split it so no content.text exceeds 64 KiB (ARCHITECTURE.md §3, frames).
	text := strings.Repeat("0123456789abcdef", 300*1024/16)
	c := start(t, testkit.WriteScript(t, textScript("", text, 0, 0)), startOpts{})
	ctx := testContext(t)
	sid := c.ready(ctx, t, noCaps)
	if resp := c.prompt(ctx, t, sid, "Say a lot."); resp.StopReason != acp.StopReasonEndTurn {
		t.Errorf("stopReason = %q, want end_turn", resp.StopReason)
	}
	msgs := messageChunks(c.client.snapshot(sid))
	if got := strings.Join(msgs, ""); got != text {
		t.Errorf("message text: %d bytes, want the scripted %d bytes", len(got), len(text))
	}
	for i, m := range msgs {
		if len(m) > 64*1024 {
			t.Errorf("agent_message_chunk %d carries %d bytes of text, want ≤ 64 KiB", i, len(m))
		}
	}
}
