package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Once a commit of a session's rows fails, its later rows are dropped
// too, so the store holds a prefix of what was appended; ClearFailure
// lets new rows in again, never the old ones still queued.
func TestRowsAfterAFailedCommitAreDroppedUntilCleared(t *testing.T) {
	var f failedRows
	f.fail("s", 5)
	for ticket, want := range map[uint64]bool{4: false, 5: true, 9: true} {
		if got := f.failed("s", ticket); got != want {
			t.Errorf("failed(s, %d) = %v, want %v", ticket, got, want)
		}
	}
	if f.failed("other", 9) {
		t.Error("another session's rows failed with it")
	}
	f.clear("s", 9)
	for ticket, want := range map[uint64]bool{4: false, 5: true, 9: true, 10: false} {
		if got := f.failed("s", ticket); got != want {
			t.Errorf("after clear: failed(s, %d) = %v, want %v", ticket, got, want)
		}
	}
	for i := range uint64(maxFailedSpans + 2) {
		f.fail("s", 100+10*i)
		f.clear("s", 105+10*i)
	}
	// The oldest spans are forgotten: tickets up to the newest of them
	// count as failed; later ones between spans do not.
	if !f.failed("s", 5) || !f.failed("s", 108) || f.failed("s", 198) || !f.failed("s", 192) {
		t.Error("after many failures: wrong tickets reported failed")
	}
}

// A session deleted by another Store: this Store's next commit of its rows
// finds it gone, says so through Deleted, and counts the rows as failed.
func TestDeletedSessionIsReportedToItsWriter(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		path := tempDBPath(t)
		a, b := openStore(t, path), openStore(t, path)
		ctx := context.Background()
		if err := a.CreateSession(ctx, Session{ID: "s", Cwd: "/w"}); err != nil {
			t.Fatal(err)
		}
		if a.IsDeleted("s") {
			t.Fatal("a new session is reported deleted")
		}
		if err := b.Delete(ctx, "s"); err != nil {
			t.Fatal(err)
		}
		if err := a.Append("s", "chunk", []byte(`"x"`)); err != nil {
			t.Fatal(err)
		}
		ticket := a.Appended()
		if err := a.Flush(ctx); !errors.Is(err, ErrNotFound) {
			t.Errorf("commit to a deleted session = %v, want ErrNotFound", err)
		}
		select {
		case <-a.Deleted("s"):
		case <-time.After(5 * time.Second):
			t.Fatal("Deleted was not closed")
		}
		if !a.CommitFailed("s", ticket) {
			t.Error("the dropped row is not reported as failed")
		}
	})
}
