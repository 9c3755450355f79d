package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// chunkPayload is what the agent stores for a one-character streamed chunk:
// agent.Event marshalled to JSON (kind, a msg_ + 24 hex id, a text block).
func chunkPayload(msg int, c byte) []byte {
	return fmt.Appendf(nil, `{"kind":"agent_message_chunk","messageId":"msg_%024x","content":{"type":"text","text":"%c"}}`, msg, c)
}

// dbBytes is the size of the database file and its WAL after a checkpoint.
func dbBytes(tb testing.TB, s *Store) int64 {
	tb.Helper()
	if _, err := s.writeDB.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		tb.Fatal(err)
	}
	var n int64
	for _, suf := range []string{"", "-wal"} {
		if fi, err := os.Stat(s.path + suf); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// appendChunks appends n one-character chunks to session "s", a new message
// every 200 chunks, and flushes.
func appendChunks(tb testing.TB, s *Store, n int) {
	tb.Helper()
	for i := range n {
		if err := s.Append("s", "agent_message_chunk", chunkPayload(i/200, 'a'+byte(i%26))); err != nil {
			tb.Fatal(err)
		}
	}
	if err := s.Flush(context.Background()); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkChunkAppend1M appends one million one-character chunks under
// group commit (the shape of a long streamed turn) and reports the append
// rate and the on-disk bytes per chunk.
func BenchmarkChunkAppend1M(b *testing.B) {
	const n = 1_000_000
	for b.Loop() {
		b.StopTimer()
		s := openStore(b, filepath.Join(b.TempDir(), "s.db"))
		mustCreate(b, s, Session{ID: "s", Cwd: "/w"})
		before := dbBytes(b, s)
		b.StartTimer()
		appendChunks(b, s, n)
		b.StopTimer()
		b.ReportMetric(float64(dbBytes(b, s)-before)/n, "B/chunk")
		s.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "chunks/s")
}

// BenchmarkLoad100k reads back a 100,000-event session and reports the heap
// still live when the last event is in hand (MiB-live), besides allocations.
func BenchmarkLoad100k(b *testing.B) {
	const n = 100_000
	s := openStore(b, filepath.Join(b.TempDir(), "s.db"))
	mustCreate(b, s, Session{ID: "s", Cwd: "/w"})
	appendChunks(b, s, n)
	b.Run("slice", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			evs, err := s.Events(context.Background(), "s")
			if err != nil || len(evs) != n {
				b.Fatalf("%d events, %v", len(evs), err)
			}
			b.StopTimer()
			b.ReportMetric(float64(liveHeap())/(1<<20), "MiB-live")
			runtime.KeepAlive(evs)
			b.StartTimer()
		}
	})
	if each, ok := any(s).(interface {
		EachEvent(context.Context, string, func(Event) error) error
	}); ok {
		b.Run("callback", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				k := 0
				err := each.EachEvent(context.Background(), "s", func(ev Event) error {
					k++
					if k == n {
						b.StopTimer()
						b.ReportMetric(float64(liveHeap())/(1<<20), "MiB-live")
						b.StartTimer()
					}
					return nil
				})
				if err != nil || k != n {
					b.Fatalf("%d events, %v", k, err)
				}
			}
		})
	}
}

// liveHeap collects garbage and returns the bytes still reachable.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
