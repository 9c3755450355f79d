package agent

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/permission"
)

// kinds summarises shown events: a chunk as kind:text, a tool call state as
// kind:status.
func kinds(evs []Event) []string {
	var out []string
	for _, ev := range evs {
		switch {
		case ev.Content != nil:
			out = append(out, fmt.Sprintf("%s:%s", ev.Kind, ev.Content.Text))
		case ev.ToolCall != nil:
			out = append(out, fmt.Sprintf("%s:%s", ev.Kind, ev.ToolCall.Status))
		default:
			out = append(out, string(ev.Kind))
		}
	}
	return out
}

func TestATurnStreamsRunsTheToolAndFeedsItsResultBack(t *testing.T) {
	h := newHarness(t, permission.ModeYolo,
		reply{events: append([]llm.Event{{Type: llm.EventTextDelta, Text: "let me look"}}, callTool("tu1", "run", `{"x":1}`)...)},
		reply{events: answer("do", "ne")})
	if stop := h.prompt(t, "hello"); stop != StopEndTurn {
		t.Fatalf("stop = %s", stop)
	}
	got := strings.Join(kinds(h.front.shown()), "\n")
	want := strings.Join([]string{
		"agent_message_chunk:let me look",
		"tool_call:pending",
		"tool_call_update:in_progress",
		"tool_call_update:completed",
		"agent_message_chunk:do",
		"agent_message_chunk:ne",
		"session_info_update", // the title, after the first turn
	}, "\n")
	if got != want {
		t.Errorf("shown:\n%s\nwant:\n%s", got, want)
	}
	// The second request holds the prompt, the call and its result.
	msgs := h.model.request(t, 1).Messages
	if len(msgs) != 3 || msgs[0].Parts[0].Text != "hello" || msgs[1].Parts[1].ToolUseID != "tu1" ||
		msgs[2].Parts[0].Type != llm.PartToolResult || msgs[2].Parts[0].Text != "run output" {
		t.Errorf("second request messages = %+v", msgs)
	}
	if h.model.request(t, 0).System != "test system" || len(h.model.request(t, 0).Tools) == 0 {
		t.Errorf("first request: system %q, %d tools", h.model.request(t, 0).System, len(h.model.request(t, 0).Tools))
	}
}

func TestAPromptWhileATurnRunsIsBusyAndOneAfterACancelWaitsForIt(t *testing.T) {
	h := newHarness(t, permission.ModeDefault, reply{hold: true}, reply{events: answer("second")})
	first, done1 := h.start(t, "one")
	wait(t, h.model.streams)
	if _, err := h.s.StartTurn([]Block{{Type: BlockText, Text: "two"}}); !errors.Is(err, ErrBusy) {
		t.Fatalf("a prompt during a live turn: err = %v, want ErrBusy", err)
	}
	h.model.mu.Lock()
	h.model.onStream = func(llm.Request) {
		select {
		case <-first.done:
		default:
			t.Error("the next turn called the model before the cancelled one ended")
		}
	}
	h.model.mu.Unlock()
	h.s.Cancel()
	_, done2 := h.start(t, "two")
	if r := wait(t, done1); r.stop != StopCancelled || r.err != nil {
		t.Errorf("cancelled turn: %v %v", r.stop, r.err)
	}
	if r := wait(t, done2); r.stop != StopEndTurn || r.err != nil {
		t.Errorf("next turn: %v %v", r.stop, r.err)
	}
}

func TestCancelBeforeTheModelAnswersKeepsOnlyThePrompt(t *testing.T) {
	h := newHarness(t, permission.ModeDefault, reply{hold: true})
	_, done := h.start(t, "q")
	wait(t, h.model.streams)
	h.s.Cancel()
	if r := wait(t, done); r.stop != StopCancelled || r.err != nil {
		t.Fatalf("got %v %v, want cancelled", r.stop, r.err)
	}
	for _, ev := range h.front.shown() {
		if ev.Kind == EventMessageChunk {
			t.Errorf("a cancelled turn that got no answer showed %+v", ev)
		}
	}
	if h := h.s.conv.messages(); len(h) != 1 || h[0].Role != llm.RoleUser {
		t.Errorf("history = %+v, want the prompt alone", h)
	}
}

