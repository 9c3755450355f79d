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

// Rows Copy writes into a session on the destination's own write
// connection (which data_version does not count) move its last seq too:
// the destination's next commit into it goes after them.
func TestCommitsGoAfterRowsCopiedIntoTheSession(t *testing.T) {
	ctx := context.Background()
	src, dst := openStore(t, tempDBPathSQLite(t)), newStore(t)
	appendFlush := func(st *Store, p string) {
		t.Helper()
		if err := st.Append("t", "k", []byte(p)); err != nil {
			t.Fatal(err)
		}
		if err := st.Flush(ctx); err != nil {
			t.Fatalf("append %s: %v", p, err)
		}
	}
	mustCreate(t, dst, Session{ID: "t", Cwd: "/w"})
	appendFlush(dst, `{"n":"dst1"}`) // dst's writer now knows seq 1
	mustCreate(t, src, Session{ID: "t", Cwd: "/w"})
	for _, p := range []string{`{"n":"src1"}`, `{"n":"src2"}`, `{"n":"src3"}`} {
		appendFlush(src, p)
	}
	// Copy finds dst at seq 1 and copies src's rows 2 and 3 (its hashes
	// then differ at row 1: that is Copy's report, not this test's).
	if _, err := Copy(ctx, src, dst, nil); err != nil {
		t.Fatal(err)
	}
	appendFlush(dst, `{"n":"dst2"}`)
	evs := mustEvents(t, dst, "t")
	if len(evs) != 4 || evs[3].Seq != 4 || string(evs[3].Payload) != `{"n":"dst2"}` {
		t.Fatalf("session t: %d rows, last seq %d %s; want 4, the last dst's own", len(evs), evs[len(evs)-1].Seq, evs[len(evs)-1].Payload)
	}
}
