package store

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// skewClock is time.Now plus an adjustable offset.
type skewClock struct{ offset atomic.Int64 }

func (c *skewClock) now() time.Time          { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *skewClock) advance(d time.Duration) { c.offset.Add(int64(d)) }

func openWithClock(t *testing.T, path string, c *skewClock) *Store {
	t.Helper()
	var s *Store
	var err error
	if IsPostgres(path) {
		s, err = openPostgres(path, c.now)
	} else {
		s, err = open(path, c.now)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestAcquireIsExclusiveAcrossStores(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		path := tempDBPath(t)
		a, b := openStore(t, path), openStore(t, path)
		ctx := context.Background()

		release, err := a.Acquire(ctx, "s", "corvid acp")
		if err != nil {
			t.Fatal(err)
		}
		_, err = b.Acquire(ctx, "s", "corvid run")
		var busy *BusyError
		if !errors.Is(err, ErrBusy) || !errors.As(err, &busy) {
			t.Fatalf("second Acquire = %v, want ErrBusy", err)
		}
		if busy.Owner != "corvid acp" || !strings.Contains(err.Error(), "session s is in use by another corvid process (corvid acp, pid") {
			t.Errorf("busy error does not say who holds it: %v", err)
		}
		if _, err := a.Acquire(ctx, "s", "again"); !errors.Is(err, ErrBusy) {
			t.Errorf("Acquire twice in one Store = %v, want ErrBusy", err)
		}
		if r, err := b.Acquire(ctx, "other", "corvid run"); err != nil {
			t.Errorf("Acquire of another session = %v", err)
		} else {
			r()
		}

		release()
		release() // idempotent
		rb, err := b.Acquire(ctx, "s", "corvid run")
		if err != nil {
			t.Fatalf("Acquire after release = %v", err)
		}
		rb()
	})
}

func TestAcquireRacesHaveOneWinner(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		path := tempDBPath(t)
		stores := []*Store{openStore(t, path), openStore(t, path), openStore(t, path)}
		var wins atomic.Int32
		var wg sync.WaitGroup
		for i := range 12 {
			wg.Go(func() {
				_, err := stores[i%3].Acquire(context.Background(), "s", "racer")
				switch {
				case err == nil:
					wins.Add(1)
				case !errors.Is(err, ErrBusy):
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if wins.Load() != 1 {
			t.Errorf("%d goroutines acquired the lease, want 1", wins.Load())
		}
	})
}

func TestAcquireTakesOverLeaseWithOldHeartbeat(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		path := tempDBPath(t)
		var ca, cb skewClock
		a, b := openWithClock(t, path, &ca), openWithClock(t, path, &cb)
		ctx := context.Background()
		if _, err := a.Acquire(ctx, "s", "stalled"); err != nil {
			t.Fatal(err)
		}

		// a refreshes at +10 s; at +20 s the heartbeat is 10 s old: still held.
		ca.advance(10 * time.Second)
		a.heartbeat()
		cb.advance(20 * time.Second)
		if _, err := b.Acquire(ctx, "s", "taker"); !errors.Is(err, ErrBusy) {
			t.Fatalf("Acquire with a fresh heartbeat = %v, want ErrBusy", err)
		}
		// a stops refreshing; at +26 s the heartbeat is 16 s old: stale.
		cb.advance(6 * time.Second)
		release, err := b.Acquire(ctx, "s", "taker")
		if err != nil {
			t.Fatalf("Acquire of a stale lease = %v", err)
		}
		defer release()
		// a's late release must not free b's lease.
		a.release("s")
		if _, err := a.Acquire(ctx, "s", "stalled"); !errors.Is(err, ErrBusy) {
			t.Errorf("lease freed by its former holder: Acquire = %v", err)
		}
	})
}

func TestAcquireTakesOverLeaseOfDeadProcess(t *testing.T) {
	s := newStore(t)
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("cannot run true:", err)
	}
	dead := cmd.Process.Pid
	if _, err := s.writeDB.Exec(`INSERT INTO leases (session_id, holder, owner, host, pid, heartbeat) VALUES ('s', 'x', 'crashed', ?, ?, ?)`,
		s.lease.host, dead, time.Now().UnixNano()); err != nil {
		t.Fatal(err)
	}
	release, err := s.Acquire(context.Background(), "s", "survivor")
	if err != nil {
		t.Fatalf("Acquire of a dead process's fresh lease = %v", err)
	}
	release()

	// A live process on another host with a fresh heartbeat is respected.
	if _, err := s.writeDB.Exec(`INSERT INTO leases (session_id, holder, owner, host, pid, heartbeat) VALUES ('t', 'y', 'remote', 'elsewhere', ?, ?)`,
		dead, time.Now().UnixNano()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Acquire(context.Background(), "t", "survivor"); !errors.Is(err, ErrBusy) {
		t.Errorf("Acquire of another host's fresh lease = %v, want ErrBusy", err)
	}
}

