package agent

import (
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/corvid-agent/corvid/internal/llm"
)

// The hand decoders of stored rows must agree with encoding/json on every
// input they accept, and accept what the event log writes for text chunks
// and text context.
func checkChunkDecoder(t *testing.T, p []byte) bool {
	t.Helper()
	var d rowDecoder
	var fast Event
	if !d.chunk(p, &fast) {
		return false
	}
	var want Event
	if err := json.Unmarshal(p, &want); err != nil {
		t.Fatalf("chunk decoder accepted %q, encoding/json: %v", p, err)
	}
	if !reflect.DeepEqual(fast, want) {
		t.Fatalf("chunk %q:\n got %#v %#v\nwant %#v %#v", p, fast, fast.Content, want, want.Content)
	}
	return true
}

func checkMessageDecoder(t *testing.T, p []byte) bool {
	t.Helper()
	var d rowDecoder
	fast, ok := d.message(p)
	if !ok {
		return false
	}
	var want llm.Message
	if err := json.Unmarshal(p, &want); err != nil {
		t.Fatalf("message decoder accepted %q, encoding/json: %v", p, err)
	}
	if !reflect.DeepEqual(fast, want) {
		t.Fatalf("message %q:\n got %#v\nwant %#v", p, fast, want)
	}
	return true
}

// jsonTexts are strings whose JSON takes every escape encoding/json writes or
// reads.
var jsonTexts = []string{"", "x", "hello, world", "a\nb\tc\r\"q\" \\ /", "<html> & co", "\u2028\u2029", "\x00\x1f\x7f",
	"héllo — 日本語 🐦", "\xff\xfe bad utf-8", "\ufffd", "🐦\n"}

func TestRowDecodersReadWhatTheLogWrites(t *testing.T) {
	for _, text := range jsonTexts {
		for _, ev := range []Event{
			chunk(EventMessageChunk, "msg_1", text),
			chunk(EventThoughtChunk, "", text),
			{Kind: EventUserChunk, MessageID: "user_1", Content: &Block{Type: BlockText, Text: text},
				Meta: map[string]any{"codebuddy.ai/conversationRequestId": "r1", "n": 1.5, "l": []any{"a", nil, true}}},
		} {
			p, err := json.Marshal(ev)
			if err != nil {
				t.Fatal(err)
			}
			if !checkChunkDecoder(t, p) && text != "" && utf8Valid(text) {
				t.Errorf("chunk decoder refused %s", p)
			}
		}
		m := llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{
			{Type: llm.PartThinking, Text: text, Signature: "sig"}, llm.Text(text),
			{Type: llm.PartToolUse, ToolUseID: "c1", ToolName: "read", Input: json.RawMessage(`{"path":"a\"b","n":[1,{"x":null}]}`)},
			{Type: llm.PartToolResult, ToolUseID: "c1", Text: text, IsError: true},
		}}
		p, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if !checkMessageDecoder(t, p) && utf8Valid(text) {
			t.Errorf("message decoder refused %s", p)
		}
	}
	for _, p := range []string{`{"role":"user","parts":null}`, `{"role":"user","parts":[]}`,
		`{"role":"user","parts":[{"type":"tool_use","input":7}]}`, `{"role":"user","parts":[{"type":"tool_use","input":"s"},{"type":"text"}]}`} {
		if !checkMessageDecoder(t, []byte(p)) {
			t.Errorf("message decoder refused %s", p)
		}
	}
}

func utf8Valid(s string) bool { return utf8.ValidString(s) }

func FuzzRowDecoders(f *testing.F) {
	for _, text := range jsonTexts {
		p, _ := json.Marshal(chunk(EventMessageChunk, "m", text))
		f.Add(p)
		p, _ = json.Marshal(llm.Message{Role: llm.RoleUser, Parts: []llm.Part{llm.Text(text),
			{Type: llm.PartToolUse, ToolUseID: "c", Input: json.RawMessage(`{"a":[1,"]"]}`)}}})
		f.Add(p)
	}
	f.Add([]byte(`{"kind":"agent_message_chunk","content":{"type":"text","text":"\ud83d\udc26\ud800x\udc00"}}`))
	f.Add([]byte(`{"kind":"agent_message_chunk","content":{"type":"text","text":"a"},"meta":{"a":1},"x":{}}`))
	f.Add([]byte(`{"role":"user","parts":[{"type":"tool_use","input":12 }]}`))
	f.Fuzz(func(t *testing.T, p []byte) {
		checkChunkDecoder(t, p)
		checkMessageDecoder(t, p)
	})
}
