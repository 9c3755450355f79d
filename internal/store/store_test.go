package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	if path := os.Getenv(crashChildEnv); path != "" {
		os.Exit(crashChild(path))
	}
	if path := os.Getenv(checkpointChildEnv); path != "" {
		os.Exit(checkpointChild(path))
	}
	code := m.Run()
	stopPostgres()
	os.Exit(code)
}

// tempDBPath is a fresh store: a new file's path, or within
// eachBackend's postgres subtest a new database's URL.
func tempDBPath(t testing.TB) string {
	if onPostgres(t) {
		return pgDatabase(t)
	}
	return filepath.Join(t.TempDir(), "data", "corvid", "sessions.db")
}

func openStore(t testing.TB, path string) *Store {
	t.Helper()
	s, err := Open(path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newStore(t testing.TB) *Store { return openStore(t, tempDBPath(t)) }

func mustCreate(t testing.TB, s *Store, sess Session) {
	t.Helper()
	if err := s.CreateSession(context.Background(), sess); err != nil {
		t.Fatalf("CreateSession(%s): %v", sess.ID, err)
	}
}

func mustEvents(t testing.TB, s *Store, id string) []Event {
	t.Helper()
	evs, err := s.Events(context.Background(), id)
	if err != nil {
		t.Fatalf("Events(%s): %v", id, err)
	}
	return evs
}

func TestOpenMissingFileCreatesPrivateFreshDB(t *testing.T) {
	path := tempDBPath(t)
	s := openStore(t, path)
	if s.Path() != path {
		t.Errorf("Path() = %q, want %q", s.Path(), path)
	}
	dir, err := os.Stat(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if got := dir.Mode().Perm(); got != 0o700 {
		t.Errorf("parent dir mode = %v, want 0700", got)
	}
	file, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := file.Mode().Perm(); got != 0o600 {
		t.Errorf("db file mode = %v, want 0600", got)
	}
	list, next, err := s.List(context.Background(), ListOptions{})
	if err != nil || len(list) != 0 || next != "" {
		t.Errorf("List on fresh DB = %v, %q, %v; want empty", list, next, err)
	}
	var mode string
	if err := s.readDB.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
}

func TestSessionRoundTrip(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		s := newStore(t)
		ctx := context.Background()
		created := time.Date(2025, 3, 1, 12, 0, 0, 123456789, time.UTC)
		want := Session{
			ID:             "s1",
			Cwd:            "/work/project",
			AdditionalDirs: []string{"/work/lib", "/work/docs"},
			Title:          "fix the parser",
			Model:          "anthropic:claude",
			Mode:           "plan",
			Config:         json.RawMessage(`{"thought_level":"high"}`),
			ParentID:       "s0",
			CreatedAt:      created,
		}
		mustCreate(t, s, want)
		got, err := s.GetSession(ctx, "s1")
		if err != nil {
			t.Fatal(err)
		}
		want.UpdatedAt = created // zero UpdatedAt defaults to CreatedAt
		if !got.CreatedAt.Equal(want.CreatedAt) || !got.UpdatedAt.Equal(want.UpdatedAt) {
			t.Errorf("times = %v, %v; want %v, %v", got.CreatedAt, got.UpdatedAt, want.CreatedAt, want.UpdatedAt)
		}
		got.CreatedAt, got.UpdatedAt, want.CreatedAt, want.UpdatedAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("GetSession =\n%+v\nwant\n%+v", got, want)
		}

		if err := s.CreateSession(ctx, Session{ID: "s1", Cwd: "/x"}); !errors.Is(err, ErrExists) {
			t.Errorf("second CreateSession(s1) = %v, want ErrExists", err)
		}
		if _, err := s.GetSession(ctx, "nope"); !errors.Is(err, ErrNotFound) {
			t.Errorf("GetSession(nope) = %v, want ErrNotFound", err)
		}

		before, _ := s.GetSession(ctx, "s1")
		err = s.UpdateSession(ctx, "s1", func(sess *Session) {
			sess.Title = "renamed"
			sess.AdditionalDirs = nil
			sess.Config = nil
			sess.ID = "hijack" // ignored
		})
		if err != nil {
			t.Fatal(err)
		}
		after, err := s.GetSession(ctx, "s1")
		if err != nil {
			t.Fatal(err)
		}
		if after.Title != "renamed" || after.AdditionalDirs != nil || after.Config != nil || after.Model != "anthropic:claude" {
			t.Errorf("after update: %+v", after)
		}
		if !after.UpdatedAt.After(before.UpdatedAt) || !after.CreatedAt.Equal(before.CreatedAt) {
			t.Errorf("UpdatedAt %v → %v, CreatedAt %v → %v; want UpdatedAt bumped, CreatedAt kept",
				before.UpdatedAt, after.UpdatedAt, before.CreatedAt, after.CreatedAt)
		}
		if err := s.UpdateSession(ctx, "nope", func(*Session) {}); !errors.Is(err, ErrNotFound) {
			t.Errorf("UpdateSession(nope) = %v, want ErrNotFound", err)
		}
	})
}

