package providers

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// exitBeforeServing starts corvid with args and no credentials at all and
// waits for it to exit; it returns the agent's stderr.
func exitBeforeServing(t *testing.T, args ...string) (*testkit.Editor, string) {
	t.Helper()
	e := testkit.Start(t, testkit.BuildCorvid(t), testkit.Options{Args: args, Env: []string{"CORVID_KEYRING=off"}})
	select {
	case <-e.Exited():
	case <-time.After(10 * time.Second):
		t.Fatalf("corvid %s kept running; want exit 1 before serving", strings.Join(args, " "))
	}
	e.Close()
	if code := e.ExitCode(); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	for _, l := range e.Transcript() {
		if l.Dir == testkit.FromAgent {
			t.Errorf("stdout carried %q; it belongs to the protocol and must stay empty", l.Text)
		}
	}
	stderr := strings.TrimSpace(e.Stderr())
	t.Logf("stderr: %s", stderr)
	if n := strings.Count(stderr, "\n") + 1; stderr == "" || n != 1 {
		t.Errorf("stderr has %d lines, want one:\n%s", n, stderr)
	}
	return e, stderr
}

func TestModelFlagWithoutKeyExitsWithHowTo(t *testing.T) {
	t.Parallel()
	_, stderr := exitBeforeServing(t, "acp", "-m", "anthropic:claude-sonnet-4-6")
	for _, want := range []string{"ANTHROPIC_API_KEY", "corvid auth login anthropic"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q does not say %q", stderr, want)
		}
	}
}

func TestUnknownProviderExitsWithClearError(t *testing.T) {
	t.Parallel()
	_, stderr := exitBeforeServing(t, "acp", "-m", "nosuch:model")
	for _, want := range []string{`"nosuch:model"`, "provider:model", "anthropic"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q does not say %q", stderr, want)
		}
	}
}

func TestNoModelNoKeysServesAndSessionNewSaysHowToAuthenticate(t *testing.T) {
	t.Parallel()
	e := testkit.Start(t, testkit.BuildCorvid(t), testkit.Options{Args: []string{"acp"}, Env: []string{"CORVID_KEYRING=off"}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, rerr := e.Initialize(ctx, testkit.Minimal()); rerr != nil {
		t.Fatalf("initialize: %v", rerr)
	}
	_, rerr := e.Call(ctx, "session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}})
	if rerr == nil || rerr.Code != -32000 {
		t.Fatalf("session/new: %v, want error -32000", rerr)
	}
	for _, want := range []string{"ANTHROPIC_API_KEY", "corvid auth login"} {
		if !strings.Contains(rerr.Message, want) {
			t.Errorf("message %q does not say %q", rerr.Message, want)
		}
	}
	if code, _ := e.Close(); code != 0 {
		t.Errorf("exit code %d after stdin closed, want 0", code)
	}
}
