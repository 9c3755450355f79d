package anthropic

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/testkit/fakeanthropic"
)

func TestStreamsTextDeltasThenStop(t *testing.T) {
	t.Parallel()
	fake := fakeanthropic.New(t)
	fake.Enqueue(fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("Hello from the fake Claude, üñí!")}})
	m := newTestModel(t, fake, 0)

	evs := mustCollect(t, m, llm.Request{System: "You are terse.", Messages: []llm.Message{userText("hi")}, MaxTokens: 512})

	deltas := eventsOf(evs, llm.EventTextDelta)
	if len(deltas) < 3 {
		t.Fatalf("got %d text deltas, want the text streamed in several", len(deltas))
	}
	var text strings.Builder
	for _, d := range deltas {
		text.WriteString(d.Text)
		if d.Index != 0 {
			t.Errorf("delta index %d, want 0", d.Index)
		}
	}
	if text.String() != "Hello from the fake Claude, üñí!" {
		t.Errorf("text = %q", text.String())
	}
	if stop := evs[len(evs)-1]; stop.StopReason != llm.StopEndTurn {
		t.Errorf("stop = %+v, want end_turn", stop)
	}

	req := fake.Requests()[0]
	if req.Path != "/v1/messages" || !req.Body.Stream || req.Body.Model != "claude-test-1" || req.Body.MaxTokens != 512 {
		t.Errorf("request = %s %s, body %s", req.Method, req.Path, req.Raw)
	}
	if req.SystemText() != "You are terse." {
		t.Errorf("system = %q", req.SystemText())
	}
	if len(req.Body.Messages) != 1 || req.Body.Messages[0].Role != "user" || req.Body.Messages[0].Content[0].Text != "hi" {
		t.Errorf("messages = %+v", req.Body.Messages)
	}
	if req.Header.Get("Anthropic-Version") == "" {
		t.Errorf("no anthropic-version header")
	}
}

func TestUsageCombinesMessageStartAndMessageDelta(t *testing.T) {
	t.Parallel()
	fake := fakeanthropic.New(t)
	fake.Enqueue(fakeanthropic.Response{
		Blocks: []fakeanthropic.Block{fakeanthropic.Text("ok")},
		Usage:  fakeanthropic.Usage{InputTokens: 1200, OutputTokens: 42, CacheReadInputTokens: 800, CacheCreationInputTokens: 64},
	})
	evs := mustCollect(t, newTestModel(t, fake, 0), llm.Request{Messages: []llm.Message{userText("hi")}})
	usage := eventsOf(evs, llm.EventUsage)
	if len(usage) != 1 {
		t.Fatalf("got %d usage events, want 1", len(usage))
	}
	want := llm.Usage{InputTokens: 1200, OutputTokens: 42, CacheReadTokens: 800, CacheWriteTokens: 64}
	if usage[0].Usage != want {
		t.Fatalf("usage = %+v, want %+v", usage[0].Usage, want)
	}
	// Usage comes after the content and before the stop.
	if evs[len(evs)-2].Type != llm.EventUsage {
		t.Errorf("events = %+v, want usage just before stop", evs)
	}
}

func TestThinkingSignatureIsEchoedInNextRequest(t *testing.T) {
	t.Parallel()
	fake := fakeanthropic.New(t)
	fake.Enqueue(
		fakeanthropic.Response{Blocks: []fakeanthropic.Block{
			fakeanthropic.Thinking("The user greets me; I should greet back.", "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"),
			fakeanthropic.Text("Hello!"),
		}},
		fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("Fine.")}},
	)
	m := newTestModel(t, fake, 0)

	first := llm.Request{Messages: []llm.Message{userText("hi")}, ThinkingBudget: 2048, MaxTokens: 1000}
	evs := mustCollect(t, m, first)
	var thinking, sig string
	for _, ev := range evs {
		switch ev.Type {
		case llm.EventThinkingDelta:
			thinking += ev.Text
		case llm.EventSignature:
			sig += ev.Text
		}
	}
	if thinking != "The user greets me; I should greet back." || sig != "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds" {
		t.Fatalf("thinking %q, signature %q", thinking, sig)
	}
	body := fake.Requests()[0].Body
	if body.Thinking == nil || body.Thinking.Type != "enabled" || body.Thinking.BudgetTokens != 2048 {
		t.Fatalf("thinking config = %+v, want enabled with 2048", body.Thinking)
	}
	if body.MaxTokens <= 2048 {
		t.Fatalf("max_tokens = %d, want above the thinking budget", body.MaxTokens)
	}

	second := first
	second.Messages = append(second.Messages, assistantMessage(evs), userText("how are you?"))
	mustCollect(t, m, second)
	echoed := fake.Requests()[1].Body.Messages
	if len(echoed) != 3 || echoed[1].Role != "assistant" {
		t.Fatalf("second request messages = %+v", echoed)
	}
	blocks := echoed[1].Content
	if len(blocks) != 2 || blocks[0].Type != "thinking" || blocks[0].Signature != sig || blocks[0].Thinking != thinking ||
		blocks[1].Type != "text" || blocks[1].Text != "Hello!" {
		t.Fatalf("assistant content sent back = %+v", blocks)
	}
}

