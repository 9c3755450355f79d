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

// dbFileSize is the size of the database file (not its log).
func dbFileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// awaitDBFile waits (up to 10 s) until the database file holds at least
// size bytes, the sign that a checkpoint copied the log into it.
func awaitDBFile(t *testing.T, path string, size int64, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for dbFileSize(t, path) < size {
		if time.Now().After(deadline) {
			t.Fatalf("%s: the database file holds %d bytes, want %d: no checkpoint ran", what, dbFileSize(t, path), size)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// While an answer streams, the checkpointer leaves the log alone (issue
// 36: a checkpoint beside the commits took the CPU the stream needed)
// and checkpoints in the first pause of the commits.
func TestCheckpointWaitsForAPauseInTheCommits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	s := openStore(t, path)
	// A pause the test's own commits never make, however slow the machine.
	s.ckpt.idle = 2 * time.Second
	mustCreate(t, s, Session{ID: "s", Cwd: "/w"})
	before := dbFileSize(t, path)
	appendAnswer(t, s, answerRows(6)) // 1,500 pages: past checkpointEvery
	if got := dbFileSize(t, path); got != before {
		t.Fatalf("the database file grew from %d to %d bytes while the commits went on: a checkpoint ran in the stream", before, got)
	}
	start := time.Now()
	awaitDBFile(t, path, 4<<20, "after the stream")
	if waited := time.Since(start); waited < time.Second {
		t.Errorf("the checkpoint ran %v after the last commit, before a pause of %v", waited, s.ckpt.idle)
	}
}

// A stream that never pauses still gets its log checkpointed once it holds
// checkpointBusy pages, before the write connection's backstop.
func TestCheckpointRunsInALongStreamPastBusy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	s := openStore(t, path)
	s.ckpt.idle = time.Hour // no pause counts
	s.ckpt.busy = 2000
	mustCreate(t, s, Session{ID: "s", Cwd: "/w"})
	appendAnswer(t, s, answerRows(10)) // 2,500 pages
	awaitDBFile(t, path, 6<<20, "2,500 pages into a stream with no pause")
}
