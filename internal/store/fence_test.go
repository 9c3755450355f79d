package store

import (
	"context"
	"errors"
	"testing"
)

// On PostgreSQL a turn's lease is fenced: a holder whose lease expired
// (a daemon paused past leaseTTL) and was taken over by another daemon
// cannot commit into the session any more; its rows are dropped and
// LeaseLost names the new holder. (SQLite keeps its single-host lease as
// it was: no fence there.)
func TestLostLeaseFencesTheOldHolderOnPostgres(t *testing.T) {
	url := pgDatabase(t)
	var ca, cb skewClock
	a, b := openWithClock(t, url, &ca), openWithClock(t, url, &cb)
	ctx := context.Background()
	mustCreate(t, a, Session{ID: "s", Cwd: "/w"})

	releaseA, _, err := a.AcquireTurn(ctx, "s", "daemon a")
	if err != nil {
		t.Fatal(err)
	}
	defer releaseA()
	if err := a.Append("s", "prompt", []byte(`"a1"`)); err != nil {
		t.Fatal(err)
	}
	if err := a.Flush(ctx); err != nil {
		t.Fatalf("a's first commit: %v", err)
	}
	// a stalls; b's clock is past the lease's expiry.
	cb.advance(2 * leaseTTL)
	releaseB, _, err := b.AcquireTurn(ctx, "s", "daemon b")
	if err != nil {
		t.Fatalf("b cannot take the expired lease: %v", err)
	}
	defer releaseB()
	if err := b.Append("s", "prompt", []byte(`"b1"`)); err != nil {
		t.Fatal(err)
	}
	if err := b.Flush(ctx); err != nil {
		t.Fatalf("b's first commit: %v", err)
	}
	// a wakes up and streams on.
	if err := a.Append("s", "chunk", []byte(`"a2"`)); err != nil {
		t.Fatal(err)
	}
	err = a.Flush(ctx)
	var busy *BusyError
	if !errors.Is(err, ErrBusy) || !errors.As(a.LeaseLost("s"), &busy) || busy.Owner != "daemon b" {
		t.Fatalf("a's commit after losing the lease = %v, LeaseLost = %v; want its rows dropped for daemon b", err, a.LeaseLost("s"))
	}
	evs := mustEvents(t, b, "s")
	if len(evs) != 2 || string(evs[0].Payload) != `"a1"` || string(evs[1].Payload) != `"b1"` {
		t.Fatalf("stored %d events %v; want a1 then b1 and nothing of a after it lost the lease", len(evs), evs)
	}
}
