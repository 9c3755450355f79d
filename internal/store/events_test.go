package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestEventsComeBackInAppendOrder(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		s := newStore(t)
		for _, id := range []string{"a", "b", "c"} {
			mustCreate(t, s, Session{ID: id, Cwd: "/w"})
		}
		const n = 3000
		for i := range n {
			id := []string{"a", "b", "c"}[i%3]
			if err := s.Append(id, "chunk", fmt.Appendf(nil, `{"i":%d}`, i)); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Append("a", "empty", nil); err != nil {
			t.Fatal(err)
		}
		// No Flush: Events commits what this Store still holds for the session.
		for k, id := range []string{"a", "b", "c"} {
			evs := mustEvents(t, s, id)
			wantLen := n / 3
			if id == "a" {
				wantLen++
			}
			if len(evs) != wantLen {
				t.Fatalf("session %s: %d events, want %d", id, len(evs), wantLen)
			}
			for j, ev := range evs[:n/3] {
				want := fmt.Sprintf(`{"i":%d}`, j*3+k)
				if ev.Seq != int64(j+1) || ev.Kind != "chunk" || string(ev.Payload) != want {
					t.Fatalf("session %s event %d = {%d %s %s}, want {%d chunk %s}", id, j, ev.Seq, ev.Kind, ev.Payload, j+1, want)
				}
				if j > 0 && ev.Time.Before(evs[j-1].Time) {
					t.Fatalf("session %s: event %d time goes backwards", id, j)
				}
			}
			if id == "a" {
				last := evs[len(evs)-1]
				if last.Kind != "empty" || len(last.Payload) != 0 {
					t.Errorf("last event of a = %+v, want empty payload", last)
				}
			}
		}
		if _, err := s.Events(context.Background(), "nope"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Events(nope) = %v, want ErrNotFound", err)
		}
	})
}

func TestAppendCopiesPayloadAndBumpsUpdatedAt(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		s := newStore(t)
		ctx := context.Background()
		old := time.Now().Add(-time.Hour)
		mustCreate(t, s, Session{ID: "s", Cwd: "/w", CreatedAt: old})
		buf := []byte(`{"text":"hello"}`)
		if err := s.Append("s", "chunk", buf); err != nil {
			t.Fatal(err)
		}
		copy(buf, `XXXXXXXXXXXXXXXX`) // the caller reuses its buffer
		if err := s.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		evs := mustEvents(t, s, "s")
		if len(evs) != 1 || string(evs[0].Payload) != `{"text":"hello"}` {
			t.Fatalf("events = %+v", evs)
		}
		got, _ := s.GetSession(ctx, "s")
		if !got.UpdatedAt.Equal(evs[0].Time) {
			t.Errorf("UpdatedAt = %v, want the event's time %v", got.UpdatedAt, evs[0].Time)
		}
	})
}

func TestAppendedEventsSurviveCloseAndReopen(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		path := tempDBPath(t)
		s, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		mustCreate(t, s, Session{ID: "s", Cwd: "/w"})
		for i := range 500 {
			if err := s.Append("s", "chunk", fmt.Appendf(nil, "%d", i)); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		for i := 500; i < 1000; i++ { // these only Close commits
			if err := s.Append("s", "chunk", fmt.Appendf(nil, "%d", i)); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := s.Append("s", "chunk", nil); !errors.Is(err, ErrClosed) {
			t.Errorf("Append after Close = %v, want ErrClosed", err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("second Close = %v", err)
		}

		s2 := openStore(t, path)
		evs := mustEvents(t, s2, "s")
		if len(evs) != 1000 {
			t.Fatalf("after reopen: %d events, want 1000", len(evs))
		}
		for i, ev := range evs {
			if string(ev.Payload) != fmt.Sprint(i) || ev.Seq != int64(i+1) {
				t.Fatalf("event %d = %d %s", i, ev.Seq, ev.Payload)
			}
		}
	})
}

func TestAppendCommitsWithinMillisecondsWithoutFlush(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		path := tempDBPath(t)
		writer, reader := openStore(t, path), openStore(t, path)
		mustCreate(t, writer, Session{ID: "s", Cwd: "/w"})
		start := time.Now()
		if err := writer.Append("s", "chunk", []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
		// The reader is another Store: it can only see what was committed.
		for len(mustEvents(t, reader, "s")) == 0 {
			if time.Since(start) > 2*time.Second {
				t.Fatal("an appended event was not committed without Flush")
			}
			time.Sleep(200 * time.Microsecond)
		}
		t.Logf("visible to another connection after %v", time.Since(start))
	})
}

func TestAppendToUnknownSessionIsReportedByFlush(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		s := newStore(t)
		ctx := context.Background()
		mustCreate(t, s, Session{ID: "real", Cwd: "/w"})
		s.Append("real", "a", []byte(`1`))
		s.Append("ghost", "a", []byte(`1`))
		s.Append("real", "a", []byte(`2`))
		err := s.Flush(ctx)
		if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "ghost") {
			t.Errorf("Flush = %v, want ErrNotFound naming ghost", err)
		}
		if err := s.Flush(ctx); err != nil {
			t.Errorf("second Flush = %v, want nil (error already reported)", err)
		}
		if evs := mustEvents(t, s, "real"); len(evs) != 2 {
			t.Errorf("the rest of the batch: %d events, want 2", len(evs))
		}
	})
}

// sharedPayload is long enough that each store stores it as a delta from
// its own previous event, which is wrong as a base wherever the other store
// appended in between.
func sharedPayload(store string, i int) []byte {
	return fmt.Appendf(nil, `{"kind":%q,"text":"%d","pad":"%s"}`, store, i, strings.Repeat("p", 40))
}

