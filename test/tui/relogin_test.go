package tui_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corvid-agent/corvid/internal/testkit/fakeanthropic"
)

// Keys of the fake provider: never real ones.
const (
	revokedKey = "sk-ant-test-revoked-1111"
	newKey     = "sk-ant-test-new-2222"
)

// storeKey stores key as corvid's Anthropic key, as `corvid auth login`
// in another terminal does.
func storeKey(t *testing.T, s *session, key string) {
	t.Helper()
	login := exec.Command(filepath.Join(s.bins, "corvid"), "auth", "login", "anthropic", "--stdin")
	login.Dir, login.Env, login.Stdin = s.dir, s.env, strings.NewReader(key+"\n")
	if b, err := login.CombinedOutput(); err != nil {
		t.Fatalf("corvid auth login: %v\n%s", err, b)
	}
}

// answeredThenRevoked opens bare corvid on a fake Anthropic API with a
// stored key, has a first prompt answered, then revokes the key (the API
// takes only newKey from then on).
func answeredThenRevoked(t *testing.T) (*session, *fakeanthropic.Server, *tmuxTerm) {
	t.Helper()
	s := newSession(t)
	api := fakeanthropic.New(t)
	api.RequireAPIKey(revokedKey)
	storeKey(t, s, revokedKey)
	api.Enqueue(fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("the first answer")}})
	tm := s.open(100, 30, []string{"ANTHROPIC_BASE_URL=" + api.URL()})
	tm.ready()
	tm.typeText("say one")
	tm.keys("Enter")
	tm.waitFor("the first answer")
	tm.idle()
	api.RequireAPIKey(newKey)
	return s, api, tm
}

// A key revoked mid-session: corvid, on a fake Anthropic API, answers a
// first prompt; the key is then refused (401), corvid maps that to
// auth_required, and the TUI shows the error, opens the login picker and
// says the prompt is sent again after the login. The terminal login
// (corvid acp --login) stores a new key; the agent is started again, the
// same session is loaded, and the refused prompt is answered on it. The
// earlier transcript is on the screen once, and corvid stores one
// session.
func TestLoginAfterAKeyRevokedMidTurnSendsThePromptAgain(t *testing.T) {
	s, api, tm := answeredThenRevoked(t)
	api.Enqueue(fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("the second answer")}})
	tm.typeText("say two")
	tm.keys("Enter")
	out := tm.waitFor("sent again after the login")
	if !strings.Contains(out, "Log in with an API key") || !strings.Contains(out, "✗") {
		t.Fatalf("no error and login picker after the 401:\n%s", out)
	}
	tm.keys("1")
	tm.waitFor("Provider (anthropic")
	tm.typeText("anthropic")
	tm.keys("Enter")
	tm.waitFor("API key (input hidden)")
	tm.typeText(newKey)
	tm.keys("Enter")
	tm.waitFor("the second answer")
	out = tm.idle()
	t.Logf("the pane:\n%s", out)

	for want, n := range map[string]int{
		"› say one": 1, "the first answer": 1, "› say two": 1, "sending the prompt again: say two": 1,
		"the second answer": 1, "loaded again": 1,
	} {
		if got := strings.Count(out, want); got != n {
			t.Errorf("%q is on the screen %d times; want %d", want, got, n)
		}
	}
	if strings.Contains(out, newKey) || strings.Contains(out, revokedKey) || strings.Contains(out, "── new session") {
		t.Errorf("a key, or a new session, on the screen:\n%s", out)
	}
	tm.keys("C-d")
	tm.waitFor("EXIT=0")

	list := runCorvid(t, s, "sessions", "list")
	ids := sessionID.FindAllString(list, -1)
	if len(ids) != 1 {
		t.Fatalf("sessions list: %q; want one session", ids)
	}
	if !strings.Contains(out, ids[0]+" loaded again") {
		t.Errorf("the session loaded again is not %s", ids[0])
	}
	stored := runCorvid(t, s, "sessions", "export", ids[0])
	t.Logf("stored:\n%s", stored)
	// corvid stores the refused turn too (the prompt and "The turn
	// failed"), then the prompt sent again and its answer.
	for want, n := range map[string]int{"## User\n\nsay one": 1, "the first answer": 1, "## User\n\nsay two": 2,
		"The turn failed:** Anthropic returned 401": 1, "the second answer": 1} {
		if got := strings.Count(stored, want); got != n {
			t.Errorf("%q is stored %d times; want %d", want, got, n)
		}
	}
	reqs := api.Requests()
	if last := reqs[len(reqs)-1]; last.APIKey() != newKey {
		t.Errorf("the last request carried another key than the new one")
	}
}

// The same with corvid's agent method: the new key is stored by `corvid
// auth login` in another terminal while the picker is open, and picking
// "Anthropic API key" (authenticate) sends the refused prompt again, once,
// on the open session, without restarting the agent: corvid's
// authenticate gives the open session the new key too, and the prompt is
// answered.
func TestLoginWithAuthenticateAfterAKeyRevokedSendsThePromptOnce(t *testing.T) {
	s, api, tm := answeredThenRevoked(t)
	api.Enqueue(fakeanthropic.Response{Blocks: []fakeanthropic.Block{fakeanthropic.Text("the second answer")}})
	tm.typeText("say two")
	tm.keys("Enter")
	tm.waitFor("sent again after the login")
	storeKey(t, s, newKey)
	tm.keys("2")
	tm.waitFor(": logged in")
	tm.waitFor("the second answer")
	out := tm.idle()
	t.Logf("the pane:\n%s", out)
	for want, n := range map[string]int{
		"› say one": 1, "the first answer": 1, "› say two": 1, "sending the prompt again: say two": 1,
		"the second answer": 1, ": logged in": 1, "sent again after the login": 1, "loaded again": 0,
	} {
		if got := strings.Count(out, want); got != n {
			t.Errorf("%q is on the screen %d times; want %d", want, got, n)
		}
	}
	reqs := api.Requests()
	if last := reqs[len(reqs)-1]; last.APIKey() != newKey {
		t.Errorf("the last request carried another key than the new one")
	}
	tm.keys("C-d")
	tm.waitFor("EXIT=0")
	if ids := sessionID.FindAllString(runCorvid(t, s, "sessions", "list"), -1); len(ids) != 1 {
		t.Errorf("sessions list: %q; want one session", ids)
	}
}
