package store

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// Copy moves every session and event of a SQLite store into another
// store (both backends as the destination), keeping seqs, times and
// payloads exactly; a second run copies nothing; a run interrupted after
// some batches resumes and ends with matching hashes.
func TestCopyMovesEverySessionAndResumes(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		ctx := context.Background()
		src := openStore(t, tempDBPathSQLite(t))
		dst := newStore(t)
		sizes := map[string]int{"a": 2500, "b": 3, "c": 0}
		for id, n := range sizes {
			mustCreate(t, src, Session{ID: id, Cwd: "/w/" + id, Title: "t " + id, Config: []byte(`{"k":1}`)})
			for i := range n {
				kind := "agent_message_chunk"
				if i%50 == 0 {
					kind = "tool_call"
				}
				if err := src.Append(id, kind, []byte(fmt.Sprintf(`{"text":"%s %d"}`, strings.Repeat("x", i%70), i))); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := src.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		rep, err := Copy(ctx, src, dst, nil)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Sessions != 3 || rep.NewSessions != 3 || rep.CopiedEvents != 2503 || rep.Events != 2503 || len(rep.Mismatched) != 0 || rep.SourceHash != rep.DestHash {
			t.Fatalf("first copy: %+v", rep)
		}
		for id := range sizes {
			want, got := mustEvents(t, src, id), mustEvents(t, dst, id)
			for i := range want {
				want[i].Time, got[i].Time = want[i].Time.UTC(), got[i].Time.UTC()
			}
			if !reflect.DeepEqual(want, got) {
				t.Fatalf("session %s: events differ after the copy", id)
			}
			sm, _ := src.GetSession(ctx, id)
			dm, _ := dst.GetSession(ctx, id)
			if !sm.UpdatedAt.Equal(dm.UpdatedAt) || sm.Title != dm.Title || string(sm.Config) != string(dm.Config) {
				t.Errorf("session %s: metadata %+v, want %+v", id, dm, sm)
			}
		}
		again, err := Copy(ctx, src, dst, nil)
		if err != nil || again.CopiedEvents != 0 || again.NewSessions != 0 || len(again.Mismatched) != 0 {
			t.Fatalf("second run = %+v, %v; want nothing copied and everything matching", again, err)
		}

		// An interrupted run: the destination holds only the first
		// batch of a, and b not at all.
		if _, err := dst.writeDB.Exec(`DELETE FROM events WHERE session_pk = (SELECT pk FROM sessions WHERE id = 'a') AND seq > ?`, copyBatch); err != nil {
			t.Fatal(err)
		}
		if err := dst.Delete(ctx, "b"); err != nil {
			t.Fatal(err)
		}
		resumed, err := Copy(ctx, src, dst, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resumed.CopiedEvents != 2500-copyBatch+3 || resumed.NewSessions != 1 || len(resumed.Mismatched) != 0 || resumed.SourceHash != resumed.DestHash {
			t.Fatalf("resumed run = %+v", resumed)
		}
	})
}

// tempDBPathSQLite is a fresh SQLite file whatever the backend under test.
func tempDBPathSQLite(t testing.TB) string {
	return t.TempDir() + "/src/sessions.db"
}
