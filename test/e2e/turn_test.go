package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

func TestStreamedTurnSharesMessageIDAndAnswersAfterLastUpdate(t *testing.T) {
	const reply = "The quick brown fox jumps over the lazy dog."
	s := startCorvid(t, text(reply, 4), testkit.Options{})
	sid := s.ready(t, testkit.Zed())
	p := s.CallAsync("session/prompt", testkit.TextPrompt(sid, "hello"))
	res, rerr := p.Wait(s.ctx)
	if rerr != nil {
		t.Fatalf("prompt: %v", rerr)
	}
	if !strings.Contains(string(res), `"stopReason":"end_turn"`) {
		t.Errorf("prompt result %s", res)
	}
	ups := s.Updates(sid)
	chunks := testkit.OfKind(ups, "agent_message_chunk")
	if got := testkit.TextOf(ups, "agent_message_chunk"); got != reply {
		t.Errorf("streamed text %q, want %q", got, reply)
	}
	if len(chunks) < len(reply)/4 {
		t.Errorf("got %d chunks for chunkSize 4, want at least %d", len(chunks), len(reply)/4)
	}
	for _, c := range chunks {
		if c.MessageID == "" || c.MessageID != chunks[0].MessageID {
			t.Errorf("chunk messageId %q, want every chunk to carry %q", c.MessageID, chunks[0].MessageID)
			break
		}
	}
	if last := lastSeq(ups); p.Seq() < last {
		t.Errorf("prompt response (line %d) came before the last update (line %d)", p.Seq(), last)
	}
}

