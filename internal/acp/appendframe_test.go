package acp

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
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

// TestWireTextChunkFrameIsTheChunksFrame: a chunk given with its text in
// wire form (as the agent escaped it for the chunk's row) is written as
// encoding/json writes the plain chunk, _meta of strings or not.
func TestWireTextChunkFrameIsTheChunksFrame(t *testing.T) {
	env := &wireMessage{JSONRPC: "2.0", Method: "session/update"}
	metas := []Meta{nil, {"turnId": "t<1>"}, {"b": "2", "a": "1"}, {"n": 1.5}}
	for i, text := range chunkTexts() {
		q, _ := json.Marshal(text)
		c := ContentChunk{SessionUpdate: "agent_message_chunk", Content: TextBlock(text), MessageID: []string{"", "msg_1", "m&<2>"}[i%3], Meta: metas[i%len(metas)]}
		wire, _ := encodeFrame(env, SessionNotification{SessionID: "s", Update: WireTextChunk{Chunk: c, TextJSON: string(q[1 : len(q)-1])}})
		want, _ := encodeFrame(env, plainNotification(SessionNotification{SessionID: "s", Update: c}))
		if !bytes.Equal(wire, want) {
			t.Errorf("text %q:\nwire %s\njson %s", text, wire, want)
		}
	}
}