func TestCloseReleasesLeases(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		path := tempDBPath(t)
		a, b := openStore(t, path), openStore(t, path)
		if _, err := a.Acquire(context.Background(), "s", "a"); err != nil {
			t.Fatal(err)
		}
		a.Close()
		release, err := b.Acquire(context.Background(), "s", "b")
		if err != nil {
			t.Fatalf("Acquire after the holder closed = %v", err)
		}
		release()
	})
}

func TestLeaseRowLeftByAFailedReleaseDoesNotLockOutItsOwnStore(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		s := openStore(t, tempDBPath(t))
		ctx := context.Background()
		if _, err := s.Acquire(ctx, "s", "corvid acp"); err != nil {
			t.Fatal(err)
		}
		// What a release leaves when its DELETE fails (disk full): the row
		// stays, the Store no longer holds the lease.
		s.lease.mu.Lock()
		delete(s.lease.held, "s")
		s.lease.mu.Unlock()
		release, err := s.Acquire(ctx, "s", "corvid acp")
		if err != nil {
			t.Fatalf("own leftover lease blocked the session: %v", err)
		}
		release()
	})
}

// AcquireTurn takes the same lease as Acquire, written with the turn's
// first commit, and reads the last seq as LastSeq would: this Store's
// queued events and another Store's committed ones included.
func TestAcquireTurnTakesTheLeaseAndReadsTheLastSeq(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		path := tempDBPath(t)
		a, b := openStore(t, path), openStore(t, path)
		ctx := context.Background()
		if err := a.CreateSession(ctx, Session{ID: "s", Cwd: "/w"}); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := b.Append("s", "k", []byte("{}")); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if err := a.Append("s", "k", []byte(`{"queued":true}`)); err != nil { // not committed yet
			t.Fatal(err)
		}
		release, last, err := a.AcquireTurn(ctx, "s", "corvid acp")
		if err != nil || last != 3 {
			t.Fatalf("AcquireTurn = %d, %v; want 3 (2 from b, 1 queued in a)", last, err)
		}
		if _, _, err := a.AcquireTurn(ctx, "s", "again"); !errors.Is(err, ErrBusy) {
			t.Errorf("AcquireTurn twice in one Store = %v, want ErrBusy", err)
		}
		// The turn's first rows write the lease.
		if err := a.Append("s", "prompt", []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
		if err := a.Flush(ctx); err != nil {
			t.Fatalf("the turn's first commit: %v", err)
		}
		if err := a.LeaseLost("s"); err != nil {
			t.Errorf("LeaseLost after the first commit = %v", err)
		}
		if _, _, err := b.AcquireTurn(ctx, "s", "corvid run"); !errors.Is(err, ErrBusy) {
			t.Errorf("AcquireTurn while a holds the lease = %v, want ErrBusy", err)
		}
		if _, err := b.Acquire(ctx, "s", "corvid run"); !errors.Is(err, ErrBusy) {
			t.Errorf("Acquire while a holds the lease = %v, want ErrBusy", err)
		}
		release()
		rb, last, err := b.AcquireTurn(ctx, "s", "corvid run")
		if err != nil || last != 4 {
			t.Fatalf("AcquireTurn after release = %d, %v; want 4", last, err)
		}
		rb()
		if _, last, err := a.AcquireTurn(ctx, "unknown", "x"); err != nil || last != 0 {
			t.Errorf("AcquireTurn of a session without events = %d, %v; want 0", last, err)
		}
	})
}

// leaseRows returns the lease rows of session s as "holder-owner".
func leaseRows(t *testing.T, s *Store, sessionID string) []string {
	t.Helper()
	rows, err := s.readDB.Query(`SELECT holder, owner FROM leases WHERE session_id = ?`, sessionID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var h, o string
		if err := rows.Scan(&h, &o); err != nil {
			t.Fatal(err)
		}
		out = append(out, h+"-"+o)
	}
	return out
}

