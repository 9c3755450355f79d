// Package reliability is corvid's gauntlet: the built binary, driven by the fake
// editor (internal/testkit), is killed with SIGKILL mid-turn, cancelled at random
// points, abandoned by its client, flooded with concurrent sessions and fed a
// faulty model API; after each, the session store must still open and every
// session must load in a fresh process.
//
// Random points come from a seed logged at the start of each test; set
// CORVID_RELIABILITY_SEED to replay a run.
//
// Run with `go test ./test/reliability/`; set CORVID_BIN to test a prebuilt binary.
package reliability

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// store is a CORVID_HOME shared by the corvid processes of one test, with the
// workspace their sessions use and the script they play.
type store struct {
	home      string
	workspace string
	script    string
}

func newStore(t *testing.T, script any) *store {
	t.Helper()
	return &store{
		home:      filepath.Join(t.TempDir(), "corvid-home"),
		workspace: t.TempDir(),
		script:    testkit.WriteScript(t, script),
	}
}

func (s *store) dbPath() string { return filepath.Join(s.home, "sessions.db") }

// agent is one running corvid process on a store.
type agent struct {
	*testkit.Editor
	ctx context.Context
	st  *store
}

// start spawns `corvid acp -m script:FILE extra...` on the store and initializes
// it as a client without fs or terminal (tools run inside corvid).
func (s *store) start(t *testing.T, extra ...string) *agent {
	t.Helper()
	return s.startWith(t, testkit.Options{}, append([]string{"acp", "-m", "script:" + s.script}, extra...)...)
}

func (s *store) startWith(t *testing.T, opts testkit.Options, args ...string) *agent {
	t.Helper()
	bin := testkit.BuildCorvid(t) // before the deadline: the first call builds corvid
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	opts.Args = args
	opts.Dir = s.workspace
	opts.Env = append([]string{"CORVID_HOME=" + s.home}, opts.Env...)
	if opts.ExitTimeout == 0 {
		opts.ExitTimeout = 5 * time.Second
	}
	a := &agent{Editor: testkit.Start(t, bin, opts), ctx: ctx, st: s}
	if _, rerr := a.Initialize(ctx, testkit.Minimal()); rerr != nil {
		t.Fatalf("initialize: %v", rerr)
	}
	return a
}

func (a *agent) newSession(t *testing.T) string {
	t.Helper()
	return a.NewSession(a.ctx, a.st.workspace)
}

// load calls session/load and returns the updates of sid that arrived before its
// response; a history update after the response is an error.
func (a *agent) load(t *testing.T, sid string) []testkit.Update {
	t.Helper()
	before := len(a.Updates(sid))
	p := a.CallAsync("session/load", map[string]any{"sessionId": sid, "cwd": a.st.workspace, "mcpServers": []any{}})
	if _, rerr := p.Wait(a.ctx); rerr != nil {
		t.Fatalf("session/load %s: %v", sid, rerr)
	}
	// One more round trip, so anything written after the response has been read.
	a.MustCall(a.ctx, "session/list", map[string]any{"cwd": a.st.workspace}, nil)
	var replay []testkit.Update
	for _, u := range a.Updates(sid)[before:] {
		switch {
		case u.Seq < p.Seq():
			replay = append(replay, u)
		case testkit.IsHistory(u.SessionUpdate):
			t.Errorf("replayed %s arrived after the session/load response", u.SessionUpdate)
		}
	}
	return replay
}

// seeded returns a random source for the test and logs its seed.
func seeded(t *testing.T) *rand.Rand {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("CORVID_RELIABILITY_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("CORVID_RELIABILITY_SEED: %v", err)
		}
		seed = n
	}
	t.Logf("seed %d (CORVID_RELIABILITY_SEED=%d replays this run)", seed, seed)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// text is one scripted part of type kind.
func part(kind, text string) map[string]any { return map[string]any{"type": kind, "text": text} }

// uniqueText is n characters that never repeat a short substring, so a prefix
// check pins down exactly how much was streamed.
func uniqueText(tag string, n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString(tag)
		b.WriteString(strconv.Itoa(i))
		b.WriteByte(' ')
	}
	return b.String()[:n]
}

func shorten(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
