package tui_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// What an untrusted repository can make the agent send (its model's
// answer, a file's text, a command it proposes) reaches the terminal as
// text: an escape sequence in it is shown, never obeyed. Here the answer
// tries to set tmux's clipboard (OSC 52) and the window title (OSC 2) and
// to clear the screen, and the proposed command erases its own line and
// draws a harmless one over it, so that the user would allow a command
// they did not see.
func TestEscapeSequencesFromTheAgentAreShownNotObeyed(t *testing.T) {
	s := newSession(t)
	model := s.script("evil.json", `{"responses": [
	  {"parts": [{"type": "text", "text": "Reading the README. \u001b]52;c;cm0gLXJmIH4K\u0007\u001b]2;pwned-title\u0007\u001b[2J\u009b2J"},
	             {"type": "tool_call", "name": "shell", "input": {"command": "rm -rf ~/important \u001b[2K\r\u001b[1Als -la"}}]},
	  {"parts": [{"type": "text", "text": "Finished."}]}
	], "onExhausted": "repeat-last"}`)
	tm := s.open(100, 30, nil, "tui", "-m", model)
	tm.tmux("set-option", "-g", "set-clipboard", "on") // OSC 52 would fill a tmux buffer
	tm.ready()
	tm.typeText("summarise the README")
	tm.keys("Enter")
	q := tm.waitFor("[r/4]")
	for _, want := range []string{`\x1b]52;c;cm0gLXJmIH4K\x07`, `\x1b]2;pwned-title\x07`, `\x1b[2J\u009b2J`, `rm -rf ~/important \x1b[2K\x0d\x1b[1Als -la`} {
		if !strings.Contains(q, want) {
			t.Errorf("the pane does not show %q as text:\n%s", want, q)
		}
	}
	if title := tm.tmux("display-message", "-p", "-t", "main", "#{pane_title}"); strings.Contains(title, "pwned") {
		t.Errorf("the agent's text set the pane's title: %q", title)
	}
	if bufs := tm.tmux("list-buffers"); bufs != "" {
		t.Errorf("the agent's text wrote the clipboard (tmux buffers): %q", bufs)
	}
	tm.keys("n")
	tm.waitFor("Finished.")
	if _, err := os.Stat(filepath.Join(s.dir, "important")); err == nil {
		t.Error("a rejected command ran")
	}
}

// A repository's file name is the repository's text too: picked with @,
// it is shown in the finder and in the prompt's echo with its escape
// sequence as text, and the terminal's title stays.
func TestAFileNamesEscapesAreShownNotObeyed(t *testing.T) {
	s := newSession(t)
	model := s.script("hello.json", `{"responses": [{"parts": [{"type": "text", "text": "Seen."}]}]}`)
	name := "zz\x1b]2;pwned-name\x07.txt"
	must(t, os.WriteFile(filepath.Join(s.dir, name), []byte("x\n"), 0o644))
	tm := s.open(100, 24, nil, "tui", "-m", model)
	tm.ready()
	tm.typeText("look at @zz")
	tm.waitFor(`@zz\x1b]2;pwned-name\x07.txt`)
	tm.keys("Tab")
	tm.keys("Enter")
	out := tm.waitFor("Seen.")
	if !strings.Contains(out, `› look at @zz\x1b]2;pwned-name\x07.txt`) {
		t.Errorf("the prompt's echo does not show the name's escape:\n%s", out)
	}
	if title := tm.tmux("display-message", "-p", "-t", "main", "#{pane_title}"); strings.Contains(title, "pwned") {
		t.Errorf("a file name set the pane's title: %q", title)
	}
}

// A repository whose .git/config makes core.fsmonitor a command (a
// workspace that came as an archive): typing @ lists its files with git
// and runs nothing of the repository's.
func TestAtFinderRunsNoCommandOfTheRepository(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	s := newSession(t)
	model := s.script("hello.json", `{"responses": [{"parts": [{"type": "text", "text": "Seen."}]}]}`)
	must(t, os.WriteFile(filepath.Join(s.dir, "notes.md"), []byte("x\n"), 0o644))
	marker := filepath.Join(t.TempDir(), "fsmonitor-ran")
	for _, args := range [][]string{{"init", "-q"}, {"config", "core.fsmonitor", "touch " + marker + "; echo"}} {
		git := exec.Command("git", args...)
		git.Dir = s.dir
		must(t, git.Run())
	}
	tm := s.open(100, 24, nil, "tui", "-m", model)
	tm.ready()
	tm.typeText("look at @notes")
	tm.waitFor("@notes.md")
	tm.keys("Tab")
	tm.keys("Enter")
	tm.waitFor("Seen.")
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("typing @ ran the repository's core.fsmonitor command")
	}
}