func TestConcurrentUpdatesLoseNothing(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		path := tempDBPath(t)
		a, b := openStore(t, path), openStore(t, path)
		ctx := context.Background()
		mustCreate(t, a, Session{ID: "s", Cwd: "/w"})
		var wg sync.WaitGroup
		for i := range 20 {
			st := a
			if i%2 == 1 {
				st = b
			}
			wg.Go(func() {
				err := st.UpdateSession(ctx, "s", func(sess *Session) {
					sess.AdditionalDirs = append(sess.AdditionalDirs, fmt.Sprint(i))
				})
				if err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		got, err := a.GetSession(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		if len(got.AdditionalDirs) != 20 {
			t.Errorf("after 20 concurrent read-modify-writes: %d dirs, want 20", len(got.AdditionalDirs))
		}
	})
}

func TestDeleteRemovesSessionAndEvents(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		s := newStore(t)
		ctx := context.Background()
		mustCreate(t, s, Session{ID: "s", Cwd: "/w"})
		mustCreate(t, s, Session{ID: "keep", Cwd: "/w"})
		for range 10 {
			s.Append("s", "chunk", []byte(`{}`))
			s.Append("keep", "chunk", []byte(`{}`))
		}
		if err := s.Delete(ctx, "s"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetSession(ctx, "s"); !errors.Is(err, ErrNotFound) {
			t.Errorf("GetSession after Delete = %v, want ErrNotFound", err)
		}
		var n int
		s.readDB.QueryRow(`SELECT count(*) FROM events`).Scan(&n)
		if n != 10 {
			t.Errorf("%d events in the DB after Delete, want only the other session's 10", n)
		}
		if err := s.Flush(ctx); err != nil {
			t.Errorf("Flush after Delete = %v (queued events must be committed before the delete)", err)
		}
		if evs := mustEvents(t, s, "keep"); len(evs) != 10 {
			t.Errorf("other session: %d events, want 10", len(evs))
		}
		if err := s.Delete(ctx, "never-existed"); err != nil {
			t.Errorf("Delete(unknown) = %v, want nil", err)
		}
	})
}

func TestForkCopiesEventsThenDiverges(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		s := newStore(t)
		ctx := context.Background()
		mustCreate(t, s, Session{ID: "parent", Cwd: "/w", Title: "original", Model: "m1", Config: json.RawMessage(`{"a":1}`)})
		for i := range 5 {
			s.Append("parent", "chunk", fmt.Appendf(nil, "p%d", i))
		}
		// The queued parent events must be part of the copy.
		if err := s.Fork(ctx, "parent", Session{ID: "child", Title: "forked"}); err != nil {
			t.Fatal(err)
		}
		child, err := s.GetSession(ctx, "child")
		if err != nil {
			t.Fatal(err)
		}
		if child.ParentID != "parent" || child.Cwd != "/w" || child.Title != "forked" || child.Model != "m1" || string(child.Config) != `{"a":1}` {
			t.Errorf("child = %+v", child)
		}
		s.Append("child", "chunk", []byte("c5"))
		s.Append("parent", "chunk", []byte("p5"))
		s.Append("parent", "chunk", []byte("p6"))

		payloads := func(id string) string {
			var out []string
			for _, ev := range mustEvents(t, s, id) {
				out = append(out, fmt.Sprintf("%d:%s", ev.Seq, ev.Payload))
			}
			return strings.Join(out, " ")
		}
		if got, want := payloads("child"), "1:p0 2:p1 3:p2 4:p3 5:p4 6:c5"; got != want {
			t.Errorf("child events = %s, want %s", got, want)
		}
		if got, want := payloads("parent"), "1:p0 2:p1 3:p2 4:p3 5:p4 6:p5 7:p6"; got != want {
			t.Errorf("parent events = %s, want %s", got, want)
		}

		if err := s.Fork(ctx, "nope", Session{ID: "x"}); !errors.Is(err, ErrNotFound) {
			t.Errorf("Fork(unknown) = %v, want ErrNotFound", err)
		}
		if err := s.Fork(ctx, "parent", Session{ID: "child"}); !errors.Is(err, ErrExists) {
			t.Errorf("Fork onto existing id = %v, want ErrExists", err)
		}
		// Deleting the parent leaves the fork whole.
		if err := s.Delete(ctx, "parent"); err != nil {
			t.Fatal(err)
		}
		if got := len(mustEvents(t, s, "child")); got != 6 {
			t.Errorf("child after parent deleted: %d events, want 6", got)
		}
	})
}

