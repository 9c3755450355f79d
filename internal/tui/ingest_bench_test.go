package tui

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/acp"
)

// BenchmarkIngestOneCharChunks: the model taking one-character
// agent_message_chunks in batches of 1,000 (as the agent's queue hands
// them over), drawing a frame per batch; reported per chunk.
func BenchmarkIngestOneCharChunks(b *testing.B) {
	raw, _ := json.Marshal(chunk("agent_message_chunk", "x"))
	m := testModel()
	m.width, m.height = 100, 30
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.update(updateMsg{sessionID: "s1", raw: raw})
		if i%1000 == 999 {
			_ = m.View()
			m.printQ = m.printQ[:0]
		}
	}
}

// BenchmarkStreamOneCharChunks: one-character agent_message_chunks read
// from the agent's pipe by the ACP connection, queued (and merged) by the
// agent side, and taken by the model with a frame drawn per take, as the
// event loop does; reported per chunk. This is the TUI's whole cost of a
// streamed chunk short of the terminal.
func BenchmarkStreamOneCharChunks(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}}` + "\n")
	m, a, woken := benchAgent()
	pr, pw := io.Pipe()
	a.conn = acp.NewConn(pr, io.Discard, a, acp.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), LendParams: true}) // as startAgent
	served := make(chan struct{})
	go func() { _ = a.conn.Serve(context.Background(), time.Second); close(served) }()
	done := make(chan int)
	go func() {
		n := 0
		for n < b.N {
			<-woken
			for _, u := range a.takeUpdates(true) {
				m.update(u)
				var c textChunk
				_ = json.Unmarshal(u.rawUpdate(), &c)
				n += len(c.Content.Text) // one character a chunk
			}
			_ = m.View()
			m.printQ = m.printQ[:0]
		}
		done <- n
	}()
	b.ReportAllocs()
	b.ResetTimer()
	go func() {
		buf := bytes.Repeat(line, 1000)
		for i := 0; i < b.N; i += 1000 {
			_, _ = pw.Write(buf[:min(1000, b.N-i)*len(line)])
		}
	}()
	<-done
	b.StopTimer()
	pw.Close()
	<-served
}

// BenchmarkStreamTextChunks4K is BenchmarkStreamOneCharChunks for a long
// answer as corvid streams it: chunks of about 4 KiB (40 lines of 100
// bytes) of an answer of 100-byte lines (the TenMBAnswer benchmark of
// test/tui), reported per chunk; the model's finished lines are dropped at
// each take instead of printed. The chunks come through an OS pipe, as the
// agent's do, and each is handled on the connection's reader (as
// startAgent sets it) or handed to its dispatcher (as before
// NotifyOnReader); beside the time, the process's CPU and context
// switches per chunk. The chunks come as fast as the pipe takes them
// (flood), or one every 50 µs (paced: about corvid's own pace on the 10
// MB answer), which the writer waits for spinning, its CPU counted: the
// reader then finds the pipe empty and parks after each chunk, as it does
// in the TUI.
func BenchmarkStreamTextChunks4K(b *testing.B) {
	for _, pace := range []time.Duration{0, 50 * time.Microsecond} {
		for _, onReader := range []bool{false, true} {
			name := map[bool]string{false: "dispatcher", true: "reader"}[onReader]
			if pace > 0 {
				name += "-paced"
			}
			b.Run(name, func(b *testing.B) { streamTextChunks4K(b, onReader, pace) })
		}
	}
}

func streamTextChunks4K(b *testing.B, onReader bool, pace time.Duration) {
	text := strings.Repeat(strings.Repeat("0123456789", 9)+"lorem ips\n", 40)
	enc, _ := json.Marshal(text)
	line := []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":` +
		string(enc) + `},"messageId":"m1"}}}` + "\n")
	m, a, woken := benchAgent()
	pr, pw, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	a.conn = acp.NewConn(pr, io.Discard, a, acp.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		LendParams: true, NotifyOnReader: onReader}) // as startAgent
	served := make(chan struct{})
	go func() { _ = a.conn.Serve(context.Background(), time.Second); close(served) }()
	done := make(chan int)
	go func() {
		n := 0
		for n < b.N*len(text) {
			<-woken
			for _, u := range a.takeUpdates(true) {
				m.update(u)
				n += len(u.text.Content.Text)
			}
			_ = m.View()
			m.printQ = m.printQ[:0]
		}
		done <- n
	}()
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, sw0 := processUsage()
	go func() {
		next := time.Now()
		for range b.N {
			for pace > 0 && time.Now().Before(next) {
			}
			next = next.Add(pace)
			_, _ = pw.Write(line)
		}
	}()
	<-done
	cpu1, sw1 := processUsage()
	b.StopTimer()
	b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(sw1-sw0)/float64(b.N), "ctxsw/op")
	pw.Close()
	<-served
	pr.Close()
}

// benchAgent is a 100×30 model and an agent side whose send only wakes
// woken (the event loop's turn to take the queued updates).
func benchAgent() (*model, *agent, chan struct{}) {
	m := testModel()
	m.width, m.height = 100, 30
	woken := make(chan struct{}, 1)
	a := &agent{send: func(any) {
		select {
		case woken <- struct{}{}:
		default:
		}
	}}
	return m, a, woken
}
