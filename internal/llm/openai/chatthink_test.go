package openai

import (
	"encoding/json"
	"testing"

	"github.com/corvid-agent/corvid/internal/config"
	"github.com/corvid-agent/corvid/internal/llm"
)

// TestChatThinkingPerPreset pins which Chat Completions presets get which
// reasoning control for each budget (the recorded suite proves Groq
// gpt-oss and OpenRouter against real answers; these are the rest).
func TestChatThinkingPerPreset(t *testing.T) {
	cases := []struct {
		provider, model string
		budget          int
		effort          any // reasoning_effort, nil for none
		reasoning       any // OpenRouter's reasoning object, nil for none
	}{
		{"groq", "openai/gpt-oss-20b", 8192, "medium", nil},
		{"groq", "qwen/qwen3-32b", 2048, "default", nil},
		{"xai", "grok-3-mini", 8192, "low", nil},
		{"xai", "grok-3-mini", 32000, "high", nil},
		{"xai", "grok-4", 32000, nil, nil},
		{"deepseek", "deepseek-reasoner", 16384, nil, nil},
		{"mistral", "magistral-medium-latest", 16384, nil, nil},
		{"cerebras", "gpt-oss-120b", 2048, "low", nil},
		{"ollama", "gpt-oss:20b", 32000, "high", nil},
		{"ollama", "qwen3:8b", 32000, nil, nil},
		{"openrouter", "anthropic/claude-sonnet-4.6", 32000, nil, map[string]any{"effort": "high"}},
		{"openrouter", "openai/gpt-oss-120b", 0, nil, nil},
	}
	for _, tc := range cases {
		p, ok := config.LookupProvider(tc.provider)
		if !ok {
			t.Fatalf("no preset %s", tc.provider)
		}
		m, err := newModel(p, llm.ProviderConfig{Provider: tc.provider, Model: tc.model, APIKey: "k"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(m.chatParams(llm.Request{Model: tc.model, ThinkingBudget: tc.budget, Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{llm.Text("hi")}}}}))
		var body map[string]any
		_ = json.Unmarshal(b, &body)
		got, _ := json.Marshal([]any{body["reasoning_effort"], body["reasoning"]})
		want, _ := json.Marshal([]any{tc.effort, tc.reasoning})
		if string(got) != string(want) {
			t.Errorf("%s:%s budget %d: [reasoning_effort, reasoning] = %s, want %s", tc.provider, tc.model, tc.budget, got, want)
		}
	}
}