func TestTwoStoresShareOneFile(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		path := tempDBPath(t)
		a, b := openStore(t, path), openStore(t, path)
		ctx := context.Background()
		mustCreate(t, a, Session{ID: "shared", Cwd: "/w"})
		if _, err := b.GetSession(ctx, "shared"); err != nil {
			t.Fatalf("second store does not see the first's session: %v", err)
		}
		mustCreate(t, b, Session{ID: "b-only", Cwd: "/w"})

		const perStore = 2000
		var wg sync.WaitGroup
		for name, st := range map[string]*Store{"a": a, "b": b} {
			wg.Go(func() {
				for i := range perStore {
					if err := st.Append("shared", name, sharedPayload(name, i)); err != nil {
						t.Error(err)
						return
					}
					if i%100 == 0 {
						time.Sleep(time.Millisecond)
					}
				}
				if err := st.Flush(ctx); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()

		evs := mustEvents(t, b, "shared")
		if len(evs) != 2*perStore {
			t.Fatalf("%d events, want %d", len(evs), 2*perStore)
		}
		next := map[string]int{}
		for i, ev := range evs {
			if ev.Seq != int64(i+1) {
				t.Fatalf("event %d has seq %d: sequence numbers must be 1..n without gaps", i, ev.Seq)
			}
			if string(ev.Payload) != string(sharedPayload(ev.Kind, next[ev.Kind])) {
				t.Fatalf("store %s: event %s out of order, want %d", ev.Kind, ev.Payload, next[ev.Kind])
			}
			next[ev.Kind]++
		}
		list, _, err := a.List(ctx, ListOptions{})
		if err != nil || len(list) != 2 {
			t.Errorf("List from a = %d sessions, %v; want 2", len(list), err)
		}
	})
}

func TestLastSeqFollowsAppendsOfAnotherStore(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		path := tempDBPath(t)
		a, b := openStore(t, path), openStore(t, path)
		ctx := context.Background()
		if err := a.CreateSession(ctx, Session{ID: "s", Cwd: "/w"}); err != nil {
			t.Fatal(err)
		}
		if n, err := b.LastSeq(ctx, "s"); err != nil || n != 0 {
			t.Fatalf("empty session: %d %v", n, err)
		}
		for range 3 {
			if err := a.Append("s", "k", []byte("{}")); err != nil {
				t.Fatal(err)
			}
		}
		if err := a.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if n, err := b.LastSeq(ctx, "s"); err != nil || n != 3 {
			t.Errorf("after 3 appends elsewhere: %d %v, want 3", n, err)
		}
	})
}

// Each commit inserts a session's rows with one statement per insertRows
// rows and one for the rest, whatever their number: every count comes
// back whole, in order, kinds and delta-encoded payloads included.
func TestCommitsOfEverySizeComeBackWhole(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		s := newStore(t)
		mustCreate(t, s, Session{ID: "s", Cwd: "/w"})
		ctx := context.Background()
		var want []string
		for k := 1; k <= 2*insertRows+1; k++ {
			for i := range k {
				kind := []string{"agent_message_chunk", "context", "tool_call"}[i%3]
				p := fmt.Sprintf(`{"round":%d,"i":%d,"text":"%s"}`, k, i, strings.Repeat("ab", i))
				if err := s.Append("s", kind, []byte(p)); err != nil {
					t.Fatal(err)
				}
				want = append(want, kind+" "+p)
			}
			if err := s.Flush(ctx); err != nil {
				t.Fatalf("commit of %d rows: %v", k, err)
			}
		}
		evs := mustEvents(t, s, "s")
		if len(evs) != len(want) {
			t.Fatalf("%d events, want %d", len(evs), len(want))
		}
		for i, ev := range evs {
			if got := ev.Kind + " " + string(ev.Payload); ev.Seq != int64(i+1) || got != want[i] {
				t.Fatalf("event %d = %d %s, want %d %s", i, ev.Seq, got, i+1, want[i])
			}
		}
	})
}

// CommitNow commits its caller's rows itself (no commit running); it gives
// up when its context ends while another process holds the write lock,
// and its rows stay queued: a later commit stores them, none is lost.
func TestCommitNowThatGivesUpLeavesItsRowsQueued(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		if onPostgres(t) {
			t.Skip("SQLite's write lock (BEGIN IMMEDIATE); PostgreSQL takes no lock at BEGIN")
		}
		if testing.Short() {
			t.Skip("waits out the busy timeout")
		}
		path := tempDBPath(t)
		a, b := openStore(t, path), openStore(t, path)
		ctx := context.Background()
		mustCreate(t, a, Session{ID: "s", Cwd: "/w"})
		lock, err := b.writeDB.BeginTx(ctx, nil) // BEGIN IMMEDIATE: b holds the write lock
		if err != nil {
			t.Fatal(err)
		}
		failures := a.CommitFailures()
		if err := a.Append("s", "prompt", []byte(`"kept"`)); err != nil {
			t.Fatal(err)
		}
		short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		if err := a.CommitNow(short, a.Appended()); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("CommitNow while another process holds the lock = %v, want the deadline", err)
		}
		if err := lock.Rollback(); err != nil {
			t.Fatal(err)
		}
		if err := a.Flush(ctx); err != nil {
			t.Fatalf("Flush after the lock was released: %v", err)
		}
		if evs := mustEvents(t, a, "s"); len(evs) != 1 || string(evs[0].Payload) != `"kept"` {
			t.Fatalf("stored %v, want the row appended while the lock was held", evs)
		}
		if a.CommitFailures() != failures {
			t.Error("the commit that gave up was counted as a failure")
		}
	})
}
