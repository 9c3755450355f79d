package openai

import (
	"encoding/json"
	"testing"

	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/llm"
)

// TestReasoningEchoPerPreset pins each preset's documented rule for which
// assistant messages carry their reasoning back as reasoning_content, over
// a history of two turns: a finished tool loop (call, answer) and the
// current one (call, its result). The recorded suite proves the Z.AI
// Coding Plan, llama.cpp and DeepSeek against follow-ups the real servers
// accepted; these pin the rest of each rule, and Moonshot's and Kimi for
// Coding's, for which no public recording of their own API was found.
func TestReasoningEchoPerPreset(t *testing.T) {
	call := func(id, thought string) llm.Message {
		return llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{
			{Type: llm.PartThinking, Text: thought},
			{Type: llm.PartToolUse, ToolUseID: id, ToolName: "read", Input: json.RawMessage(`{}`)},
		}}
	}
	result := func(id string) llm.Message {
		return llm.Message{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartToolResult, ToolUseID: id, Text: "ok"}}}
	}
	history := []llm.Message{
		{Role: llm.RoleUser, Parts: []llm.Part{llm.Text("first")}},
		call("c1", "t1"), result("c1"),
		{Role: llm.RoleAssistant, Parts: []llm.Part{{Type: llm.PartThinking, Text: "t2"}, llm.Text("answer")}},
		{Role: llm.RoleUser, Parts: []llm.Part{llm.Text("second")}},
		call("c2", "t3"), result("c2"),
	}
	// The reasoning_content of the three assistant messages, in order.
	cases := map[string][3]string{
		"deepseek":        {"t1", "t2", "t3"}, // every message of a turn with tool calls
		"zai-coding-plan": {"t1", "t2", "t3"}, // preserved thinking: all
		"zai":             {"", "", "t3"},     // interleaved: the current loop
		"llamacpp":        {"", "", "t3"},     // gpt-oss: the current loop
		"openrouter":      {"", "", ""},       // reasoning_details instead
		"xai":             {"", "", ""},
		"groq":            {"", "", ""},
		"moonshotai":      {"t1", "", "t3"}, // Kimi: tool-call messages, every turn
		"kimi-for-coding": {"t1", "", "t3"},
		"xiaomi":          {"", "", ""},
		"ollama":          {"", "", ""},
		"vllm":            {"", "", ""},
	}
	for name, want := range cases {
		p, ok := config.LookupProvider(name)
		if !ok {
			t.Fatalf("no preset %s", name)
		}
		m, err := newModel(p, llm.ProviderConfig{Provider: name, Model: "m", APIKey: "k"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, msg := range m.chatParams(llm.Request{Model: "m", Messages: history}).Messages {
			if msg.Role == "assistant" {
				got = append(got, msg.ReasoningContent)
			}
		}
		if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
			t.Errorf("%s: reasoning_content of the assistant messages %q, want %q", name, got, want)
		}
	}
}

// TestCurrentLoopStartsAfterTheLastPrompt checks where the current tool loop
// begins: after the last user message that is more than tool results.
func TestCurrentLoopStartsAfterTheLastPrompt(t *testing.T) {
	prompt := llm.Message{Role: llm.RoleUser, Parts: []llm.Part{llm.Text("p")}}
	asst := llm.Message{Role: llm.RoleAssistant}
	results := llm.Message{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartToolResult, ToolUseID: "x"}}}
	cases := []struct {
		msgs []llm.Message
		want int
	}{
		{nil, 0},
		{[]llm.Message{prompt}, 1},
		{[]llm.Message{prompt, asst, results, asst, results}, 1},
		{[]llm.Message{prompt, asst, results, asst, prompt, asst, results}, 5},
		{[]llm.Message{asst, results}, 0},
	}
	for i, tc := range cases {
		if got := currentLoop(tc.msgs); got != tc.want {
			t.Errorf("case %d: currentLoop = %d, want %d", i, got, tc.want)
		}
	}
}

// TestGptOSSOnLlamaCppGetsContentOrReasoningNotBoth: gpt-oss's chat
// template, which llama.cpp applies, refuses a tool-call message carrying
// both content and thinking ("Cannot pass both content and thinking in an
// assistant message with tool calls"). Such a message goes back with its
// content only; one without content keeps its reasoning. Other models on
// llama.cpp get both.
func TestGptOSSOnLlamaCppGetsContentOrReasoningNotBoth(t *testing.T) {
	p, _ := config.LookupProvider("llamacpp")
	withText := llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{
		{Type: llm.PartThinking, Text: "think"}, llm.Text("Let me look."),
		{Type: llm.PartToolUse, ToolUseID: "c1", ToolName: "read", Input: json.RawMessage(`{}`)},
	}}
	bare := llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{
		{Type: llm.PartThinking, Text: "think"},
		{Type: llm.PartToolUse, ToolUseID: "c1", ToolName: "read", Input: json.RawMessage(`{}`)},
	}}
	cases := []struct {
		model     string
		msg       llm.Message
		content   any
		reasoning string
	}{
		{"openai/gpt-oss-20b", withText, "Let me look.", ""},
		{"gpt-oss-120b", bare, nil, "think"},
		{"qwen3-8b", withText, "Let me look.", "think"},
	}
	for _, tc := range cases {
		m, err := newModel(p, llm.ProviderConfig{Provider: "llamacpp", Model: tc.model}, nil)
		if err != nil {
			t.Fatal(err)
		}
		msgs := []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{llm.Text("hi")}}, tc.msg,
			{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartToolResult, ToolUseID: "c1", Text: "ok"}}}}
		var a chatMessage
		for _, x := range m.chatParams(llm.Request{Model: tc.model, Messages: msgs}).Messages {
			if x.Role == "assistant" {
				a = x
			}
		}
		if a.Content != tc.content || a.ReasoningContent != tc.reasoning {
			t.Errorf("%s: content %v reasoning_content %q, want %v and %q", tc.model, a.Content, a.ReasoningContent, tc.content, tc.reasoning)
		}
	}
}
