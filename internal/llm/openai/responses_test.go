package openai_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/llm"
	"github.com/corvid-agent/corvid/internal/testkit/fakeopenai"
)

func TestResponsesStreamsReasoningTextToolCallsAndUsage(t *testing.T) {
	fake := fakeopenai.New(t)
	reasoning := fakeopenai.Reasoning("Checking the file layout.")
	reasoning.EncryptedContent = "enc-blob-1"
	fake.Enqueue(fakeopenai.Response{
		Blocks: []fakeopenai.Block{
			reasoning,
			fakeopenai.Text("Let me read it."),
			fakeopenai.ToolCall("call_a", "read", `{"path":"go.mod","limit":20}`),
		},
		Usage: fakeopenai.Usage{InputTokens: 1000, OutputTokens: 50, CachedTokens: 800, ReasoningTokens: 30},
	})
	env := noKeyring(t)
	env["OPENAI_API_KEY"] = "sk-openai"
	env["OPENAI_BASE_URL"] = fake.BaseURL()
	m := open(t, env, "openai", "gpt-5")

	r := run(t.Context(), m, llm.Request{
		System:         "You are corvid.",
		Messages:       []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{llm.Text("what module is this?")}}},
		Tools:          []llm.ToolSpec{readTool},
		MaxTokens:      4096,
		ThinkingBudget: 8000,
	})
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got := r.text(llm.EventThinkingDelta); got != "Checking the file layout." {
		t.Errorf("thinking = %q", got)
	}
	sig := r.find(llm.EventSignature)
	if sig.Index != r.find(llm.EventThinkingDelta).Index || !strings.Contains(sig.Text, "enc-blob-1") {
		t.Errorf("signature = %+v", sig)
	}
	if got := r.text(llm.EventTextDelta); got != "Let me read it." {
		t.Errorf("text = %q", got)
	}
	start, end := r.find(llm.EventToolUseStart), r.find(llm.EventToolUseEnd)
	if start.ToolUseID != "call_a" || start.ToolName != "read" || end.Index != start.Index || string(end.Input) != `{"path":"go.mod","limit":20}` {
		t.Errorf("tool start %+v end %+v", start, end)
	}
	if r.count(llm.EventToolUseDelta) < 2 || r.text(llm.EventToolUseDelta) != `{"path":"go.mod","limit":20}` {
		t.Errorf("argument deltas: %d, %q", r.count(llm.EventToolUseDelta), r.text(llm.EventToolUseDelta))
	}
	if u := r.find(llm.EventUsage).Usage; u != (llm.Usage{InputTokens: 200, OutputTokens: 50, CacheReadTokens: 800}) {
		t.Errorf("usage = %+v", u)
	}
	if last := r.events[len(r.events)-1]; last.Type != llm.EventStop || last.StopReason != llm.StopToolUse {
		t.Errorf("last = %+v", last)
	}

	req := fake.Requests()[0]
	if req.Path != "/v1/responses" || req.APIKey() != "sk-openai" {
		t.Errorf("request %s key %q", req.Path, req.APIKey())
	}
	b := req.Body
	if b["store"] != false || b["instructions"] != "You are corvid." || b["max_output_tokens"] != float64(4096) || b["stream"] != true {
		t.Errorf("body = %s", req.Raw)
	}
	if rs, _ := b["reasoning"].(map[string]any); rs["effort"] != "medium" || rs["summary"] != "auto" {
		t.Errorf("reasoning = %v", b["reasoning"])
	}
	if inc, _ := b["include"].([]any); len(inc) != 1 || inc[0] != "reasoning.encrypted_content" {
		t.Errorf("include = %v", b["include"])
	}

	// The next turn sends the reasoning item, the call and its output back.
	fake.Enqueue(fakeopenai.Response{Blocks: []fakeopenai.Block{fakeopenai.Text("It is corvid.")}})
	history := []llm.Message{
		{Role: llm.RoleUser, Parts: []llm.Part{llm.Text("what module is this?")}},
		{Role: llm.RoleAssistant, Parts: []llm.Part{
			{Type: llm.PartThinking, Text: r.text(llm.EventThinkingDelta), Signature: sig.Text},
			llm.Text("Let me read it."),
			{Type: llm.PartToolUse, ToolUseID: "call_a", ToolName: "read", Input: end.Input},
		}},
		{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartToolResult, ToolUseID: "call_a", Text: "module x"}}},
	}
	if r2 := run(t.Context(), m, llm.Request{Messages: history}); r2.err != nil || r2.text(llm.EventTextDelta) != "It is corvid." {
		t.Fatalf("second turn: %v %q", r2.err, r2.text(llm.EventTextDelta))
	}
	var body struct {
		Input []map[string]any `json:"input"`
	}
	if err := json.Unmarshal(fake.Requests()[1].Raw, &body); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, it := range body.Input {
		k, _ := it["type"].(string)
		if k == "" || k == "message" {
			k = "message:" + it["role"].(string)
		}
		kinds = append(kinds, k)
	}
	if got := strings.Join(kinds, ","); got != "message:user,reasoning,message:assistant,function_call,function_call_output" {
		t.Fatalf("input items = %s", got)
	}
	if body.Input[1]["encrypted_content"] != "enc-blob-1" || body.Input[4]["call_id"] != "call_a" || body.Input[4]["output"] != "module x" {
		t.Errorf("items = %v", body.Input)
	}
}

func TestResponsesTerminalStates(t *testing.T) {
	fake := fakeopenai.New(t)
	env := noKeyring(t)
	env["OPENAI_API_KEY"] = "sk"
	env["OPENAI_BASE_URL"] = fake.BaseURL()
	m := open(t, env, "openai", "gpt-5-mini")

	fake.Enqueue(fakeopenai.Response{Blocks: []fakeopenai.Block{fakeopenai.Text("cut short")}, FinishReason: "length"})
	if r := run(t.Context(), m, userHi()); r.err != nil || r.events[len(r.events)-1].StopReason != llm.StopMaxTokens {
		t.Errorf("incomplete: %v %+v", r.err, r.events)
	}

	fake.Enqueue(fakeopenai.Response{Blocks: []fakeopenai.Block{fakeopenai.Text("partial answer here")}, Fault: fakeopenai.StreamError(6, "server_error", "The model crashed")})
	r := run(t.Context(), m, userHi())
	var le *llm.Error
	if !errors.As(r.err, &le) || !le.Retryable || !strings.Contains(le.Message, "OpenAI reported an error server_error: The model crashed") {
		t.Fatalf("stream error: %v", r.err)
	}
	if r.text(llm.EventTextDelta) == "" {
		t.Error("no text before the error")
	}

	fake.Enqueue(fakeopenai.Response{Blocks: []fakeopenai.Block{fakeopenai.Text("partial answer here")}, Fault: fakeopenai.Cut(6)})
	r = run(t.Context(), m, userHi())
	if !errors.As(r.err, &le) || !le.Retryable || !strings.Contains(le.Message, "closed the stream") {
		t.Fatalf("cut: %v", r.err)
	}

	fake.Enqueue(fakeopenai.Response{Fault: fakeopenai.RateLimit(0)})
	r = run(t.Context(), m, userHi())
	if !errors.As(r.err, &le) || le.Status != 429 || !le.Retryable || !strings.HasPrefix(le.Message, "OpenAI returned 429 rate_limit_exceeded") {
		t.Fatalf("429: %v", r.err)
	}
}
