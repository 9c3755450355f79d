package acpkit

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/corvid-agent/corvid/internal/llm/script"
)

// The builder's output is read by corvid's own script parser (which rejects unknown
// fields) into the same script as the documented JSON form.
func TestScriptMatchesTheDocumentedFormat(t *testing.T) {
	built := NewScript(
		Reply(Thinking("Look first."), ToolCall("read", map[string]any{"path": "README.md"})),
		Reply(Text("Done."), Repeat("x", 3)).Stream(1, 0).Stop("max_tokens"),
		Reply(Text("partial")).Fail("Scripted provider returned 429 rate_limited", 429, 1, true),
	).Stream(8, 5).OnExhausted("repeat-last").ContextWindow(1000).Images()
	path := filepath.Join(t.TempDir(), "s.json")
	if err := built.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	got, err := script.Load(path)
	if err != nil {
		t.Fatalf("corvid cannot load the built script: %v\n%s", err, built.JSON())
	}
	want, err := script.Parse([]byte(`{"chunkSize":8,"delayMs":5,"onExhausted":"repeat-last","contextWindow":1000,"images":true,
		"responses":[
		{"parts":[{"type":"thinking","text":"Look first."},{"type":"tool_call","name":"read","input":{"path":"README.md"}}]},
		{"parts":[{"type":"text","text":"Done."},{"type":"text","text":"x","repeat":3}],"chunkSize":1,"stopReason":"max_tokens"},
		{"parts":[{"type":"text","text":"partial"}],
		 "error":{"message":"Scripted provider returned 429 rate_limited","status":429,"retryable":true,"afterParts":1}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("built script differs from the documented form:\n got %s\nwant %s", g, w)
	}
}

func TestEmptyScriptHasAResponsesList(t *testing.T) {
	if got := string(NewScript().JSON()); got != `{"responses":[]}` {
		t.Errorf("NewScript().JSON() = %s", got)
	}
}
