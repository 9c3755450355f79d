package tui_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// binaries returns a directory holding corvid and corvid-tui side by side,
// as a release installs them: `corvid` in a terminal finds corvid-tui
// beside itself.
func binaries(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for name, pkg := range map[string]string{"corvid": "./cmd/corvid", "corvid-tui": "./cmd/corvid-tui"} {
		src := testkit.BuildPackage(t, pkg)
		if name == "corvid" {
			src = testkit.BuildCorvid(t)
		}
		dst := filepath.Join(dir, name)
		if err := os.Link(src, dst); err != nil {
			b, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dst, b, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

// tmuxTerm is a real terminal: a tmux server of the test's own (its own
// socket), one window of a fixed size running a command.
type tmuxTerm struct {
	t      *testing.T
	socket string
	dir    string
	env    []string // the tmux server's, so the pane inherits nothing else
}

var termSeq atomic.Int64

func needTmux(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux is not installed (.ci/run installs it)")
		}
		t.Skip("tmux is not installed")
	}
}

// startTerm runs argv in dir, in a width×height tmux window, with env
// (KEY=VALUE) as its whole environment besides PATH and TERM. When argv
// exits, the window prints EXIT=<status> and stays.
func startTerm(t *testing.T, width, height int, dir string, env []string, argv ...string) *tmuxTerm {
	t.Helper()
	needTmux(t)
	tm := &tmuxTerm{t: t, socket: fmt.Sprintf("corvid-tui-%d-%d", os.Getpid(), termSeq.Add(1)), dir: t.TempDir(),
		env: append(append([]string{}, env...), "TERM=xterm-256color")}
	conf := filepath.Join(tm.dir, "tmux.conf")
	must(t, os.WriteFile(conf, []byte("set -g history-limit 100000\nset -g status off\nset -g escape-time 0\n"), 0o644))
	var sh strings.Builder
	for _, e := range env {
		k, v, _ := strings.Cut(e, "=")
		fmt.Fprintf(&sh, "export %s=%s\n", k, shellQuote(v))
	}
	fmt.Fprintf(&sh, "cd %s\n", shellQuote(dir))
	for i, a := range argv {
		if i > 0 {
			sh.WriteByte(' ')
		}
		sh.WriteString(shellQuote(a))
	}
	sh.WriteString("\necho \"EXIT=$?\"\nexec sleep 600\n")
	script := filepath.Join(tm.dir, "run.sh")
	must(t, os.WriteFile(script, []byte(sh.String()), 0o755))
	tm.tmux("-f", conf, "new-session", "-d", "-s", "main", "-x", fmt.Sprint(width), "-y", fmt.Sprint(height), "sh "+shellQuote(script))
	t.Cleanup(func() {
		kill := exec.Command("tmux", "-L", tm.socket, "kill-server")
		kill.Env = tm.env
		_ = kill.Run()
	})
	return tm
}

func (tm *tmuxTerm) tmux(args ...string) string {
	tm.t.Helper()
	cmd := exec.Command("tmux", append([]string{"-L", tm.socket}, args...)...)
	cmd.Env = tm.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// keys sends tmux key names (Enter, Escape, C-d, BTab) or words.
func (tm *tmuxTerm) keys(keys ...string) {
	tm.tmux(append([]string{"send-keys", "-t", "main"}, keys...)...)
}

// typeText sends s literally, as typed.
func (tm *tmuxTerm) typeText(s string) { tm.tmux("send-keys", "-t", "main", "-l", s) }

// screen is the visible pane; all is the scrollback and the screen;
// colours keeps the escape sequences of colours and attributes.
func (tm *tmuxTerm) screen() string { return tm.tmux("capture-pane", "-p", "-t", "main") }
func (tm *tmuxTerm) all() string {
	return tm.tmux("capture-pane", "-p", "-J", "-S", "-", "-E", "-", "-t", "main")
}
func (tm *tmuxTerm) colours() string {
	return tm.tmux("capture-pane", "-p", "-e", "-S", "-", "-t", "main")
}

// waitFor polls the pane (scrollback included) until it contains want.
func (tm *tmuxTerm) waitFor(want string) string {
	tm.t.Helper()
	return tm.waitUntil("the pane to show "+fmt.Sprintf("%q", want), func(s string) bool { return strings.Contains(s, want) })
}

func (tm *tmuxTerm) waitUntil(what string, ok func(string) bool) string {
	tm.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var s string
	for time.Now().Before(deadline) {
		s = tm.all()
		if ok(s) {
			return s
		}
		time.Sleep(50 * time.Millisecond)
	}
	tm.t.Fatalf("timed out waiting for %s; the pane:\n%s", what, s)
	return ""
}

// ready waits for the input of an open session.
func (tm *tmuxTerm) ready() { tm.t.Helper(); tm.waitFor("Ask corvid") }

// idle waits until no turn runs: the status line no longer says working.
func (tm *tmuxTerm) idle() string {
	tm.t.Helper()
	return tm.waitUntil("the turn to end", func(s string) bool {
		scr := tm.screen()
		return strings.Contains(scr, "Ask corvid") && !strings.Contains(scr, "working")
	})
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// session is one corvid workspace: binaries, an isolated home, a project
// directory with the scripts.
type session struct {
	t    testing.TB
	bins string
	env  []string
	dir  string
}

func newSession(t testing.TB) *session {
	t.Helper()
	env, _ := testkit.IsolatedEnv(t, "CORVID_KEYRING=off")
	var keep []string
	for _, e := range env {
		k, _, _ := strings.Cut(e, "=")
		if k == "HOME" || k == "CORVID_HOME" || strings.HasPrefix(k, "XDG_") || k == "CORVID_KEYRING" || k == "PATH" || k == "GOCOVERDIR" {
			keep = append(keep, e)
		}
	}
	return &session{t: t, bins: binaries(t), env: keep, dir: t.TempDir()}
}

// script writes a scripted model file into the project and returns its
// model name.
func (s *session) script(name, json string) string {
	s.t.Helper()
	must(s.t, os.WriteFile(filepath.Join(s.dir, name), []byte(json), 0o644))
	return "script:" + filepath.Join(s.dir, name)
}

// open runs `corvid ARGS` (bare corvid when args is empty) in a terminal.
func (s *session) open(width, height int, extraEnv []string, args ...string) *tmuxTerm {
	t := s.t.(*testing.T)
	s.t.Helper()
	env := append(append([]string{}, s.env...), extraEnv...)
	return startTerm(t, width, height, s.dir, env, append([]string{filepath.Join(s.bins, "corvid")}, args...)...)
}
