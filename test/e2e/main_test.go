// Package e2e holds corvid's end-to-end tests: each one builds the real binary once,
// spawns `corvid acp -m script:FILE` and drives it with the fake editor in
// internal/testkit, which fails the test on any message that is not schema-valid ACP v1.
//
// Run with `go test ./test/e2e/`; set CORVID_BIN to test a prebuilt binary.
package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// session is one running corvid with a workspace directory.
type session struct {
	*testkit.Editor
	ctx       context.Context
	workspace string
}

// startCorvid writes script (a script-format JSON value) to a file and serves ACP with it.
func startCorvid(t *testing.T, script any, opts testkit.Options, extraArgs ...string) *session {
	t.Helper()
	bin := testkit.BuildCorvid(t)
	workspace := t.TempDir()
	scriptPath := testkit.WriteScript(t, script)
	opts.Args = append([]string{"acp", "-m", "script:" + scriptPath}, extraArgs...)
	if opts.Dir == "" {
		opts.Dir = workspace
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return &session{Editor: testkit.Start(t, bin, opts), ctx: ctx, workspace: workspace}
}

// scriptFile reads testdata/scripts/NAME.json, a script for the tests that need more
// than a transcript (timing between steps, several sessions or processes); behaviour a
// transcript shows completely belongs in test/scenarios instead.
func scriptFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "scripts", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// text is a script with one response that streams text.
func text(s string, chunkSize int) map[string]any {
	return map[string]any{"responses": []any{
		map[string]any{"chunkSize": chunkSize, "parts": []any{map[string]any{"type": "text", "text": s}}},
	}}
}

// ready initializes with h and opens a session in the workspace.
func (s *session) ready(t *testing.T, h testkit.Host) string {
	t.Helper()
	if _, rerr := s.Initialize(s.ctx, h); rerr != nil {
		t.Fatalf("initialize: %v", rerr)
	}
	return s.NewSession(s.ctx, s.workspace)
}

// lastSeq is the transcript index of the last update of sessionID (-1 if none).
func lastSeq(updates []testkit.Update) int {
	last := -1
	for _, u := range updates {
		last = max(last, u.Seq)
	}
	return last
}

// expectError checks a response is an error with code.
func expectError(t *testing.T, what string, m testkit.Message, code int) {
	t.Helper()
	if m.Error == nil {
		t.Errorf("%s: got result %s, want error %d", what, m.Result, code)
		return
	}
	if m.Error.Code != code {
		t.Errorf("%s: got error %d %q, want %d", what, m.Error.Code, m.Error.Message, code)
	}
}

// stillUsable proves the connection survived: a fresh session/new succeeds.
func (s *session) stillUsable(t *testing.T) {
	t.Helper()
	if id := s.NewSession(s.ctx, s.workspace); id == "" {
		t.Error("session/new after the error returned no session id")
	}
}
