package tui_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeKey is what the tests paste as a provider key: never a real one,
// and no provider is called (a session opens without a request).
const fakeKey = "sk-ant-test-0000"

// Bare corvid with no key and no -m: the login picker offers corvid's
// methods; "Log in with an API key" runs corvid's own login (corvid acp
// --login) in the same terminal, which asks for a provider and the key;
// back in the TUI the agent is started again and the session opens, with
// the key nowhere on the screen. A second corvid in the same home opens a
// session at once: the key was stored.
func TestBareCorvidLoginRunsInTheTerminal(t *testing.T) {
	s := newSession(t)
	tm := s.openOffline(100, 30)
	picker := tm.waitFor("Log in with an API key")
	for _, want := range []string{"needs a login", "runs in this terminal", "Anthropic API key (ANTHROPIC_API_KEY)"} {
		if !strings.Contains(picker, want) {
			t.Errorf("the pane lacks %q:\n%s", want, picker)
		}
	}
	tm.keys("1")
	tm.waitFor("Provider (anthropic")
	tm.typeText("anthropic")
	tm.keys("Enter")
	tm.waitFor("API key (input hidden)")
	tm.typeText(fakeKey)
	tm.keys("Enter")
	tm.ready()
	out := tm.waitFor("starting the agent again")
	if strings.Contains(out, fakeKey) {
		t.Errorf("the key is on the screen:\n%s", out)
	}
	tm.keys("C-d")
	tm.waitFor("EXIT=0")

	again := s.openOffline(100, 30)
	again.ready()
	if scr := again.all(); strings.Contains(scr, "needs a login") || strings.Contains(scr, fakeKey) {
		t.Errorf("the second run:\n%s", scr)
	}
	again.keys("C-d")
	again.waitFor("EXIT=0")
}

// An agent-type method goes through authenticate on the real corvid:
// with no key it answers which variable is unset, and that is shown; once
// a key is stored (by another process, as `corvid auth login` in another
// terminal), /login and the same method open the session.
func TestCorvidKeyMethodAuthenticates(t *testing.T) {
	s := newSession(t)
	tm := s.openOffline(100, 30)
	tm.waitFor("Anthropic API key (ANTHROPIC_API_KEY)")
	tm.keys("2")
	out := tm.waitUntil("corvid's reason", func(s string) bool {
		return strings.Contains(strings.Join(strings.Fields(s), " "), "ANTHROPIC_API_KEY is not set for corvid and no key is stored")
	})
	if strings.Contains(tm.screen(), "Ask corvid") {
		t.Fatalf("a session opened without a key:\n%s", out)
	}
	login := exec.Command(filepath.Join(s.bins, "corvid"), "auth", "login", "anthropic", "--stdin")
	login.Dir, login.Env, login.Stdin = s.dir, s.env, strings.NewReader(fakeKey+"\n")
	if b, err := login.CombinedOutput(); err != nil {
		t.Fatalf("corvid auth login: %v\n%s", err, b)
	}
	tm.typeText("/login")
	tm.keys("Enter")
	tm.waitUntil("the picker again", func(string) bool { return strings.Contains(tm.screen(), "runs in this terminal") })
	tm.keys("2")
	tm.ready()
	tm.waitFor(": logged in")
	tm.keys("C-d")
	tm.waitFor("EXIT=0")
}

// openOffline runs bare corvid (no -m) in a terminal, in a network
// namespace of its own where the kernel allows it.
func (s *session) openOffline(width, height int) *tmuxTerm {
	s.t.Helper()
	return startTerm(s.t.(*testing.T), width, height, s.dir, s.env, offline(filepath.Join(s.bins, "corvid"))...)
}
