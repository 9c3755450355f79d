package tui_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestAgentWritesIntoAMebibytePipe: the pipe the TUI reads its agent's
// frames from holds 1 MiB (or the system's limit), not Linux's default
// 64 KiB, which a fast stream fills in about 2 ms: less than the UI's
// reader may wait for a core when the agent, the UI and the terminal
// share them, and a full pipe stops the agent.
func TestAgentWritesIntoAMebibytePipe(t *testing.T) {
	s := newSession(t)
	agent := floodAgent(t)
	report := filepath.Join(t.TempDir(), "pipe")
	p := startPTYArgs(t, s, []string{"FLOOD_PIPE_REPORT=" + report}, "--", agent)
	p.waitFrom(t, 0, "Ask corvid")
	want := 1 << 20
	if max, err := os.ReadFile("/proc/sys/fs/pipe-max-size"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(max))); err == nil && n < want {
			want = n
		}
	}
	var got []byte
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if got, _ = os.ReadFile(report); len(got) > 0 {
			break
		}
	}
	if n, err := strconv.Atoi(string(got)); err != nil || n < want {
		t.Fatalf("the agent's stdout is a pipe of %q bytes, want at least %d", got, want)
	}
}
