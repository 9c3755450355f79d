package store

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// tail is what ScanEventsTail of kinds gives, as "seq:kind:payload" rows.
func tail(t *testing.T, s *Store, id string, kinds ...string) []string {
	t.Helper()
	var out []string
	err := s.ScanEventsTail(t.Context(), id, kinds, func(ev Event) error {
		out = append(out, fmt.Sprintf("%d:%s:%s", ev.Seq, ev.Kind, ev.Payload))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestScanEventsTailStartsAtTheLastEventOfEachKind(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		s := newStore(t)
		mustCreate(t, s, Session{ID: "a", Cwd: "/w"})
		mustCreate(t, s, Session{ID: "empty", Cwd: "/w"})
		// Payloads alike enough to be stored as deltas of each other.
		long := strings.Repeat("x", 200)
		for i := range 30 {
			kind := "chunk"
			switch {
			case i%10 == 0:
				kind = "prompt"
			case i == 24:
				kind = "usage"
			}
			if err := s.Append("a", kind, fmt.Appendf(nil, `{"kind":%q,"text":"%s","i":%d}`, kind, long, i)); err != nil {
				t.Fatal(err)
			}
		}
		all := mustEvents(t, s, "a")
		got := tail(t, s, "a", "prompt", "usage")
		// The last prompt is seq 21, the last usage 25: from 21 (or the
		// start of its delta chain) to the end, every payload whole.
		if len(got) < 10 || len(got) > 21 || !strings.HasPrefix(got[len(got)-1], "30:chunk:") {
			t.Fatalf("tail = %d rows ending %q, want seq 21 to 30 and at most the chain before", len(got), got[len(got)-1])
		}
		for i, row := range got {
			ev := all[len(all)-len(got)+i]
			if want := fmt.Sprintf("%d:%s:%s", ev.Seq, ev.Kind, ev.Payload); row != want {
				t.Fatalf("tail row %d = %q, want %q", i, row, want)
			}
		}
		if got := tail(t, s, "a", "usage"); len(got) < 6 || len(got) > 25 || !strings.HasPrefix(got[len(got)-6], "25:usage:") {
			t.Errorf("tail of usage = %d rows, want seq 25 to 30 and at most the chain before", len(got))
		}
		// The test means something only if some rows are deltas.
		var deltas int
		if err := s.readDB.QueryRowContext(t.Context(), `SELECT count(*) FROM events WHERE kind % ? = ?`, 1<<formBits, formDelta).Scan(&deltas); err != nil || deltas == 0 {
			t.Fatalf("%d delta rows (%v), want some", deltas, err)
		}
		if got := tail(t, s, "a", "nothing-of-this-kind"); len(got) != 0 {
			t.Errorf("tail of an absent kind = %q, want none", got)
		}
		if got := tail(t, s, "empty", "prompt"); len(got) != 0 {
			t.Errorf("tail of an empty session = %q", got)
		}
		err := s.ScanEventsTail(t.Context(), "nope", []string{"prompt"}, func(Event) error { return nil })
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("unknown session: %v, want ErrNotFound", err)
		}
	})
}