// Two Stores (two processes) claim one session's lease at once, both
// reading it free: the first commit wins and writes the lease; the other's
// commit finds it taken and drops its turn's rows, and every later row of
// that turn, and LeaseLost says who holds the session.
func TestAcquireTurnRaceHasOneWinnerWhoseRowsAloneAreStored(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		path := tempDBPath(t)
		a, b := openStore(t, path), openStore(t, path)
		ctx := context.Background()
		if err := a.CreateSession(ctx, Session{ID: "s", Cwd: "/w"}); err != nil {
			t.Fatal(err)
		}
		ra, _, err := a.AcquireTurn(ctx, "s", "A")
		if err != nil {
			t.Fatal(err)
		}
		defer ra()
		rb, _, err := b.AcquireTurn(ctx, "s", "B") // a's claim is not written yet
		if err != nil {
			t.Fatalf("AcquireTurn while another Store's claim is not written = %v", err)
		}
		defer rb()
		if got := leaseRows(t, a, "s"); len(got) != 0 {
			t.Fatalf("lease rows before any commit: %v", got)
		}
		if err := b.Append("s", "prompt", []byte(`"B"`)); err != nil {
			t.Fatal(err)
		}
		if err := b.Flush(ctx); err != nil {
			t.Fatalf("b's first commit: %v", err)
		}
		failures := a.CommitFailures()
		if err := a.Append("s", "prompt", []byte(`"A"`)); err != nil {
			t.Fatal(err)
		}
		if err := a.Flush(ctx); !errors.Is(err, ErrBusy) {
			t.Errorf("a's first commit after b's = %v, want ErrBusy", err)
		}
		if a.CommitFailures() == failures {
			t.Error("a's dropped rows were not counted as a failed commit")
		}
		var busy *BusyError
		if err := a.LeaseLost("s"); !errors.As(err, &busy) || busy.Owner != "B" {
			t.Errorf("LeaseLost = %v, want b's lease (owner B)", err)
		}
		if err := a.Append("s", "chunk", []byte(`"A later"`)); err != nil {
			t.Fatal(err)
		}
		if err := a.Flush(ctx); !errors.Is(err, ErrBusy) {
			t.Errorf("a's later commit = %v, want ErrBusy", err)
		}
		evs, err := a.Events(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 1 || string(evs[0].Payload) != `"B"` {
			t.Errorf("stored rows %v, want b's prompt only", evs)
		}
		if got := leaseRows(t, a, "s"); len(got) != 1 || !strings.HasSuffix(got[0], "-B") {
			t.Errorf("lease rows %v, want b's", got)
		}
		// a's release leaves b's lease alone; after it, a's rows go in again.
		ra()
		if got := leaseRows(t, a, "s"); len(got) != 1 || !strings.HasSuffix(got[0], "-B") {
			t.Errorf("lease rows after a's release %v, want b's", got)
		}
		rb()
		if got := leaseRows(t, a, "s"); len(got) != 0 {
			t.Errorf("lease rows after both released: %v", got)
		}
	})
}

// A turn of another Store that starts, commits and ends between this
// Store's AcquireTurn and its first commit leaves this turn reading a log
// that is no longer the last: the commit drops this turn's rows.
func TestAcquireTurnFailsWhenTheLogGrewBeforeItsFirstCommit(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		path := tempDBPath(t)
		a, b := openStore(t, path), openStore(t, path)
		ctx := context.Background()
		if err := a.CreateSession(ctx, Session{ID: "s", Cwd: "/w"}); err != nil {
			t.Fatal(err)
		}
		ra, last, err := a.AcquireTurn(ctx, "s", "A")
		if err != nil || last != 0 {
			t.Fatalf("AcquireTurn = %d, %v", last, err)
		}
		defer ra()
		rb, _, err := b.AcquireTurn(ctx, "s", "B")
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Append("s", "prompt", []byte(`"B"`)); err != nil {
			t.Fatal(err)
		}
		if err := b.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		rb()
		if err := a.Append("s", "prompt", []byte(`"A"`)); err != nil {
			t.Fatal(err)
		}
		if err := a.Flush(ctx); !errors.Is(err, ErrBusy) {
			t.Errorf("a's first commit = %v, want ErrBusy", err)
		}
		var busy *BusyError
		if err := a.LeaseLost("s"); !errors.As(err, &busy) || !busy.Changed {
			t.Errorf("LeaseLost = %v, want the log changed", err)
		}
		if evs, _ := a.Events(ctx, "s"); len(evs) != 1 {
			t.Errorf("%d rows stored, want b's one", len(evs))
		}
		if got := leaseRows(t, a, "s"); len(got) != 0 {
			t.Errorf("lease rows %v after b released and a lost", got)
		}
	})
}

