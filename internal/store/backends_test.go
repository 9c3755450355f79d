package store

import (
	"sync"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit/pgtest"
)

// The store's tests run on both backends: eachBackend runs a test as the
// subtests sqlite and postgres. Within the postgres one, tempDBPath
// returns the URL of a fresh database on the test process's one
// PostgreSQL 15 server (started on first use, stopped by TestMain), so a
// test body written for files runs unchanged. Without the server's
// binaries the postgres subtests skip with the install line, and fail
// under CI=true.

var (
	pgOnce   sync.Once
	pgServer *pgtest.Server
	pgErr    error
	pgTests  sync.Map // *testing.T → true: the test runs on PostgreSQL
)

// pgDatabase returns the URL of a fresh database, starting the server on
// first use.
func pgDatabase(t testing.TB) string {
	t.Helper()
	pgtest.Skip(t)
	pgOnce.Do(func() { pgServer, pgErr = pgtest.Start() })
	if pgErr != nil {
		t.Fatalf("start PostgreSQL: %v", pgErr)
	}
	url, err := pgServer.NewDB()
	if err != nil {
		t.Fatal(err)
	}
	return url
}

func stopPostgres() {
	if pgServer != nil {
		pgServer.Stop()
	}
}

// onPostgres reports whether t runs on the PostgreSQL backend.
func onPostgres(t testing.TB) bool {
	_, ok := pgTests.Load(t)
	return ok
}

// eachBackend runs fn as the subtests sqlite and postgres.
func eachBackend(t *testing.T, fn func(t *testing.T)) {
	t.Run("sqlite", fn)
	t.Run("postgres", func(t *testing.T) {
		pgtest.Skip(t)
		pgTests.Store(t, true)
		t.Cleanup(func() { pgTests.Delete(t) })
		fn(t)
	})
}
