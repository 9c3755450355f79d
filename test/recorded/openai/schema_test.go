package openai

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/corvid-agent/corvid/internal/jsonschema"
)

// openAPI is testdata/openapi-extract.json compiled: the request item
// schemas of OpenAI's published OpenAPI document (see SOURCES-openai.md).
var openAPI = sync.OnceValues(func() (*jsonschema.Schema, error) {
	b, err := os.ReadFile(filepath.Join("testdata", "openapi-extract.json"))
	if err != nil {
		return nil, err
	}
	return jsonschema.Compile(b)
})

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
	s, err := openAPI()
	if err != nil {
		t.Fatalf("compile the OpenAPI extract: %v", err)
	}
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
		b, _ := json.Marshal(it)
		if err := s.Validate(def, b); err != nil {
			t.Errorf("request %d input item %d is not a valid %s per OpenAI's OpenAPI schema: %v\n%s", reqNo, i, def, err, b)
		}
	}
}