// Rows of the claiming Store committed while it claims (another goroutine
// of the process appending to the session) are part of the log the claim
// read, or come after it: they never make the claim fail.
func TestAcquireTurnClaimCountsThisStoresConcurrentRows(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		s := openStore(t, tempDBPath(t))
		ctx := context.Background()
		if err := s.CreateSession(ctx, Session{ID: "s", Cwd: "/w"}); err != nil {
			t.Fatal(err)
		}
		for i := range 50 {
			done := make(chan struct{})
			go func() {
				defer close(done)
				for range 20 {
					s.Append("s", "worker", []byte(`{}`))
				}
			}()
			release, _, err := s.AcquireTurn(ctx, "s", "turn")
			if err != nil {
				t.Fatal(err)
			}
			s.Append("s", "prompt", []byte(`{}`))
			<-done
			if err := s.Flush(ctx); err != nil {
				t.Fatalf("round %d: %v", i, err)
			}
			if err := s.LeaseLost("s"); err != nil {
				t.Fatalf("round %d: LeaseLost = %v", i, err)
			}
			release()
		}
	})
}

// A lease another holder writes between a turn's AcquireTurn and its first
// commit decides that commit: one with an old heartbeat, or of a dead
// process on this host (SQLite only), is taken over and the turn's rows
// stored; a live one (a fresh heartbeat from another host) wins, and the
// rows are dropped.
func TestAcquireTurnFirstCommitJudgesALeaseWrittenMeanwhile(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		cmd := exec.Command("true")
		if err := cmd.Run(); err != nil {
			t.Skip("cannot run true:", err)
		}
		dead := cmd.Process.Pid
		s := newStore(t)
		ctx := context.Background()
		fresh := time.Now().UnixNano()
		cases := []struct {
			name      string
			host      string
			heartbeat int64
			taken     bool // the turn keeps its rows and the lease
		}{
			{"old heartbeat", "elsewhere", time.Now().Add(-time.Minute).UnixNano(), true},
			// On PostgreSQL hosts may share a name and pids mean nothing
			// across them: only the expiry frees a lease.
			{"dead process", s.lease.host, fresh, !s.pg},
			{"live holder", "elsewhere", fresh, false},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				id := strings.ReplaceAll(c.name, " ", "-")
				mustCreate(t, s, Session{ID: id, Cwd: "/w"})
				release, _, err := s.AcquireTurn(ctx, id, "turn")
				if err != nil {
					t.Fatal(err)
				}
				defer release()
				if _, err := s.writeDB.Exec(`INSERT INTO leases (session_id, holder, owner, host, pid, heartbeat) VALUES (?, 'other', 'other owner', ?, ?, ?)`,
					id, c.host, dead, c.heartbeat); err != nil {
					t.Fatal(err)
				}
				if err := s.Append(id, "prompt", []byte(`{}`)); err != nil {
					t.Fatal(err)
				}
				err = s.Flush(ctx)
				evs := mustEvents(t, s, id)
				rows := leaseRows(t, s, id)
				if c.taken {
					if err != nil || len(evs) != 1 || len(rows) != 1 || rows[0] != s.lease.holder+"-turn" {
						t.Fatalf("Flush = %v, %d rows stored, lease rows %v; want the turn's row and lease", err, len(evs), rows)
					}
					return
				}
				var busy *BusyError
				if !errors.Is(err, ErrBusy) || len(evs) != 0 || !errors.As(s.LeaseLost(id), &busy) || busy.Owner != "other owner" {
					t.Fatalf("Flush = %v, %d rows stored, LeaseLost = %v; want the rows dropped for the other owner", err, len(evs), s.LeaseLost(id))
				}
				if len(rows) != 1 || rows[0] != "other-other owner" {
					t.Fatalf("lease rows %v, want the other holder's", rows)
				}
			})
		}
	})
}
