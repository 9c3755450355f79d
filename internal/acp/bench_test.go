package acp

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// BenchmarkNotify measures one agent_message_chunk session/update from
// Notify to the writer (io.Discard): encoding, queueing and the write.
func BenchmarkNotify(b *testing.B) {
	inR, inW := io.Pipe()
	c := NewConn(inR, io.Discard, &testHandler{}, Options{Logger: quietLogger()})
	done := make(chan error, 1)
	go func() { done <- c.Serve(context.Background(), time.Second) }()
	update := SessionNotification{SessionID: "0199a3c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d", Update: ContentChunk{
		SessionUpdate: "agent_message_chunk",
		Content:       TextBlock("Here is the change to parse.go: the loop now stops at the first blank line.\n"),
	}}
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
	line := []byte(`{"jsonrpc":"2.0","id":42,"method":"session/prompt","params":{"sessionId":"0199a3c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d","prompt":[{"type":"text","text":"` +
		strings.Repeat("Fix the failing test in parser_test.go. ", 20) +
		`"},{"type":"resource_link","uri":"file:///work/parser.go","name":"parser.go"}]}}`)
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeMessage(line); err != nil {
			b.Fatal(err)
		}
	}
}
