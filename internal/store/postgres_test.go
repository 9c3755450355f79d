package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// A PostgreSQL database whose schema is newer than this corvid is
// refused, naming the store (without its password) and the version.
func TestOpenPostgresRefusesNewerSchema(t *testing.T) {
	url := pgDatabase(t)
	s := openStore(t, url)
	if _, err := s.writeDB.Exec(`UPDATE corvid_schema_version SET version = 999`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err := Open(url)
	if err == nil || !strings.Contains(err.Error(), "newer") || !strings.Contains(err.Error(), Redact(url)) {
		t.Errorf("Open of a newer schema = %v, want an error naming the store and the version", err)
	}
}

// 200 sessions streaming at once through one store's small pool (one
// writer, four readers) wait for connections; none fails.
func TestManySessionsShareThePoolWithoutErrors(t *testing.T) {
	eachBackend(t, func(t *testing.T) {
		s := newStore(t)
		ctx := context.Background()
		const sessions, events = 200, 50
		for i := range sessions {
			mustCreate(t, s, Session{ID: fmt.Sprint("s", i), Cwd: "/w"})
		}
		var wg sync.WaitGroup
		for i := range sessions {
			wg.Go(func() {
				id := fmt.Sprint("s", i)
				for j := range events {
					if err := s.Append(id, "chunk", fmt.Appendf(nil, `{"j":%d}`, j)); err != nil {
						t.Error(err)
						return
					}
					if j%10 == 9 {
						if _, err := s.Events(ctx, id); err != nil {
							t.Errorf("Events(%s): %v", id, err)
							return
						}
					}
				}
			})
		}
		wg.Wait()
		if err := s.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		for i := range sessions {
			if n := len(mustEvents(t, s, fmt.Sprint("s", i))); n != events {
				t.Fatalf("session s%d: %d events, want %d", i, n, events)
			}
		}
	})
}

func TestRedactHidesThePassword(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:hunter2@h:5432/db":                "postgres://u:xxxxx@h:5432/db",
		"postgresql://u@h/db?password=hunter2&x=1":      "postgresql://u@h/db?password=xxxxx&x=1",
		"/home/u/.local/share/corvid/sessions.db":       "/home/u/.local/share/corvid/sessions.db",
		"postgres://u:hunter2@/db?host=/run/postgresql": "postgres://u:xxxxx@/db?host=/run/postgresql",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// Without a registered driver (the default corvid binary), opening a
// PostgreSQL store fails with ErrNoPostgres, naming the store without
// its password, and nothing is dialled.
func TestOpenPostgresWithoutDriver(t *testing.T) {
	saved := pgDriver
	pgDriver = nil
	t.Cleanup(func() { pgDriver = saved })
	_, err := Open("postgres://u:hunter2@127.0.0.1:1/db")
	if !errors.Is(err, ErrNoPostgres) || !strings.Contains(err.Error(), "postgres://u:xxxxx@127.0.0.1:1/db") || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("Open without a driver = %v, want ErrNoPostgres naming the redacted URL", err)
	}
}

// pgListen (the driver's Listen) opens a connection of its own that
// hears the notifications of its channels, and only those; a SQLite
// store has none.
func TestPostgresListenHearsItsChannels(t *testing.T) {
	s := openStore(t, pgDatabase(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	wait, closeListen, err := s.pgListen(ctx, "corvid_test", "Mixed Case")
	if err != nil {
		t.Fatal(err)
	}
	defer closeListen(ctx)
	for _, q := range []string{
		`SELECT pg_notify('other', 'not for us')`,
		`SELECT pg_notify('corvid_test', 'one')`,
		`SELECT pg_notify('Mixed Case', 'two')`,
	} {
		if _, err := s.writeDB.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range [][2]string{{"corvid_test", "one"}, {"Mixed Case", "two"}} {
		ch, payload, err := wait(ctx)
		if err != nil || ch != want[0] || payload != want[1] {
			t.Fatalf("wait = %q %q %v, want %q %q", ch, payload, err, want[0], want[1])
		}
	}
	sq := openStore(t, filepath.Join(t.TempDir(), "s.db"))
	if _, _, err := sq.pgListen(ctx, "x"); !errors.Is(err, ErrNoPostgres) {
		t.Errorf("pgListen on SQLite = %v, want ErrNoPostgres", err)
	}
}
