package testkit

import (
	"os"
	"testing"
)

// IsolatedEnv returns the environment [Start] gives the agent (a fresh HOME, CORVID_HOME
// and XDG dirs; no provider credentials or base URLs) plus extra, for running other corvid
// commands (print mode, sessions) in tests. The home is removed at cleanup.
func IsolatedEnv(t testing.TB, extra ...string) (env []string, home string) {
	t.Helper()
	// A short home path keeps unix socket paths under the 104/108-byte limit.
	home, err := os.MkdirTemp("", "ck")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(home) })
	return buildEnv(os.Environ(), home, Options{Env: extra}), home
}
