package store

import (
	"context"
	"fmt"
	"testing"
)

// The writer reuses the last seq it committed of a session only while no
// other connection committed: rows another Store appended in between are
// counted, whichever Store appends next, and a session deleted and
// created again starts from 1.
func TestCommitsCountRowsAnotherStoreAppendedInBetween(t *testing.T) {
	path := tempDBPath(t)
	a, b := openStore(t, path), openStore(t, path)
	ctx := context.Background()
	mustCreate(t, a, Session{ID: "s", Cwd: "/w"})
	mustCreate(t, a, Session{ID: "other", Cwd: "/w"})
	var want []string
	appendBy := func(st *Store, sid, name string, n int) {
		t.Helper()
		for range n {
			p := fmt.Sprintf(`{"by":%q,"n":%d}`, name, len(want))
			if sid == "s" {
				want = append(want, p)
			}
			if err := st.Append(sid, "k", []byte(p)); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.Flush(ctx); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	appendBy(a, "s", "a", 2)
	appendBy(b, "s", "b", 1)
	appendBy(a, "s", "a", 2)     // after b's row
	appendBy(b, "other", "b", 1) // a commit into another session moves no seq of s
	appendBy(a, "s", "a", 1)
	appendBy(b, "s", "b", 3)
	appendBy(a, "s", "a", 1)
	evs := mustEvents(t, a, "s")
	if len(evs) != len(want) {
		t.Fatalf("%d rows, want %d", len(evs), len(want))
	}
	for i, ev := range evs {
		if ev.Seq != int64(i+1) || string(ev.Payload) != want[i] {
			t.Fatalf("row %d = seq %d %s, want seq %d %s", i, ev.Seq, ev.Payload, i+1, want[i])
		}
	}

	if err := a.Delete(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, a, Session{ID: "s", Cwd: "/w"})
	want = nil
	appendBy(a, "s", "a", 1)
	if evs := mustEvents(t, a, "s"); len(evs) != 1 || evs[0].Seq != 1 {
		t.Fatalf("a session created again: %d rows, first seq %d; want one row, seq 1", len(evs), evs[0].Seq)
	}
}
