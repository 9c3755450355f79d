package acp

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// plainNotification has SessionNotification's fields and tags but not its
// appendJSON: encodeFrame gives it to encoding/json, the oracle.
type plainNotification SessionNotification

func chunkTexts() []string {
	texts := []string{"", "x", "hello, world", `quote " and backslash \ and slash /`, "tab\tnew\nline\rcr",
		"\b\f\x00\x01\x1f\x7f", "<html> & 'amp'", "emoji 🐦 and 中文", "line sep \u2028 para sep \u2029",
		"bad utf8 \xff\xfe end", "truncated \xe2\x82", "\xed\xa0\x80 surrogate", string(make([]byte, 70))}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		texts = append(texts, string(b))
	}
	return texts
}

func TestAppendFrameMatchesEncodingJSON(t *testing.T) {
	env := &wireMessage{JSONRPC: "2.0", Method: "session/update"}
	for _, text := range chunkTexts() {
		for i, msgID := range []string{"", "msg_1", "m\"\n\xff"} {
			metas := []Meta{nil, {"codebuddy.ai/conversationRequestId": "0198a1b2c3d47e5f8a9b0c1d2e3f4a5b"}, {"z": text, "a<": "b&", "\xff": ""}}
			n := SessionNotification{SessionID: "sess_\t" + text[:min(len(text), 3)], Update: ContentChunk{
				SessionUpdate: "agent_message_chunk", Content: ContentBlock{Type: "text", Text: text}, MessageID: msgID, Meta: metas[i]}}
			fast, err := encodeFrame(env, n)
			if err != nil {
				t.Fatal(err)
			}
			slow, err := encodeFrame(env, plainNotification(n))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(fast, slow) {
				t.Fatalf("text %q:\nfast %s\njson %s", text, fast, slow)
			}
		}
	}
}

// Chunks the fast path does not write (meta, annotations, other blocks,
// other updates) go to encoding/json.
func TestAppendFrameLeavesOtherUpdatesToEncodingJSON(t *testing.T) {
	for _, u := range []any{
		ContentChunk{SessionUpdate: "agent_message_chunk", Content: ContentBlock{Type: "text", Text: "a"}, Meta: Meta{"k": 1}},
		ContentChunk{SessionUpdate: "agent_message_chunk", Content: ContentBlock{Type: "text", Text: "a"}, Meta: Meta{"k": "v", "n": map[string]any{"depth": 1}}},
		ContentChunk{SessionUpdate: "agent_message_chunk", Content: ContentBlock{Type: "text", Text: "a", Meta: Meta{"k": 1}}},
		ContentChunk{SessionUpdate: "agent_message_chunk", Content: ContentBlock{Type: "text", Text: "a", Annotations: []byte(`{"priority":1}`)}},
		ContentChunk{SessionUpdate: "agent_message_chunk", Content: ContentBlock{Type: "image", Data: "AA==", MimeType: "image/png"}},
		ToolCallUpdate{SessionUpdate: "tool_call_update", ToolCallID: "c1", Status: "completed"},
	} {
		n := SessionNotification{SessionID: "s", Update: u}
		if _, ok := n.appendJSON(nil); ok {
			t.Errorf("the fast path took %+v", u)
		}
		env := &wireMessage{JSONRPC: "2.0", Method: "session/update"}
		a, _ := encodeFrame(env, n)
		b, _ := encodeFrame(env, plainNotification(n))
		if !bytes.Equal(a, b) {
			t.Errorf("%+v:\n%s\n%s", u, a, b)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range chunkTexts()[:13] {
		f.Add(s)
	}
	env := &wireMessage{JSONRPC: "2.0", Method: "session/update"}
	f.Fuzz(func(t *testing.T, text string) {
		n := SessionNotification{SessionID: "s", Update: ContentChunk{SessionUpdate: "agent_thought_chunk", Content: ContentBlock{Type: "text", Text: text}, MessageID: text}}
		fast, _ := encodeFrame(env, n)
		slow, _ := encodeFrame(env, plainNotification(n))
		if !bytes.Equal(fast, slow) {
			t.Fatalf("text %q:\nfast %s\njson %s", text, fast, slow)
		}
	})
}

// A streamed text chunk's frame is allocated once at its size, not grown
// from a small buffer: a 4 KiB chunk took eight allocations (and copies)
// of up to 8 KiB, a cost on every chunk of a long answer (issue 36).
func TestTextChunkFrameIsAllocatedOnce(t *testing.T) {
	env := &wireMessage{JSONRPC: "2.0", Method: "session/update"}
	text := strings.Repeat(strings.Repeat("0123456789", 9)+"lorem ips\n", 41)[:4096]
	n := SessionNotification{SessionID: "sess_0199a3c45e6f7a8b9c0d1e2f", Update: ContentChunk{
		SessionUpdate: "agent_message_chunk", Content: ContentBlock{Type: "text", Text: text}, MessageID: "msg_1"}}
	var payload any = n
	if allocs := testing.AllocsPerRun(20, func() {
		if _, err := encodeFrame(env, payload); err != nil {
			t.Fatal(err)
		}
	}); allocs != 1 {
		t.Errorf("encoding a 4 KiB text chunk's frame took %v allocations, want 1", allocs)
	}
}

// FuzzAppendStringMatchesEncodingJSON holds the escaper (eight bytes at a
// time where nothing needs an escape) to encoding/json's output, with HTML
// escaping on (json.Marshal's default) and off, at every offset of the
// words it reads.
func FuzzAppendStringMatchesEncodingJSON(f *testing.F) {
	for _, s := range chunkTexts() {
		f.Add(s)
	}
	f.Add("0123456<89abcdef\x7f\x80ü\u2028\u2029\xff&>\"\\\x1f ")
	f.Fuzz(func(t *testing.T, text string) {
		for off := 0; off < 8 && off <= len(text); off++ {
			s := text[off:]
			html, _ := json.Marshal(s)
			var plain bytes.Buffer
			enc := json.NewEncoder(&plain)
			enc.SetEscapeHTML(false)
			_ = enc.Encode(s)
			if got := appendStringHTML(nil, s, true); !bytes.Equal(got, html) {
				t.Fatalf("%q with html:\ngot  %s\nwant %s", s, got, html)
			}
			if got, want := appendString([]byte("x"), s), append([]byte("x"), bytes.TrimSuffix(plain.Bytes(), []byte("\n"))...); !bytes.Equal(got, want) {
				t.Fatalf("%q:\ngot  %s\nwant %s", s, got, want)
			}
		}
	})
}

// TestUnescapedRunFindsEveryByteThatNeedsAnEscape: each byte value, at
// each place of a word of plain text, stops the run at that word exactly
// when it is one the escaper must look at.
func TestUnescapedRunFindsEveryByteThatNeedsAnEscape(t *testing.T) {
	for _, html := range []bool{false, true} {
		for c := range 256 {
			b := byte(c)
			special := b >= utf8.RuneSelf || !plainASCII(b, html)
			for at := range 16 {
				buf := []byte(strings.Repeat("a", 16))
				buf[at] = b
				got := unescapedRun(string(buf), 0, html)
				want := 16
				if special {
					want = at &^ 7
				}
				if got != want {
					t.Errorf("byte %#x at %d (html %v): run ends at %d, want %d", b, at, html, got, want)
				}
			}
		}
	}
}
