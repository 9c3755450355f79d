//go:build linux

package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// A person who types `corvid acp` in a terminal is told, on stderr, what it
// is for; stdout stays the protocol's and carries nothing.
func TestACPInATerminalSaysWhatItIsFor(t *testing.T) {
	master, slave := openPTY(t)
	env, home := testkit.IsolatedEnv(t)
	script := filepath.Join(home, "s.json")
	if err := os.WriteFile(script, []byte(`{"responses":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(testkit.BuildCorvid(t), "acp", "-m", "script:"+script)
	cmd.Env, cmd.Dir, cmd.Stdin = env, home, slave
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Ctrl-D at the start of a line is end of input on a terminal.
	if _, err := master.Write([]byte{4}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("corvid acp after Ctrl-D: %v; stderr %q", err, errOut.String())
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("corvid acp did not end on Ctrl-D; stderr %q", errOut.String())
	}
	if out.Len() != 0 {
		t.Errorf("stdout carried %q", out.String())
	}
	if !strings.Contains(errOut.String(), "editors launch it") || !strings.Contains(errOut.String(), "corvid run -p") {
		t.Errorf("stderr %q lacks the one-line notice", errOut.String())
	}
}