func TestConcurrentOpenOfFreshFileMigratesOnce(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		path := tempDBPath(t)
		var wg sync.WaitGroup
		stores := make([]*Store, 4)
		for i := range stores {
			wg.Go(func() {
				s, err := Open(path)
				if err != nil {
					t.Errorf("Open %d: %v", i, err)
					return
				}
				stores[i] = s
			})
		}
		wg.Wait()
		for _, s := range stores {
			if s != nil {
				s.Close()
			}
		}
		s := openStore(t, path)
		want, q := len(migrations), `SELECT version FROM schema_version`
		if s.pg {
			want, q = len(pgMigrations), `SELECT version FROM corvid_schema_version`
		}
		var v int
		if err := s.readDB.QueryRow(q).Scan(&v); err != nil || v != want {
			t.Errorf("schema version = %d, %v; want %d", v, err, want)
		}
	})
}

func TestMigrationsAreIdempotent(t *testing.T) {
	path := tempDBPath(t)
	s := openStore(t, path)
	ctx := context.Background()
	mustCreate(t, s, Session{ID: "s", Cwd: "/w"})
	tables := func() string {
		rows, err := s.readDB.Query(`SELECT type || ':' || name FROM sqlite_schema ORDER BY name`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var n string
			rows.Scan(&n)
			out = append(out, n)
		}
		return strings.Join(out, ",")
	}
	before := tables()
	if err := migrate(ctx, s.writeDB); err != nil {
		t.Fatalf("migrate again: %v", err)
	}
	s.Close()
	s = openStore(t, path)
	if after := tables(); after != before {
		t.Errorf("schema changed by re-running migrations:\n%s\n%s", before, after)
	}
	if v, _ := schemaVersion(ctx, s.readDB); v != len(migrations) {
		t.Errorf("version = %d, want %d", v, len(migrations))
	}
	if _, err := s.GetSession(ctx, "s"); err != nil {
		t.Errorf("data lost across reopen: %v", err)
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	path := tempDBPath(t)
	s := openStore(t, path)
	if _, err := s.writeDB.Exec(`UPDATE schema_version SET version = 999`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err := Open(path)
	if err == nil || !strings.Contains(err.Error(), "newer") || !strings.Contains(err.Error(), path) {
		t.Errorf("Open of a newer schema = %v, want an error naming the file and the version", err)
	}
}

func TestOpenCorruptFileFailsNamingIt(t *testing.T) {
	path := tempDBPath(t)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Repeat("this is not a database\n", 500)), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path)
	if err == nil {
		s.Close()
		t.Fatal("Open of a garbage file succeeded")
	}
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) {
		t.Errorf("Open = %v, want ErrCorrupt naming %s", err, path)
	}
	t.Logf("Open: %v", err)
}

func TestOpenDamagedDBFailsNamingIt(t *testing.T) {
	path := tempDBPath(t)
	s := openStore(t, path)
	mustCreate(t, s, Session{ID: "s", Cwd: "/w"})
	for range 2000 {
		s.Append("s", "chunk", []byte(strings.Repeat("x", 200)))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Keep the header but cut the file mid-page and scribble over page 2.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 8192 {
		t.Fatalf("db only %d bytes", len(data))
	}
	for i := 4096; i < 8192; i++ {
		data[i] = 0xA5
	}
	if err := os.WriteFile(path, data[:len(data)/2+100], 0o600); err != nil {
		t.Fatal(err)
	}
	// Page 2 holds schema_version, which Open reads: it must fail cleanly.
	s2, err := Open(path)
	if err == nil {
		s2.Close()
		t.Fatal("Open of a damaged file succeeded")
	}
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) {
		t.Errorf("Open = %v, want ErrCorrupt naming %s", err, path)
	}
}
