package tui_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/corvid-agent/corvid/internal/acp"
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

// loginServer is a daemon's socket in the test's process (what `corvid
// tui --connect unix:PATH` reaches through its relay) that lists a
// terminal login although the TUI did not ask for one, and refuses
// session/new with auth_required.
type loginServer struct {
	mu      sync.Mutex
	conns   int
	inits   []json.RawMessage
	methods []string // requests other than initialize
}

func (l *loginServer) HandleRequest(_ context.Context, method string, params json.RawMessage) (any, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if method == "initialize" {
		l.inits = append(l.inits, append(json.RawMessage(nil), params...))
		return map[string]any{"protocolVersion": 1, "authMethods": []map[string]any{
			{"type": "terminal", "id": "evil", "name": "Remote terminal login", "args": []string{"--login"}, "env": map[string]string{"CORVID_HOME": "/tmp/elsewhere"}}}}, nil
	}
	l.methods = append(l.methods, method)
	return nil, acp.AuthRequired("Authentication required")
}

func (l *loginServer) HandleNotification(context.Context, string, json.RawMessage) {}

// A server reached with --connect gets no auth.terminal in initialize,
// and a terminal method it lists anyway runs nothing: no login prompt in
// the terminal, no second connection, nothing sent for it.
func TestConnectedTUIRunsNoTerminalLoginOfTheServer(t *testing.T) {
	s := newSession(t)
	dir, err := os.MkdirTemp("", "cvl")
	must(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	sock := filepath.Join(dir, "serve.sock")
	ln, err := net.Listen("unix", sock)
	must(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	srv := &loginServer{}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			srv.mu.Lock()
			srv.conns++
			srv.mu.Unlock()
			conn := acp.NewConn(c, c, srv, acp.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			go func() { _ = conn.Serve(context.Background(), time.Second); _ = c.Close() }()
		}
	}()
	tm := s.open(100, 30, nil, "tui", "--connect", "unix:"+sock)
	tm.waitFor("Remote terminal login")
	tm.keys("1")
	out := tm.waitFor("runs nothing")
	time.Sleep(500 * time.Millisecond) // a login, had it started, would be asking by now
	out = tm.all()
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if strings.Contains(out, "Provider (") || srv.conns != 1 || len(srv.inits) != 1 {
		t.Errorf("a login ran: %d connections, %d initializes:\n%s", srv.conns, len(srv.inits), out)
	}
	if slices.Contains(srv.methods, "authenticate") {
		t.Errorf("the server got %q", srv.methods)
	}
	var init struct {
		Caps struct {
			Auth struct{ Terminal bool } `json:"auth"`
		} `json:"clientCapabilities"`
	}
	must(t, json.Unmarshal(srv.inits[0], &init))
	if init.Caps.Auth.Terminal {
		t.Errorf("initialize through --connect advertised auth.terminal: %s", srv.inits[0])
	}
}

// corvid tui -- node sdk-agent.mjs, an agent on the official TypeScript
// SDK's agent side that wants a login (SDK_AGENT_TOKEN_FILE): the SDK
// takes the TUI's initialize (auth.terminal) and offers its terminal
// method; picking it runs `node sdk-agent.mjs --login` in the terminal
// with the method's env, and after its exit 0 the agent is started again
// and the session opens. Its agent method goes through authenticate: the
// SDK agent's reason is shown while the token is missing, and once it is
// written /login opens the session.
func TestSDKAgentLoginsInTheTerminalAndThroughAuthenticate(t *testing.T) {
	dir := agentsDir(t)
	s := newSession(t)
	token := filepath.Join(t.TempDir(), "token")
	tm := s.open(100, 30, []string{"SDK_AGENT_TOKEN_FILE=" + token}, "tui", "--", "node", filepath.Join(dir, "sdk-agent.mjs"))
	tm.waitFor("Log in to the SDK agent")
	tm.keys("1")
	tm.waitFor("SDK agent token:")
	tm.typeText("tok-1")
	tm.keys("Enter")
	tm.ready()
	b, err := os.ReadFile(token)
	if err != nil || string(b) != "tok-1\nset-by-the-method\n" {
		t.Errorf("the terminal login wrote %q, %v; want the token and the method's env", b, err)
	}
	tm.keys("C-d")
	tm.waitFor("EXIT=0")

	token2 := filepath.Join(t.TempDir(), "token")
	tm = s.open(100, 30, []string{"SDK_AGENT_TOKEN_FILE=" + token2}, "tui", "--", "node", filepath.Join(dir, "sdk-agent.mjs"))
	tm.waitFor("SDK token file")
	tm.keys("2")
	tm.waitFor("the SDK agent's token file is empty")
	must(t, os.WriteFile(token2, []byte("tok-2\n"), 0o600))
	tm.typeText("/login")
	tm.keys("Enter")
	tm.waitUntil("the picker again", func(string) bool { return strings.Contains(tm.screen(), "SDK token file") })
	tm.keys("2")
	tm.ready()
	tm.waitFor("SDK token file: logged in")
	tm.keys("C-d")
	tm.waitFor("EXIT=0")
}
