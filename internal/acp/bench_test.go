package acp

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkNotify measures one agent_message_chunk session/update from
// Notify to the writer (io.Discard): encoding, queueing and the write.
func BenchmarkNotify(b *testing.B) {
	benchNotify(b, SessionNotification{SessionID: "0199a3c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d", Update: ContentChunk{
		SessionUpdate: "agent_message_chunk",
		Content:       TextBlock("Here is the change to parse.go: the loop now stops at the first blank line.\n"),
	}}, 0)
}

// benchNotify sends update from Notify through a served connection's
// writer to io.Discard, once per iteration; bytes, when not 0, is what
// b.SetBytes reports per send.
func benchNotify(b *testing.B, update SessionNotification, bytes int) {
	inR, inW := io.Pipe()
	c := NewConn(inR, io.Discard, &testHandler{}, Options{Logger: quietLogger()})
	done := make(chan error, 1)
	go func() { done <- c.Serve(context.Background(), time.Second) }()
	if bytes > 0 {
		b.SetBytes(int64(bytes))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := c.Notify("session/update", update); err != nil {
			b.Fatal(err)
		}
	}
	inW.Close() // Serve flushes every queued frame before it returns
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}

// BenchmarkDecode measures envelope decoding of a typical prompt request.
func BenchmarkDecode(b *testing.B) {
	benchDecode(b, []byte(`{"jsonrpc":"2.0","id":42,"method":"session/prompt","params":{"sessionId":"0199a3c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d","prompt":[{"type":"text","text":"`+
		strings.Repeat("Fix the failing test in parser_test.go. ", 20)+
		`"},{"type":"resource_link","uri":"file:///work/parser.go","name":"parser.go"}]}}`))
}

// benchDecode decodes line once per iteration.
func benchDecode(b *testing.B, line []byte) {
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeMessage(line); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadOneCharChunk measures the client side of streaming: one
// one-character agent_message_chunk session/update line from the pipe,
// through the read loop's decode and the dispatch queue, to the handler
// (issue 36: the terminal UI reads 200k of these a second).
func BenchmarkReadOneCharChunk(b *testing.B) {
	line := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"0199a3c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}}` + "\n"
	inR, inW := io.Pipe()
	var got atomic.Int64
	c := NewConn(inR, io.Discard, &testHandler{notify: func(context.Context, string, json.RawMessage) { got.Add(1) }},
		Options{Logger: quietLogger()})
	done := make(chan error, 1)
	go func() { done <- c.Serve(context.Background(), time.Second) }()
	batch := []byte(strings.Repeat(line, 1000))
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n += 1000 {
		k := min(1000, b.N-n)
		if _, err := inW.Write(batch[:k*len(line)]); err != nil {
			b.Fatal(err)
		}
	}
	inW.Close() // Serve handles every queued line before it returns
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if got.Load() != int64(b.N) {
		b.Fatalf("handled %d of %d lines", got.Load(), b.N)
	}
}

// BenchmarkEncodeTextChunk4K encodes the frame of one 4 KiB chunk of a
// long answer (lines of 100 bytes): what `corvid acp` spends per chunk of
// the 10 MB answer of test/tui's BenchmarkTenMBAnswer on its JSON.
func BenchmarkEncodeTextChunk4K(b *testing.B) {
	env := &wireMessage{JSONRPC: "2.0", Method: "session/update"}
	text := strings.Repeat(strings.Repeat("0123456789", 9)+"lorem ips\n", 41)[:4096]
	var payload any = SessionNotification{SessionID: "sess_0199a3c45e6f7a8b9c0d1e2f", Update: ContentChunk{
		SessionUpdate: "agent_message_chunk", Content: ContentBlock{Type: "text", Text: text}, MessageID: "msg_1"}}
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := encodeFrame(env, payload); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeTextChunk4K decodes a session/update line that carries
// a 4 KiB text chunk, as the terminal UI reads a long answer's (issue 36).
func BenchmarkDecodeTextChunk4K(b *testing.B) {
	text := strings.Repeat(`The quick brown fox jumps over the lazy dog, \"twice\".\n`, 4096/56)
	benchDecode(b, []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"0199a3c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d",`+
		`"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"`+text+`"},"messageId":"m1"}}}`))
}

// BenchmarkNotifyTextChunk4K sends one 4 KiB chunk of a long answer
// (lines of 100 bytes) from Notify through the writer to io.Discard:
// what `corvid acp` spends per chunk of test/tui's 10 MB answer between
// the agent's event and the write, its JSON included.
func BenchmarkNotifyTextChunk4K(b *testing.B) {
	text := strings.Repeat(strings.Repeat("0123456789", 9)+"lorem ips\n", 41)[:4096]
	benchNotify(b, SessionNotification{SessionID: "sess_0199a3c45e6f7a8b9c0d1e2f", Update: ContentChunk{
		SessionUpdate: "agent_message_chunk", Content: ContentBlock{Type: "text", Text: text}, MessageID: "msg_1"}}, len(text))
}
