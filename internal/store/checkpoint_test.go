package store

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// answerRows is mib MiB of 64 KiB rows, no two alike (no row is stored
// as a delta of the one before).
func answerRows(mib int) [][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	rows := make([][]byte, mib*16)
	for r := range rows {
		rows[r] = make([]byte, 64<<10)
		for i := range rows[r] {
			rows[r][i] = 'a' + byte(rng.IntN(26))
		}
	}
	return rows
}

// appendAnswer appends rows to session "s" the way a streamed answer's
// frames ask for them, each committed before the next.
func appendAnswer(tb testing.TB, s *Store, rows [][]byte) {
	tb.Helper()
	for _, row := range rows {
		if err := s.Append("s", "agent_message_chunk", row); err != nil {
			tb.Fatal(err)
		}
		if err := s.AwaitCommit(context.Background(), s.Appended()); err != nil {
			tb.Fatal(err)
		}
	}
}

// The write connection leaves checkpoints to the checkpointer (issue 36:
// a commit that checkpointed held up the frames of a streamed answer):
// it checkpoints by itself only past 64 MiB of log, and the checkpointer
// keeps the log copied back into the database file as the commits go on.
func TestCheckpointsRunBesideTheCommits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	s := openStore(t, path)
	mustCreate(t, s, Session{ID: "s", Cwd: "/w"})
	var pages int
	if err := s.writeDB.QueryRow(`PRAGMA wal_autocheckpoint`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if pages != walBackstop {
		t.Errorf("the write connection checkpoints by itself every %d pages, want %d", pages, walBackstop)
	}
	appendAnswer(t, s, answerRows(12))
	// The database file grows as the checkpointer copies the log into it
	// (the write connection alone would not before 64 MiB).
	deadline := time.Now().Add(10 * time.Second)
	for {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() >= 8<<20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 12 MiB committed the database file holds %d bytes: no checkpoint ran", fi.Size())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Closed, the store has written everything into the file.
	r := openStore(t, path)
	evs, err := r.Events(context.Background(), "s")
	if err != nil || len(evs) != 12*16 {
		t.Fatalf("reopened: %d events, %v; want %d", len(evs), err, 12*16)
	}
}

// BenchmarkAnswerCommits commits a 10 MiB answer in 64 KiB rows, each
// waited for as the ACP writer waits before it writes the row's frames:
// what the store adds to streaming such an answer.
func BenchmarkAnswerCommits(b *testing.B) {
	rows := answerRows(10)
	for b.Loop() {
		b.StopTimer()
		s := openStore(b, filepath.Join(b.TempDir(), "s.db"))
		mustCreate(b, s, Session{ID: "s", Cwd: "/w"})
		b.StartTimer()
		appendAnswer(b, s, rows)
		b.StopTimer()
		s.Close()
		b.StartTimer()
	}
}
