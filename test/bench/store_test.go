package bench

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/corvid-agent/corvid/internal/store"
	"github.com/corvid-agent/corvid/internal/store/pgdriver"
	"github.com/corvid-agent/corvid/internal/testkit"
	"github.com/corvid-agent/corvid/internal/testkit/pgtest"
)

// The benchmarks open their stores in this process too.
func init() { store.RegisterPostgres(pgdriver.Driver{}) }

// corvidPG is corvid-pg (corvid built with -tags corvid_pg), which the
// benchmarks start on a PostgreSQL store directly: the figures are the
// store's, without the default corvid's hand-off (one exec, docs/store.md).
func corvidPG(tb testing.TB) string {
	return filepath.Join(filepath.Dir(testkit.BuildCorvidPG(tb)), "corvid-pg")
}

// The benchmarks run on the default SQLite file. With
// CORVID_BENCH_STORE=postgres they run on PostgreSQL 15 instead (over a
// unix socket, internal/testkit/pgtest): each benchmark home gets a fresh
// database, which every corvid it starts uses (CORVID_STORE), so the same
// figures come out side by side (docs/store.md):
//
//	CORVID_BENCH_STORE=postgres go test ./test/bench -run '^$' -bench 'FirstChunk|StreamedTurn|LoadCurve/merged-100k'

var (
	pgOnce   sync.Once
	pgServer *pgtest.Server
	pgErr    error
	pgMu     sync.Mutex
	pgHomes  = map[string]string{} // benchmark home → its database's URL
)

func stopPostgres() {
	if pgServer != nil {
		pgServer.Stop()
	}
}

// storeURL is the PostgreSQL store of home under CORVID_BENCH_STORE=postgres,
// else "" (the SQLite file in home).
func storeURL(tb testing.TB, home string) string {
	if os.Getenv("CORVID_BENCH_STORE") != "postgres" {
		return ""
	}
	pgtest.Skip(tb)
	pgOnce.Do(func() { pgServer, pgErr = pgtest.Start() })
	if pgErr != nil {
		tb.Fatalf("start PostgreSQL: %v", pgErr)
	}
	pgMu.Lock()
	defer pgMu.Unlock()
	if u, ok := pgHomes[home]; ok {
		return u
	}
	u, err := pgServer.NewDB()
	if err != nil {
		tb.Fatal(err)
	}
	pgHomes[home] = u
	return u
}

// storePath is what store.Open takes for home's store.
func storePath(tb testing.TB, home string) string {
	if u := storeURL(tb, home); u != "" {
		return u
	}
	return filepath.Join(home, "corvid", "sessions.db")
}
