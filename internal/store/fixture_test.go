package store

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// storeDump is everything a Store reads back: every session (as List
// returns it) and every event of each.
type storeDump struct {
	Sessions []Session
	Events   map[string][]dumpEvent
}

type dumpEvent struct {
	Seq     int64
	Kind    string
	Payload string
	TimeNS  int64
}

func dumpStore(t testing.TB, s *Store) storeDump {
	t.Helper()
	ctx := context.Background()
	d := storeDump{Events: map[string][]dumpEvent{}}
	cur := ""
	for {
		page, next, err := s.List(ctx, ListOptions{Cursor: cur})
		if err != nil {
			t.Fatal(err)
		}
		d.Sessions = append(d.Sessions, page...)
		if next == "" {
			break
		}
		cur = next
	}
	for _, ss := range d.Sessions {
		evs, err := s.Events(ctx, ss.ID)
		if err != nil {
			t.Fatal(err)
		}
		out := []dumpEvent{}
		for _, e := range evs {
			out = append(out, dumpEvent{e.Seq, e.Kind, string(e.Payload), e.Time.UnixNano()})
		}
		d.Events[ss.ID] = out
	}
	return d
}

// TestMigrateV1Database opens a database written by the release before
// schema version 2 (testdata/v1.db, see testdata/README.md) and checks that
// every session and every event reads back exactly as that release read it
// (testdata/v1.golden.json), and that appending after the migration works.
func TestMigrateV1Database(t *testing.T) {
	src, err := os.ReadFile("testdata/v1.db")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "sessions.db")
	if err := os.WriteFile(path, src, 0o600); err != nil {
		t.Fatal(err)
	}
	var want storeDump
	b, err := os.ReadFile("testdata/v1.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, path)
	ctx := context.Background()
	if v, err := schemaVersion(ctx, s.writeDB); err != nil || v != len(migrations) {
		t.Fatalf("schema version %d, %v; want %d", v, err, len(migrations))
	}
	got := dumpStore(t, s)
	if len(got.Sessions) != 4 || len(got.Events["sess_a"]) < 300 {
		t.Fatalf("fixture read back %d sessions, %d events of sess_a", len(got.Sessions), len(got.Events["sess_a"]))
	}
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if !bytes.Equal(gb, wb) {
		for _, ss := range want.Sessions {
			w, g := want.Events[ss.ID], got.Events[ss.ID]
			for i := range min(len(w), len(g)) {
				if w[i] != g[i] {
					t.Errorf("session %s event %d = %+v, want %+v", ss.ID, i, g[i], w[i])
					break
				}
			}
			if len(w) != len(g) {
				t.Errorf("session %s: %d events, want %d", ss.ID, len(g), len(w))
			}
		}
		t.Fatalf("migrated store reads back differently from the v1 release")
	}
	// New events after old ones: kinds shared with migrated rows, deltas
	// against a migrated payload in a later commit.
	last := want.Events["sess_a"][len(want.Events["sess_a"])-1]
	add := [][2]string{
		{"agent_message_chunk", `{"kind":"agent_message_chunk","messageId":"msg_new","content":{"type":"text","text":"a"}}`},
		{"agent_message_chunk", `{"kind":"agent_message_chunk","messageId":"msg_new","content":{"type":"text","text":"b"}}`},
		{"brand_new_kind", `{"kind":"brand_new_kind"}`},
	}
	for _, a := range add {
		if err := s.Append("sess_a", a[0], []byte(a[1])); err != nil {
			t.Fatal(err)
		}
		if err := s.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	evs := mustEvents(t, s, "sess_a")
	if len(evs) != len(want.Events["sess_a"])+len(add) || evs[len(evs)-len(add)-1].Seq != last.Seq {
		t.Fatalf("%d events after appending, want %d", len(evs), len(want.Events["sess_a"])+len(add))
	}
	for i, a := range add {
		ev := evs[len(evs)-len(add)+i]
		if ev.Kind != a[0] || string(ev.Payload) != a[1] || ev.Seq != last.Seq+int64(i)+1 {
			t.Errorf("appended event %d = %d %s %s, want %s %s", i, ev.Seq, ev.Kind, ev.Payload, a[0], a[1])
		}
	}
}
