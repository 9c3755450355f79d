package openai

import (
	"testing"

	"github.com/corvid-agent/corvid/test/recorded/chatreplay"
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
		if err := chatreplay.Validate(t, def, it); err != nil {
			t.Errorf("request %d input item %d is not a valid %s per OpenAI's OpenAPI schema: %v\n%s", reqNo, i, def, err, js(it))
		}
	}
}