func TestCancelMidStreamKeepsWhatWasStreamed(t *testing.T) {
	h := newHarness(t, permission.ModeDefault, reply{events: answer("par", "tial", "never"), hold: true, at: 2})
	_, done := h.start(t, "q")
	h.front.waitFor(t, "the second chunk", func(ev Event) bool { return ev.Content != nil && ev.Content.Text == "tial" })
	h.s.Cancel()
	if r := wait(t, done); r.stop != StopCancelled || r.err != nil {
		t.Fatalf("got %v %v, want cancelled", r.stop, r.err)
	}
	hist := h.s.conv.messages()
	if len(hist) != 2 || hist[1].Role != llm.RoleAssistant || hist[1].Parts[0].Text != "partial" {
		t.Errorf("history = %+v, want the prompt and the partial answer", hist)
	}
}

func TestCancelDuringAPermissionRequestFailsTheCallWithoutRunningIt(t *testing.T) {
	h := newHarness(t, permission.ModeDefault, reply{events: callTool("tu1", "run", `{}`)})
	h.front.block = true
	_, done := h.start(t, "q")
	asked := wait(t, (<-chan ToolCall)(h.front.asks))
	if asked.Name != "run" || asked.Status != ToolPending || asked.AlwaysLabel == "" {
		t.Errorf("permission asked for %+v", asked)
	}
	h.s.Cancel()
	if r := wait(t, done); r.stop != StopCancelled || r.err != nil {
		t.Fatalf("got %v %v, want cancelled", r.stop, r.err)
	}
	if n := h.tool.ranTimes(); n != 0 {
		t.Errorf("the tool ran %d times", n)
	}
	assertLastToolState(t, h, ToolFailed, "cancelled by the user")
	assertToolResult(t, h, "cancelled by the user")
}

func TestCancelDuringAToolStopsItAndAnswersTheModelsCall(t *testing.T) {
	h := newHarness(t, permission.ModeYolo, reply{events: callTool("tu1", "run", `{}`)})
	h.tool.block = true
	_, done := h.start(t, "q")
	wait(t, (<-chan struct{})(h.tool.started))
	h.s.Cancel()
	if r := wait(t, done); r.stop != StopCancelled || r.err != nil {
		t.Fatalf("got %v %v, want cancelled", r.stop, r.err)
	}
	assertLastToolState(t, h, ToolFailed, "cancelled by the user")
	assertToolResult(t, h, "cancelled by the user")
}

func TestARejectedPermissionTellsTheModel(t *testing.T) {
	h := newHarness(t, permission.ModeDefault, reply{events: callTool("tu1", "run", `{}`)}, reply{events: answer("ok")})
	h.front.answer = RejectOnce
	if stop := h.prompt(t, "q"); stop != StopEndTurn {
		t.Fatalf("stop = %s", stop)
	}
	if h.tool.ranTimes() != 0 {
		t.Error("a rejected call ran")
	}
	msgs := h.model.request(t, 1).Messages
	if last := msgs[len(msgs)-1]; last.Parts[0].Type != llm.PartToolResult || last.Parts[0].Text != "the user rejected this tool call" {
		t.Errorf("the model was told %+v", last)
	}
}

func assertLastToolState(t *testing.T, h *harness, status ToolStatus, text string) {
	t.Helper()
	var last *ToolCall
	for _, ev := range h.front.shown() {
		if ev.Kind == EventToolCallState {
			last = ev.ToolCall
		}
	}
	if last == nil || last.Status != status || len(last.Content) == 0 || last.Content[0].Text != text {
		t.Errorf("last tool call state = %+v, want %s %q", last, status, text)
	}
}

// assertToolResult checks the context ends with the call's result, so the
// next model request is valid.
func assertToolResult(t *testing.T, h *harness, text string) {
	t.Helper()
	hist := h.s.conv.messages()
	last := hist[len(hist)-1]
	if last.Role != llm.RoleUser || last.Parts[0].Type != llm.PartToolResult || !last.Parts[0].IsError || last.Parts[0].Text != text {
		t.Errorf("the context ends with %+v, want the error result %q", last, text)
	}
}
