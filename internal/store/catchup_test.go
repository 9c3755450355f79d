package store

import (
	"context"
	"database/sql/driver"
	"sync"
	"testing"
	"time"
)

// heldListen is the registered PostgreSQL driver, except that the first
// listening connection opened through it waits, before it LISTENs, until
// release is closed: what a loaded machine does to a daemon's first
// LISTEN, made certain.
type heldListen struct {
	PostgresDriver
	once    sync.Once
	asked   chan struct{} // closed when the first Listen is called
	release chan struct{}
}

func (h *heldListen) Listen(ctx context.Context, pool driver.Connector, channels ...string) (func(context.Context) (string, string, error), func(context.Context) error, error) {
	first := false
	h.once.Do(func() { first = true })
	if first {
		close(h.asked)
		select {
		case <-h.release:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
	return h.PostgresDriver.Listen(ctx, pool, channels...)
}

// A commit of another Store made after a watch began and before the
// watcher's first listening connection listens still calls the watcher,
// once that connection listens. (A daemon whose first session was loaded
// in the middle of another daemon's turn missed the turn's last rows.)
func TestWatchSeesCommitsBeforeItsFirstListen(t *testing.T) {
	url := pgDatabase(t)
	a, b := openStore(t, url), openStore(t, url)
	h := &heldListen{PostgresDriver: pgDriver, asked: make(chan struct{}), release: make(chan struct{})}
	pgDriver = h
	t.Cleanup(func() { pgDriver = h.PostgresDriver })
	mustCreate(t, a, Session{ID: "s1", Cwd: "/w"})
	got := make(chan int64, 100)
	stop := b.Watch("s1", func(seq int64) { got <- seq })
	defer stop()
	<-h.asked
	if err := a.Append("s1", "chunk", []byte(`{"text":"before b listens"}`)); err != nil {
		t.Fatal(err)
	}
	if err := a.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if b.Listening() {
		t.Fatal("b listens although its LISTEN is held")
	}
	close(h.release)
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		t.Fatalf("the watch was not called for a commit made before its LISTEN (listening %v)", b.Listening())
	}
}

// OwnThrough covers a Store's committed rows of a session, not another
// Store's, and covers them as soon as another connection can read them.
func TestOwnThroughIsTheLastSeqThisStoreWrote(t *testing.T) {
	url := pgDatabase(t)
	a, b := openStore(t, url), openStore(t, url)
	ctx := context.Background()
	mustCreate(t, a, Session{ID: "s1", Cwd: "/w"})
	for range 3 {
		if err := a.Append("s1", "chunk", []byte(`{"text":"a"}`)); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Append("s1", "chunk", []byte(`{"text":"b"}`)); err != nil {
		t.Fatal(err)
	}
	if err := b.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := a.OwnThrough("s1"); got != 3 {
		t.Errorf("a.OwnThrough = %d, want 3 (its three rows)", got)
	}
	if got := b.OwnThrough("s1"); got != 4 {
		t.Errorf("b.OwnThrough = %d, want 4 (its row after a's three)", got)
	}
	if got := a.OwnThrough("s2"); got != 0 {
		t.Errorf("a.OwnThrough of a session it never wrote = %d, want 0", got)
	}
	// Whatever a reader sees of a's rows, OwnThrough covers at once.
	for range 50 {
		if err := a.Append("s1", "chunk", []byte(`{"text":"a"}`)); err != nil {
			t.Fatal(err)
		}
		last, err := b.LastSeq(ctx, "s1")
		if err != nil {
			t.Fatal(err)
		}
		if own := a.OwnThrough("s1"); last > 4 && own < last {
			t.Fatalf("b reads a's row %d while a.OwnThrough = %d", last, own)
		}
	}
}
