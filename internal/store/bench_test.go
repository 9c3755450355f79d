package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// payload200 is a typical streamed chunk, about 200 bytes of JSON.
var payload200 = []byte(fmt.Sprintf(`{"content":{"type":"text","text":%q}}`, strings.Repeat("lorem ipsum ", 13)))

// BenchmarkAppend measures sustained Append throughput under group commit,
// including the final Flush that makes every event durable.
func BenchmarkAppend(b *testing.B) {
	s := newStore(b)
	mustCreate(b, s, Session{ID: "s", Cwd: "/w"})
	b.SetBytes(int64(len(payload200)))
	b.ResetTimer()
	for range b.N {
		if err := s.Append("s", "agent_message_chunk", payload200); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkEvents5k measures reading back a 5,000-event session.
func BenchmarkEvents5k(b *testing.B) {
	s := newStore(b)
	mustCreate(b, s, Session{ID: "s", Cwd: "/w"})
	for range 5000 {
		s.Append("s", "agent_message_chunk", payload200)
	}
	if err := s.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		evs, err := s.Events(context.Background(), "s")
		if err != nil || len(evs) != 5000 {
			b.Fatalf("%d events, %v", len(evs), err)
		}
	}
}

// BenchmarkTurnStart measures what the store does between a prompt and its
// first chunk on the wire: take the turn lease with the last seq, append the
// prompt's rows and the first chunk, and wait for their commit (then
// release the lease, untimed work of the turn's end included).
func BenchmarkTurnStart(b *testing.B) {
	s := newStore(b)
	mustCreate(b, s, Session{ID: "s", Cwd: "/w"})
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		release, _, err := s.AcquireTurn(ctx, "s", "bench")
		if err != nil {
			b.Fatal(err)
		}
		for _, kind := range []string{"user_message_chunk", "context", "agent_message_chunk"} {
			if err := s.Append("s", kind, payload200); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.AwaitCommit(ctx, s.Appended()); err != nil {
			b.Fatal(err)
		}
		release()
	}
}
