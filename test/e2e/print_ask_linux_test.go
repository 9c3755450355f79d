//go:build linux

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/corvid-agent/corvid/internal/testkit"
)

// openPTY returns a pseudo-terminal's master and its slave, opened.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); s.Close() })
	return m, s
}

// With --ask, print mode puts the question on the terminal (/dev/tty) and the answer
// decides; the answer stays off stdout.
func TestPrintModeAskPromptsOnTheTerminal(t *testing.T) {
	for _, tc := range []struct {
		answer  string
		written bool
	}{{"y", true}, {"n", false}} {
		t.Run(tc.answer, func(t *testing.T) {
			p := newPrintEnv(t, toolScript("write", map[string]any{"path": "notes.txt", "content": "x"}))
			master, slave := openPTY(t)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, testkit.BuildCorvid(t), "run", "-p", "write notes", "--ask", "-m", "script:"+p.script)
			cmd.Env, cmd.Dir = p.env, p.workspace
			var out, errb bytes.Buffer
			cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, &out, &errb
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Read the terminal until the question, then answer it.
			var seen strings.Builder
			buf := make([]byte, 256)
			for !strings.Contains(seen.String(), "[N]o: ") {
				_ = master.SetReadDeadline(time.Now().Add(30 * time.Second))
				n, err := master.Read(buf)
				if err != nil {
					t.Fatalf("no question on the terminal (%v); saw %q; stderr %s", err, seen.String(), errb.String())
				}
				seen.Write(buf[:n])
			}
			if !strings.Contains(seen.String(), "notes.txt") {
				t.Errorf("the question does not say what would run: %q", seen.String())
			}
			if _, err := master.Write([]byte(tc.answer + "\n")); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("corvid: %v\n%s", err, errb.String())
			}
			_, err := os.Stat(filepath.Join(p.workspace, "notes.txt"))
			if written := err == nil; written != tc.written {
				t.Errorf("answer %q: written = %v, want %v", tc.answer, written, tc.written)
			}
			if strings.Contains(out.String(), "[N]o") {
				t.Errorf("the question went to stdout: %q", out.String())
			}
		})
	}
}
