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
				Tags: Tags{TurnID: "r1", Member: &Member{ID: "sub_1", Name: "a", ParentToolCallID: "t1", Depth: 2}, FinalOutput: &FinalOutputTag{Format: "json"}}},
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
		checkWireDecoder(t, p)
		checkMessageDecoder(t, p)
	})
}

// checkWireDecoder holds the wire-form chunk decoder to encoding/json: the
// text it keeps is the one json.Unmarshal reads, in the form json.Marshal
// writes it.
func checkWireDecoder(t *testing.T, p []byte) bool {
	t.Helper()
	d := rowDecoder{wire: true}
	var fast Event
	if !d.chunk(p, &fast) {
		return false
	}
	var want Event
	if err := json.Unmarshal(p, &want); err != nil {
		t.Fatalf("chunk decoder accepted %q, encoding/json: %v", p, err)
	}
	b := fast.Content
	enc, _ := json.Marshal(want.Content.Text)
	if b.Text != "" || b.TextJSON != string(enc[1:len(enc)-1]) || b.TextLen != len(want.Content.Text) {
		t.Fatalf("chunk %q: wire text %q (%d bytes), want %s (%d)", p, b.TextJSON, b.TextLen, enc, len(want.Content.Text))
	}
	fast.Content = b.Decoded()
	if !reflect.DeepEqual(fast, want) {
		t.Fatalf("chunk %q:\n got %#v %#v\nwant %#v %#v", p, fast, fast.Content, want, want.Content)
	}
	return true
}

func TestWireDecoderKeepsWhatJSONMarshalWrites(t *testing.T) {
	for _, text := range jsonTexts {
		p, _ := json.Marshal(chunk(EventMessageChunk, "msg_1", text))
		if !checkWireDecoder(t, p) && text != "" && utf8Valid(text) {
			t.Errorf("wire decoder refused %s", p)
		}
	}
	// Escapes json.Marshal does not write: decoded and written again.
	for _, s := range []string{`\/`, `\u00e9`, `\u001F`, `\u0008`, `\ufffd`, `\uFFFD`, `\u003C`, `\ud83d\udc26`, `\ud800`, "\u2028", "\x7f", `\u0041`} {
		checkWireDecoder(t, []byte(`{"kind":"agent_message_chunk","content":{"type":"text","text":"a`+s+`b"}}`))
	}
}

// FuzzWireString: a string the wire scan takes as json.Marshal's form is
// exactly what json.Marshal writes for the text it decodes to.
func FuzzWireString(f *testing.F) {
	for _, text := range jsonTexts {
		enc, _ := json.Marshal(text)
		f.Add(string(enc[1 : len(enc)-1]))
	}
	for _, s := range []string{`\/`, `\u00e9`, `\u001F`, `\u001f`, `\u0008`, `\b`, `\ufffd`, `\u003C`, `\u003c`, `\ud83d\udc26`, "\u2028", `\u2028`, "\xe2\x80", `\`, `\u12`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		s := scan{p: []byte(`"` + raw + `"`)}
		got, n, ok := s.wireStr()
		if !ok {
			return
		}
		if s.i != len(s.p) {
			return // a quote inside raw ended the string early: not the case below
		}
		var text string
		if err := json.Unmarshal(s.p, &text); err != nil {
			t.Fatalf("wire scan took %q, encoding/json: %v", s.p, err)
		}
		enc, _ := json.Marshal(text)
		if string(got) != raw || string(enc) != `"`+raw+`"` || n != len(text) {
			t.Fatalf("wire scan took %q (%d bytes); json.Marshal writes its text %q as %s", raw, n, text, enc)
		}
	})
}
