package tui_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Keys rebound under [tui.keys] in config.toml: Ctrl+Y sends instead of
// Enter, which then does nothing; a binding that cannot be read is told
// when the TUI opens.
func TestKeysReboundInConfig(t *testing.T) {
	s := newSession(t)
	var corvidHome string
	for _, e := range s.env {
		if v, ok := strings.CutPrefix(e, "CORVID_HOME="); ok {
			corvidHome = v
		}
	}
	if corvidHome == "" {
		t.Fatal("the session has no CORVID_HOME")
	}
	must(t, os.MkdirAll(filepath.Join(corvidHome, "config"), 0o700))
	must(t, os.WriteFile(filepath.Join(corvidHome, "config", "config.toml"),
		[]byte("[tui.keys]\nsend = \"ctrl+y\"\ncancel = \"ctrl+nope\"\n"), 0o600))
	tm := s.open(80, 24, nil, "tui", "-m", s.script("hello.json", `{"responses": [{"parts": [{"type": "text", "text": "Sent with Ctrl+Y."}]}]}`))
	tm.ready()
	tm.waitFor(`cancel = "ctrl+nope": unknown key "nope"`)
	tm.typeText("hello")
	tm.keys("Enter")
	tm.typeText(" there")
	tm.waitUntil("the input to hold both words", func(string) bool { return strings.Contains(tm.screen(), "hello there") })
	if strings.Contains(tm.all(), "Sent with Ctrl+Y.") {
		t.Fatal("Enter still sends")
	}
	tm.keys("C-y")
	tm.waitFor("Sent with Ctrl+Y.")
}

// corvid doctor in a real terminal asks it about Shift+Enter: tmux
// answers the device attributes query but neither keyboard query, and
// doctor says what tmux's extended-keys is set to.
func TestDoctorAsksTheTerminalAboutShiftEnter(t *testing.T) {
	s := newSession(t)
	tm := s.open(250, 40, nil, "doctor", "--timeout", "10s")
	out := tm.waitFor("EXIT=")
	flat := strings.Join(strings.Fields(out), " ")
	if !strings.Contains(flat, "shift+enter in tmux") {
		t.Errorf("doctor did not get tmux's answer:\n%s", out)
	}
	if !strings.Contains(flat, "[ok ] tui keys default keys") {
		t.Errorf("doctor lacks the [tui.keys] check:\n%s", out)
	}
}

// Ctrl+G hands the terminal to $VISUAL on the input, and the input is
// what the editor saved when it exits.
func TestCtrlGEditsInTheEditor(t *testing.T) {
	s := newSession(t)
	editor := filepath.Join(s.dir, "ed.sh")
	must(t, os.WriteFile(editor, []byte("#!/bin/sh\nprintf '%s plus the editor\\n' \"$(cat \"$1\")\" > \"$1\"\n"), 0o755))
	tm := s.open(80, 24, []string{"VISUAL=" + editor}, "tui", "-m", s.script("hello.json", `{"responses": [{"parts": [{"type": "text", "text": "Edited."}]}]}`))
	tm.ready()
	tm.typeText("draft")
	tm.keys("C-g")
	tm.waitUntil("the edited input", func(string) bool { return strings.Contains(tm.screen(), "› draft plus the editor") })
	tm.keys("Enter")
	tm.waitFor("Edited.")
}
