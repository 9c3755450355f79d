package acp

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// A Run does not queue more than maxRunBufs buffers ahead of the writer:
// a client that reads slowly holds the replay back instead of letting it
// queue the whole session's frames. The frames all arrive, in order.
func TestRunWaitsForTheWriter(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := NewConn(inR, outW, &testHandler{}, Options{Logger: quietLogger()})
	done := make(chan error, 1)
	go func() { done <- c.Serve(context.Background(), time.Second) }()
	const frames = 4000 // about 40 run buffers
	text := strings.Repeat("x", 300)
	added := make(chan error, 1)
	go func() {
		r := c.NewRun()
		for range frames {
			if err := r.TextChunk("s1", "agent_message_chunk", text, "m1", nil); err != nil {
				added <- err
				return
			}
		}
		added <- r.Flush()
	}()
	var got bytes.Buffer
	buf := make([]byte, 4096)
	for bytes.Count(got.Bytes(), []byte("\n")) < frames {
		n, err := outR.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		got.Write(buf[:n])
		if q := len(c.out); q > maxRunBufs {
			t.Fatalf("%d run buffers queued ahead of the writer, want at most %d", q, maxRunBufs)
		}
	}
	if err := <-added; err != nil {
		t.Fatal(err)
	}
	inW.Close()
	go io.Copy(io.Discard, outR)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + text + `"},"messageId":"m1"}}}` + "\n"
	if got.String() != strings.Repeat(want, frames) {
		t.Fatalf("frames differ from %d copies of %s", frames, want)
	}
}