func TestThinkingStreamsAsThoughtChunks(t *testing.T) {
	script := map[string]any{"responses": []any{map[string]any{"chunkSize": 3, "parts": []any{
		map[string]any{"type": "thinking", "text": "let me think about it"},
		map[string]any{"type": "text", "text": "answer"},
	}}}}
	s := startCorvid(t, script, testkit.Options{})
	sid := s.ready(t, testkit.Minimal())
	if stop, rerr := s.Prompt(s.ctx, sid, "q"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	ups := s.Updates(sid)
	if got := testkit.TextOf(ups, "agent_thought_chunk"); got != "let me think about it" {
		t.Errorf("thought %q", got)
	}
	if got := testkit.TextOf(ups, "agent_message_chunk"); got != "answer" {
		t.Errorf("text %q", got)
	}
	thoughts, texts := testkit.OfKind(ups, "agent_thought_chunk"), testkit.OfKind(ups, "agent_message_chunk")
	if len(thoughts) > 0 && len(texts) > 0 && thoughts[len(thoughts)-1].Seq > texts[0].Seq {
		t.Error("thinking interleaved after the text started")
	}
}

// readScript asks for the read tool on path, then ends the turn with text.
func readScript(path string) map[string]any {
	return map[string]any{"responses": []any{
		map[string]any{"parts": []any{map[string]any{"type": "tool_call", "id": "call_1", "name": "read", "input": map[string]any{"path": path}}}},
		map[string]any{"parts": []any{map[string]any{"type": "text", "text": "done reading"}}},
	}}
}

func TestReadToolCallGoesPendingInProgressCompleted(t *testing.T) {
	for _, h := range []testkit.Host{testkit.Minimal(), testkit.Zed()} {
		t.Run(h.Name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "notes.txt")
			if err := os.WriteFile(file, []byte("alpha\nbeta\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			s := startCorvid(t, readScript(file), testkit.Options{Dir: dir})
			s.workspace = dir
			sid := s.ready(t, h)
			stop, rerr := s.Prompt(s.ctx, sid, "read it")
			if rerr != nil || stop != "end_turn" {
				t.Fatalf("prompt: %q %v", stop, rerr)
			}
			var statuses []string
			var id string
			for _, u := range s.Updates(sid) {
				if u.SessionUpdate == "tool_call" || u.SessionUpdate == "tool_call_update" {
					if id == "" {
						id = u.ToolCallID
					}
					if u.ToolCallID != id {
						t.Errorf("second tool call id %q", u.ToolCallID)
					}
					if u.Status != "" {
						statuses = append(statuses, u.Status)
					}
				}
			}
			first := testkit.OfKind(s.Updates(sid), "tool_call")
			if len(first) != 1 || first[0].Kind != "read" {
				t.Errorf("tool_call updates %+v, want one of kind read", first)
			}
			if got := strings.Join(statuses, ","); got != "pending,in_progress,completed" {
				t.Errorf("statuses %s, want pending,in_progress,completed", got)
			}
			if got := testkit.TextOf(s.Updates(sid), "agent_message_chunk"); got != "done reading" {
				t.Errorf("final text %q", got)
			}
			if h.Name == "minimal" && len(s.FSCalls()) != 0 {
				t.Errorf("the client did not advertise fs, yet fs calls %+v", s.FSCalls())
			}
		})
	}
}

// DESIGN.md §3 "where tools run": with --client-tools auto (the default) file reads go
// through fs/read_text_file when the client advertised it, so the model sees unsaved
// editor buffers.
func TestReadUsesClientFSWhenAdvertised(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(file, []byte("alpha\nbeta\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startCorvid(t, readScript(file), testkit.Options{Dir: dir})
	s.workspace = dir
	sid := s.ready(t, testkit.Zed())
	s.SetBuffer(file, "alpha\nbeta (unsaved)\n")
	if stop, rerr := s.Prompt(s.ctx, sid, "read it"); rerr != nil || stop != "end_turn" {
		t.Fatalf("prompt: %q %v", stop, rerr)
	}
	calls := s.FSCalls()
	if len(calls) != 1 || calls[0].Method != "fs/read_text_file" || calls[0].Path != file {
		t.Errorf("fs calls %+v, want one fs/read_text_file of %s", calls, file)
	}
	var out string
	for _, u := range testkit.OfKind(s.Updates(sid), "tool_call_update") {
		out += string(u.Raw)
	}
	if !strings.Contains(out, "unsaved") {
		t.Errorf("the read result does not show the editor's unsaved buffer: %s", out)
	}
}

func TestCancelMidStreamAnswersCancelledAndSendsNothingAfter(t *testing.T) {
	script := map[string]any{"responses": []any{map[string]any{"chunkSize": 1, "delayMs": 5,
		"parts": []any{map[string]any{"type": "text", "text": "tick ", "repeat": 2000}}}}}
	s := startCorvid(t, script, testkit.Options{})
	sid := s.ready(t, testkit.Zed())
	p := s.CallAsync("session/prompt", testkit.TextPrompt(sid, "count"))
	if _, err := s.WaitUpdate(s.ctx, testkit.Kind(sid, "agent_message_chunk")); err != nil {
		t.Fatalf("no chunk: %v", err)
	}
	start := time.Now()
	s.Cancel(sid)
	res, rerr := p.Wait(s.ctx)
	if rerr != nil {
		t.Fatalf("a cancelled prompt must not be an error: %v", rerr)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("cancel → response took %v", took)
	}
	if !strings.Contains(string(res), `"stopReason":"cancelled"`) {
		t.Errorf("result %s, want stopReason cancelled", res)
	}
	// Barrier: a round trip after the response; any straggler update is in by then.
	s.stillUsable(t)
	for _, u := range s.Updates(sid) {
		if u.Seq > p.Seq() {
			t.Errorf("update after the prompt response: %s", u.Raw)
		}
	}
	if got := testkit.TextOf(s.Updates(sid), "agent_message_chunk"); len(got) >= len("tick ")*2000 {
		t.Errorf("the whole text streamed; cancel did not stop it")
	}
	// The session takes a new prompt after the cancelled one.
	if stop, rerr := s.Prompt(s.ctx, sid, "again"); rerr != nil || stop == "" {
		t.Errorf("prompt after cancel: %q %v", stop, rerr)
	}
}

func TestTwoConcurrentSessionsStreamIndependently(t *testing.T) {
	script := map[string]any{"responses": []any{map[string]any{"chunkSize": 2, "delayMs": 1,
		"parts": []any{map[string]any{"type": "text", "text": "parallel reply"}}}}}
	s := startCorvid(t, script, testkit.Options{})
	a := s.ready(t, testkit.Zed())
	b := s.NewSession(s.ctx, s.workspace)
	if a == b {
		t.Fatalf("two sessions share id %s", a)
	}
	pa := s.CallAsync("session/prompt", testkit.TextPrompt(a, "one"))
	pb := s.CallAsync("session/prompt", testkit.TextPrompt(b, "two"))
	for _, p := range []*testkit.Pending{pa, pb} {
		if res, rerr := p.Wait(s.ctx); rerr != nil || !strings.Contains(string(res), "end_turn") {
			t.Errorf("prompt: %s %v", res, rerr)
		}
	}
	for _, sid := range []string{a, b} {
		if got := testkit.TextOf(s.Updates(sid), "agent_message_chunk"); got != "parallel reply" {
			t.Errorf("session %s text %q", sid, got)
		}
	}
	if lastSeq(s.Updates(a)) > pa.Seq() || lastSeq(s.Updates(b)) > pb.Seq() {
		t.Error("an update came after its session's prompt response")
	}
}

func TestStdinCloseExitsWithinOneSecond(t *testing.T) {
	s := startCorvid(t, text("x", 0), testkit.Options{})
	s.ready(t, testkit.Zed())
	code, took := s.Close()
	if code != 0 || took > time.Second {
		t.Errorf("exit %d after %v, want 0 within 1s", code, took)
	}
}

func TestStdinCloseMidTurnExitsWithinOneSecond(t *testing.T) {
	script := map[string]any{"responses": []any{map[string]any{"chunkSize": 1, "delayMs": 10,
		"parts": []any{map[string]any{"type": "text", "text": "slow ", "repeat": 1000}}}}}
	s := startCorvid(t, script, testkit.Options{})
	sid := s.ready(t, testkit.Zed())
	s.CallAsync("session/prompt", testkit.TextPrompt(sid, "go"))
	if _, err := s.WaitUpdate(s.ctx, testkit.Kind(sid, "agent_message_chunk")); err != nil {
		t.Fatal(err)
	}
	code, took := s.Close()
	if code != 0 || took > time.Second {
		t.Errorf("exit %d after %v, want 0 within 1s", code, took)
	}
}
