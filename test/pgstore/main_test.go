// Package pgstore drives the built corvid binary on a session store in a
// real PostgreSQL 15 (internal/testkit/pgtest): two processes with
// different homes sharing one history, kill -9 in the middle of a turn,
// the database restarted during a turn, and a store that cannot be
// reached. Without PostgreSQL 15 the tests skip with the install line
// (and fail under CI=true).
package pgstore

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
	"github.com/corvid-agent/corvid/internal/testkit/pgtest"
)

var (
	pgOnce   sync.Once
	pgServer *pgtest.Server
	pgErr    error
)

func TestMain(m *testing.M) {
	testkit.Main(m, func() {
		if pgServer != nil {
			pgServer.Stop()
		}
	})
}

// corvidBin is the corvid binary every test here runs: built once, by
// this one function, so that how it is built changes in one place. It is
// the default corvid with corvid-pg beside it, so every test also drives
// the hand-off to corvid-pg a postgres:// store makes.
func corvidBin(t testing.TB) string {
	t.Helper()
	return testkit.BuildCorvidPG(t)
}

// server returns the test process's PostgreSQL server, started on first use.
func server(t *testing.T) *pgtest.Server {
	t.Helper()
	pgtest.Skip(t)
	pgOnce.Do(func() { pgServer, pgErr = pgtest.Start() })
	if pgErr != nil {
		t.Fatalf("start PostgreSQL: %v", pgErr)
	}
	return pgServer
}

// database returns the URL of a fresh database.
func database(t *testing.T) string {
	t.Helper()
	url, err := server(t).NewDB()
	if err != nil {
		t.Fatal(err)
	}
	return url
}

// machine is one corvid process with a home of its own (another machine)
// on a shared store.
type machine struct {
	*testkit.Editor
	ctx context.Context
}

// start spawns `corvid acp -m script:SCRIPT` with its own CORVID_HOME,
// the store given by --store (flag) or CORVID_STORE (env), in workspace.
func start(t *testing.T, script, workspace string, args []string, env ...string) *machine {
	t.Helper()
	bin := corvidBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	e := testkit.Start(t, bin, testkit.Options{
		Args: append([]string{"acp", "-m", "script:" + script}, args...),
		Dir:  workspace,
		Env:  append([]string{"CORVID_HOME=" + t.TempDir()}, env...),
	})
	m := &machine{Editor: e, ctx: ctx}
	if _, rerr := m.Initialize(ctx, testkit.Minimal()); rerr != nil {
		t.Fatalf("initialize: %v\n%s", rerr, e.Stderr())
	}
	return m
}

// text is the agent text the updates show, in order.
func text(us []testkit.Update) string {
	var b strings.Builder
	for _, u := range us {
		if u.SessionUpdate == "agent_message_chunk" {
			b.WriteString(u.Content.Text)
		}
	}
	return b.String()
}

// load calls session/load on m and returns the replayed updates.
func (m *machine) load(t *testing.T, sid, workspace string) []testkit.Update {
	t.Helper()
	before := len(m.Updates(sid))
	if _, rerr := m.Call(m.ctx, "session/load", map[string]any{"sessionId": sid, "cwd": workspace, "mcpServers": []any{}}); rerr != nil {
		t.Fatalf("session/load %s: %v\n%s", sid, rerr, m.Stderr())
	}
	m.MustCall(m.ctx, "session/list", map[string]any{}, nil) // a round trip: every replayed frame is read
	return m.Updates(sid)[before:]
}
