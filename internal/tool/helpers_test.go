package tool

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// newTestEnv returns an Env rooted in a fresh temporary directory.
func newTestEnv(t *testing.T) *Env {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	terms := NewLocalTerminals()
	t.Cleanup(func() { terms.Close() })
	return &Env{Cwd: dir, Roots: []string{dir}, FS: LocalFS{}, Terminals: terms}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// run calls tl with input and fails the test on a Go error.
func run(t *testing.T, tl Tool, env *Env, input any) Result {
	t.Helper()
	res, err := tl.Run(context.Background(), env, Call{ID: "1", Input: mustJSON(t, input)})
	if err != nil {
		t.Fatalf("%s: Go error %v", tl.Name(), err)
	}
	return res
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func wantError(t *testing.T, res Result, substr string) {
	t.Helper()
	if !res.IsError {
		t.Fatalf("want an error result containing %q, got success: %s", substr, res.Output)
	}
	if !strings.Contains(res.Output, substr) {
		t.Fatalf("error %q does not contain %q", res.Output, substr)
	}
}

func wantOK(t *testing.T, res Result) {
	t.Helper()
	if res.IsError {
		t.Fatalf("unexpected error result: %s", res.Output)
	}
}

func TestBuiltinsHaveValidSchemasAndDescriptions(t *testing.T) {
	seen := map[string]bool{}
	for _, tl := range Builtins() {
		if seen[tl.Name()] {
			t.Errorf("duplicate tool %s", tl.Name())
		}
		seen[tl.Name()] = true
		if strings.TrimSpace(tl.Description()) == "" {
			t.Errorf("%s: empty description", tl.Name())
		}
		var schema struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(tl.InputSchema(), &schema); err != nil {
			t.Errorf("%s: schema is not JSON: %v", tl.Name(), err)
			continue
		}
		if schema.Type != "object" {
			t.Errorf("%s: schema type %q", tl.Name(), schema.Type)
		}
		for _, r := range schema.Required {
			if _, ok := schema.Properties[r]; !ok {
				t.Errorf("%s: required %q is not a property", tl.Name(), r)
			}
		}
		// Describe must not panic on bad input.
		_ = tl.Describe(&Env{Cwd: "/", Roots: []string{"/"}}, json.RawMessage(`{"bad":`))
	}
}

func TestBadInputIsAToolResultNotAGoError(t *testing.T) {
	env := newTestEnv(t)
	for _, tl := range Builtins() {
		res, err := tl.Run(context.Background(), env, Call{Input: json.RawMessage(`[1,2]`)})
		if err != nil {
			t.Errorf("%s: Go error for malformed input: %v", tl.Name(), err)
		}
		if !res.IsError {
			t.Errorf("%s: malformed input accepted: %s", tl.Name(), res.Output)
		}
	}
}
