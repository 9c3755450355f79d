package openai

import (
	"testing"

	"github.com/corvid-agent/corvid/test/recorded/openaischema"
)

// itemSchema names the OpenAPI schema an input item of each type must
// satisfy.
var itemSchema = map[string]string{
	"reasoning":            "ReasoningItem",
	"function_call":        "FunctionToolCall",
	"function_call_output": "FunctionCallOutputItemParam",
	"message":              "EasyInputMessage",
}

// validateInput checks every input item of request reqNo against the
// published schema of its type.
func validateInput(t *testing.T, reqNo int, items []map[string]any) {
	t.Helper()
	for i, it := range items {
		typ, _ := it["type"].(string)
		if typ == "" && it["role"] != nil {
			typ = "message" // EasyInputMessage's type is optional
		}
		def, ok := itemSchema[typ]
		if !ok {
			t.Errorf("request %d input item %d has type %q, which corvid is not expected to send", reqNo, i, typ)
			continue
		}
		if err := openaischema.Validate(t, def, it); err != nil {
			t.Errorf("request %d input item %d is not a valid %s per OpenAI's OpenAPI schema: %v\n%s", reqNo, i, def, err, js(it))
		}
	}
}

// TestSchemaShapesRejectWhatTheSpecForbids keeps the hand-written shapes
// honest: each rejects a value its schema forbids and takes one it allows.
func TestSchemaShapesRejectWhatTheSpecForbids(t *testing.T) {
	cases := []struct {
		def  string
		good any
		bad  any
	}{
		{"ReasoningItem",
			map[string]any{"type": "reasoning", "id": "rs_1", "summary": []any{}},
			map[string]any{"type": "reasoning", "id": "rs_1"}}, // summary is required
		{"ReasoningItem",
			map[string]any{"type": "reasoning", "id": "rs_1", "summary": []any{map[string]any{"type": "summary_text", "text": "x"}}},
			map[string]any{"type": "reasoning", "id": "rs_1", "summary": []any{map[string]any{"type": "summary_text"}}}},
		{"FunctionToolCall",
			map[string]any{"type": "function_call", "call_id": "c", "name": "n", "arguments": "{}"},
			map[string]any{"type": "function_call", "call_id": "c", "name": "n"}},
		{"FunctionCallOutputItemParam",
			map[string]any{"type": "function_call_output", "call_id": "c", "output": "ok"},
			map[string]any{"type": "function_call_output", "output": "ok"}},
		{"EasyInputMessage",
			map[string]any{"role": "user", "content": "hi"},
			map[string]any{"role": "tool", "content": "hi"}},
		{"ChatCompletionRequestToolMessage",
			map[string]any{"role": "tool", "content": "ok", "tool_call_id": "c"},
			map[string]any{"role": "tool", "content": "ok"}},
		{"ChatCompletionRequestAssistantMessage",
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "c", "type": "function", "function": map[string]any{"name": "n", "arguments": "{}"}}}},
			map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"id": "c", "type": "function", "function": map[string]any{"name": "n"}}}}},
		{"ChatCompletionRequestUserMessage",
			map[string]any{"role": "user", "content": "hi"},
			map[string]any{"role": "user", "content": []any{}}},
		{"ReasoningEffort", "xhigh", "extreme"},
	}
	for _, c := range cases {
		if err := openaischema.Validate(t, c.def, c.good); err != nil {
			t.Errorf("%s rejects %s: %v", c.def, js(c.good), err)
		}
		if err := openaischema.Validate(t, c.def, c.bad); err == nil {
			t.Errorf("%s accepts %s", c.def, js(c.bad))
		}
	}
}
