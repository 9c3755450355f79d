// Package providers proves every provider end to end through the built
// binary: `corvid acp -m provider:model` is spawned with the provider's key
// and base URL pointing at a fake server that speaks its real wire format
// (internal/testkit/fakeanthropic, fakeopenai, fakegemini), and is driven
// through the fake editor (internal/testkit), which validates every message
// against the ACP v1 schema.
//
// Each feature test runs once per provider (providers in fakes_test.go);
// docs/providers.md holds the resulting table. Run with
//
//	go test ./test/providers/
//
// and set CORVID_BIN to test a prebuilt binary.
package providers

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// run is one corvid serving one provider against its fake.
type run struct {
	*testkit.Editor
	p         provider
	fake      fake
	ctx       context.Context
	workspace string
}

// start spawns corvid for p with every provider's key set (see keys), p's
// base URL at a fresh fake, and extra environment entries.
func start(t *testing.T, p provider, extraEnv ...string) *run {
	t.Helper()
	bin := testkit.BuildCorvid(t)
	f, base := p.start(t)
	env := []string{"CORVID_KEYRING=off", p.baseVar + "=" + base}
	for k, v := range keys {
		env = append(env, k+"="+v)
	}
	env = append(env, extraEnv...)
	workspace := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	e := testkit.Start(t, bin, testkit.Options{Args: []string{"acp", "-m", p.model}, Env: env, Dir: workspace})
	r := &run{Editor: e, p: p, fake: f, ctx: ctx, workspace: workspace}
	t.Cleanup(func() { r.checkCredentials(t) })
	return r
}

// ready initializes as a minimal client and opens a session in the
// workspace.
func (r *run) ready(t *testing.T) string {
	t.Helper()
	if _, rerr := r.Initialize(r.ctx, testkit.Minimal()); rerr != nil {
		t.Fatalf("initialize: %v", rerr)
	}
	return r.NewSession(r.ctx, r.workspace)
}

// checkCredentials fails the test if any request the fake received carried
// a key other than p's own, in any header, or (for a provider with a key)
// not p's own key where the provider expects it.
func (r *run) checkCredentials(t *testing.T) {
	t.Helper()
	want := keys[r.p.keyVar]
	for i, req := range r.fake.requests() {
		for name, vals := range req.Header {
			for _, v := range vals {
				for kv, key := range keys {
					if kv != r.p.keyVar && strings.Contains(v, key) {
						t.Errorf("request %d to the %s fake carried %s in header %s", i+1, r.p.name, kv, name)
					}
				}
			}
		}
		if got := r.p.auth(req.Header); got != want {
			t.Errorf("request %d to the %s fake carried credential %q, want %q", i+1, r.p.name, got, want)
		}
	}
}

// updatesSince returns the session's updates after transcript index seq.
func (r *run) updatesSince(sid string, seq int) []testkit.Update {
	var out []testkit.Update
	for _, u := range r.Updates(sid) {
		if u.Seq > seq {
			out = append(out, u)
		}
	}
	return out
}

// lastSeq is the transcript index of the last line so far.
func (r *run) lastSeq() int {
	lines := r.Transcript()
	if len(lines) == 0 {
		return -1
	}
	return lines[len(lines)-1].Seq
}

// writeFile creates name in the workspace.
func (r *run) writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(r.workspace, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// forEachProvider runs test once per provider, in parallel.
func forEachProvider(t *testing.T, test func(t *testing.T, p provider)) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			test(t, p)
		})
	}
}