func TestRedactedThinkingTravelsBackUnchanged(t *testing.T) {
	t.Parallel()
	fake := fakeanthropic.New(t)
	fake.Enqueue(
		fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.RedactedThinking("ENCRYPTED+/=="), fakeanthropic.Text("Done.")}},
		fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("ok")}},
	)
	m := newTestModel(t, fake, 0)
	evs := mustCollect(t, m, llm.Request{Messages: []llm.Message{userText("hi")}, ThinkingBudget: 1024})
	if len(eventsOf(evs, llm.EventThinkingDelta)) != 0 {
		t.Errorf("redacted thinking produced readable thinking: %+v", evs)
	}
	mustCollect(t, m, llm.Request{Messages: []llm.Message{userText("hi"), assistantMessage(evs), userText("more")}})
	blocks := fake.Requests()[1].Body.Messages[1].Content
	if len(blocks) != 2 || blocks[0].Type != "redacted_thinking" || blocks[0].Data != "ENCRYPTED+/==" {
		t.Fatalf("assistant content sent back = %+v", blocks)
	}
}

func TestToolCallStreamsArgumentsThenToolResultIsSent(t *testing.T) {
	t.Parallel()
	const input = `{"path":"internal/llm/llm.go","offset":10,"limit":20}`
	fake := fakeanthropic.New(t)
	fake.Enqueue(
		fakeanthropic.Response{
			Blocks:    []fakeanthropic.Block{fakeanthropic.Text("Reading it."), fakeanthropic.ToolUse("toolu_01A", "read_file", input)},
			ChunkSize: 7,
		},
		fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("It defines Model.")}},
	)
	m := newTestModel(t, fake, 0)
	schema := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"offset":{"type":"integer"},"limit":{"type":"integer"}},"required":["path"],"additionalProperties":false}`)
	tools := []llm.ToolSpec{{Name: "read_file", Description: "Read a file.", InputSchema: schema}}

	evs := mustCollect(t, m, llm.Request{Messages: []llm.Message{userText("what is in llm.go?")}, Tools: tools})

	starts, deltas, ends := eventsOf(evs, llm.EventToolUseStart), eventsOf(evs, llm.EventToolUseDelta), eventsOf(evs, llm.EventToolUseEnd)
	if len(starts) != 1 || starts[0].ToolUseID != "toolu_01A" || starts[0].ToolName != "read_file" || starts[0].Index != 1 {
		t.Fatalf("tool starts = %+v", starts)
	}
	if len(deltas) < 3 {
		t.Fatalf("got %d input deltas, want the input split across several", len(deltas))
	}
	var joined strings.Builder
	for _, d := range deltas {
		joined.WriteString(d.Text)
	}
	if joined.String() != input {
		t.Errorf("deltas join to %q", joined.String())
	}
	if len(ends) != 1 || ends[0].ToolUseID != "toolu_01A" || ends[0].ToolName != "read_file" || string(ends[0].Input) != input {
		t.Fatalf("tool end = %+v", ends)
	}
	if stop := evs[len(evs)-1]; stop.StopReason != llm.StopToolUse {
		t.Fatalf("stop = %+v, want tool_use", stop)
	}

	png := []byte("\x89PNG\r\n\x1a\nfake")
	result := llm.Message{Role: llm.RoleUser, Parts: []llm.Part{{
		Type: llm.PartToolResult, ToolUseID: "toolu_01A", Text: "open internal/llm/llm.go: permission denied", IsError: true,
		Images: []llm.Part{{Type: llm.PartImage, MimeType: "image/png", Data: png}},
	}}}
	mustCollect(t, m, llm.Request{
		Messages: []llm.Message{userText("what is in llm.go?"), assistantMessage(evs), result},
		Tools:    tools,
	})

	got := fake.Requests()[1]
	if len(got.Body.Tools) != 1 || got.Body.Tools[0].Name != "read_file" || got.Body.Tools[0].Description != "Read a file." ||
		!sameJSON(t, got.Body.Tools[0].InputSchema, schema) {
		t.Errorf("tools sent = %+v", got.Body.Tools)
	}
	msgs := got.Body.Messages
	if len(msgs) != 3 {
		t.Fatalf("messages sent = %+v", msgs)
	}
	use := msgs[1].Content[1]
	if use.Type != "tool_use" || use.ID != "toolu_01A" || use.Name != "read_file" || !sameJSON(t, use.Input, []byte(input)) {
		t.Errorf("tool_use sent back = %+v", use)
	}
	res := msgs[2].Content[0]
	if msgs[2].Role != "user" || res.Type != "tool_result" || res.ToolUseID != "toolu_01A" || !res.IsError {
		t.Fatalf("tool_result sent = %+v", res)
	}
	rb := res.ResultBlocks()
	if len(rb) != 2 || rb[0].Text != "open internal/llm/llm.go: permission denied" ||
		rb[1].Type != "image" || rb[1].Source == nil || rb[1].Source.MediaType != "image/png" ||
		rb[1].Source.Data != base64.StdEncoding.EncodeToString(png) {
		t.Fatalf("tool_result content = %+v", rb)
	}
}

func TestToolCallWithoutArgumentsEndsWithEmptyObject(t *testing.T) {
	t.Parallel()
	fake := fakeanthropic.New(t)
	fake.Enqueue(fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.ToolUse("toolu_2", "list_files", "")}})
	evs := mustCollect(t, newTestModel(t, fake, 0), llm.Request{Messages: []llm.Message{userText("ls")}})
	ends := eventsOf(evs, llm.EventToolUseEnd)
	if len(ends) != 1 || string(ends[0].Input) != "{}" {
		t.Fatalf("tool end = %+v, want input {}", ends)
	}
}

func TestUserImagesAreSentAsBase64(t *testing.T) {
	t.Parallel()
	fake := fakeanthropic.New(t)
	fake.Enqueue(fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("A cat.")}})
	jpeg := []byte{0xff, 0xd8, 0xff, 0xe0, 1, 2, 3}
	mustCollect(t, newTestModel(t, fake, 0), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{
		llm.Text("what is this?"), {Type: llm.PartImage, MimeType: "image/jpeg", Data: jpeg},
	}}}})
	c := fake.Requests()[0].Body.Messages[0].Content
	if len(c) != 2 || c[1].Type != "image" || c[1].Source.Type != "base64" || c[1].Source.MediaType != "image/jpeg" {
		t.Fatalf("content = %+v", c)
	}
	if got, _ := base64.StdEncoding.DecodeString(c[1].Source.Data); !bytes.Equal(got, jpeg) {
		t.Fatalf("image data = %q", c[1].Source.Data)
	}
}

func TestStopReasonsMapOntoCorvidsSet(t *testing.T) {
	t.Parallel()
	cases := []struct {
		api  string
		want llm.StopReason
	}{
		{"end_turn", llm.StopEndTurn},
		{"tool_use", llm.StopToolUse},
		{"max_tokens", llm.StopMaxTokens},
		{"refusal", llm.StopRefusal},
		{"stop_sequence", llm.StopEndTurn},
		{"pause_turn", llm.StopEndTurn},
		{"model_context_window_exceeded", llm.StopMaxTokens},
	}
	fake := fakeanthropic.New(t)
	for _, c := range cases {
		fake.Enqueue(fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("x")}, StopReason: c.api})
	}
	m := newTestModel(t, fake, 0)
	for _, c := range cases {
		evs := mustCollect(t, m, llm.Request{Messages: []llm.Message{userText("x")}})
		if got := evs[len(evs)-1].StopReason; got != c.want {
			t.Errorf("stop_reason %s → %s, want %s", c.api, got, c.want)
		}
	}
}
