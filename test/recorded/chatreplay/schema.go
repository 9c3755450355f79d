package chatreplay

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/corvid-agent/corvid/internal/jsonschema"
)

// openAPI is test/recorded/openai/testdata/openapi-extract.json compiled:
// request schemas of OpenAI's published OpenAPI document (see
// SOURCES-openai.md; its digest is checked with the openai fixtures).
var openAPI = sync.OnceValues(func() (*jsonschema.Schema, error) {
	_, here, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(here), "..", "openai", "testdata", "openapi-extract.json"))
	if err != nil {
		return nil, err
	}
	return jsonschema.Compile(b)
})

// Validate checks v against the published schema named def (a key of the
// extract's $defs, e.g. "ReasoningItem").
func Validate(t testing.TB, def string, v any) error {
	t.Helper()
	s, err := openAPI()
	if err != nil {
		t.Fatalf("compile the OpenAPI extract: %v", err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return s.Validate(def, b)
}
