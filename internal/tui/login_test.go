package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/corvid-agent/corvid/internal/acp"
)

// authAgent is an ACP agent in the test's process that wants a login:
// session/new is refused with auth_required until authenticate succeeds
// with the method named ok. It records every request it gets.
type authAgent struct {
	methods json.RawMessage // initialize's authMethods, as sent
	ok      string          // the method authenticate accepts
	failing int             // how many authenticate calls fail first

	mu     sync.Mutex
	calls  []string // method, or "authenticate ID"
	init   json.RawMessage
	authed bool
}

func (f *authAgent) HandleRequest(_ context.Context, method string, params json.RawMessage) (any, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch method {
	case "initialize":
		f.calls = append(f.calls, method)
		f.init = append(json.RawMessage(nil), params...)
		return map[string]any{"protocolVersion": 1, "authMethods": f.methods}, nil
	case "authenticate":
		var req acp.AuthenticateRequest
		_ = json.Unmarshal(params, &req)
		f.calls = append(f.calls, method+" "+req.MethodID)
		if req.MethodID != f.ok {
			return nil, acp.InvalidParams("Unknown authentication method", req.MethodID)
		}
		if f.failing > 0 {
			f.failing--
			return nil, acp.AuthRequired("Authentication required: TEST_KEY is not set for the agent")
		}
		f.authed = true
		return map[string]any{}, nil
	case "session/new", "session/load":
		f.calls = append(f.calls, method)
		if !f.authed {
			return nil, acp.AuthRequired("Authentication required")
		}
		if method == "session/load" {
			return map[string]any{}, nil
		}
		return map[string]any{"sessionId": "sess_1"}, nil
	}
	return nil, acp.MethodNotFound(method)
}

func (f *authAgent) HandleNotification(context.Context, string, json.RawMessage) {}

func (f *authAgent) authenticated() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		if id, ok := strings.CutPrefix(c, "authenticate "); ok {
			out = append(out, id)
		}
	}
	return out
}

// pipeAgent connects the TUI's side of ACP to h over pipes, as startAgent
// does to a process; argv is the command the agent would have been.
func pipeAgent(t *testing.T, h acp.Handler, termAuth bool, argv ...string) *agent {
	t.Helper()
	toTUI, fromAgent := io.Pipe()
	toAgent, fromTUI := io.Pipe()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	a := &agent{argv: argv, termAuth: termAuth, stdin: fromTUI, send: func(any) {}, stderr: &tailBuffer{max: 1 << 10},
		served: make(chan struct{}), exited: make(chan struct{})}
	a.conn = acp.NewConn(toTUI, fromTUI, a, acp.Options{Logger: quiet})
	srv := acp.NewConn(toAgent, fromAgent, h, acp.Options{Logger: quiet})
	go func() { _ = a.conn.Serve(context.Background(), time.Second); close(a.served) }()
	go func() { _ = srv.Serve(context.Background(), time.Second) }()
	t.Cleanup(func() { _ = fromTUI.Close(); _ = fromAgent.Close() })
	return a
}

// loginModel is a model on ag whose session has not opened yet.
func loginModel(ag *agent, endpoint string) *model {
	m := newModel(Options{Endpoint: endpoint, Cwd: "/project"}, newTheme(true, false))
	m.width, m.height, m.ag = 80, 24, ag
	return m
}

// drive runs cmd as bubbletea would, handing each message it yields back
// to the model (not its prints), until nothing follows. It returns how
// many commands asked to run a process in the terminal (tea.ExecProcess).
func drive(t *testing.T, m *model, cmd tea.Cmd) (execs int) {
	t.Helper()
	if cmd == nil {
		return 0
	}
	switch msg := cmd().(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			execs += drive(t, m, c)
		}
	default:
		if fmt.Sprintf("%T", msg) == "tea.execMsg" {
			return 1
		}
		execs += drive(t, m, m.agentMsg(msg))
	}
	return execs
}

// pressKey is a key as the model gets it, with what its command yields.
func pressKey(t *testing.T, m *model, k tea.KeyPressMsg) int {
	t.Helper()
	return drive(t, m, m.key(k))
}

func digit(r rune) tea.KeyPressMsg { return tea.KeyPressMsg{Code: r, Text: string(r)} }

const corvidLikeMethods = `[
  {"type":"terminal","id":"corvid-login","name":"Log in with an API key","description":"Runs corvid's login in a terminal.","args":["--login"]},
  {"id":"env:TEST_KEY","name":"Test API key (TEST_KEY)","description":"Set TEST_KEY in the environment corvid is launched with, then authenticate."}]`

// A session refused with auth_required opens the login picker; an agent
// method is authenticate with its id: the agent's reason is shown when it
// fails, and the session opens once it succeeds. Only offered ids are
// sent.
func TestLoginPickerAuthenticatesWithAnAgentMethod(t *testing.T) {
	fa := &authAgent{methods: json.RawMessage(corvidLikeMethods), ok: "env:TEST_KEY", failing: 1}
	m := loginModel(pipeAgent(t, fa, true, "corvid", "acp"), "")
	drive(t, m, m.openSession(false, ""))
	if m.ready || m.picker == nil || m.picker.title != "Log in" || len(m.picker.items) != 2 {
		t.Fatalf("after auth_required: ready=%v picker=%+v; want the login picker", m.ready, m.picker)
	}
	out := strings.Join(m.printed(), "\n")
	for _, want := range []string{"needs a login", "Log in with an API key: run corvid --login in a terminal", "(Ctrl+D quits)"} {
		if !strings.Contains(out, want) {
			t.Errorf("the hints lack %q:\n%s", want, out)
		}
	}
	if execs := pressKey(t, m, digit('2')); execs != 0 {
		t.Fatalf("an agent method ran %d processes", execs)
	}
	if out := strings.Join(m.printed(), "\n"); !strings.Contains(out, "TEST_KEY is not set") || m.ready {
		t.Fatalf("a failed authenticate: ready=%v, printed:\n%s", m.ready, out)
	}
	// /login opens the picker again; Enter on the second method.
	m.in.set("/login")
	drive(t, m, m.submit())
	if m.picker == nil {
		t.Fatal("/login opened no picker")
	}
	pressKey(t, m, tea.KeyPressMsg{Code: tea.KeyDown})
	pressKey(t, m, tea.KeyPressMsg{Code: tea.KeyEnter})
	if !m.ready || m.sessionID != "sess_1" {
		t.Fatalf("after a successful authenticate: ready=%v session=%q; printed %q", m.ready, m.sessionID, m.printed())
	}
	if got := fa.authenticated(); strings.Join(got, ",") != "env:TEST_KEY,env:TEST_KEY" {
		t.Errorf("authenticate got %q; want the offered agent method twice, never the terminal one", got)
	}
}

// Attached to the daemon (--connect), initialize does not advertise
// terminal login, and a terminal method the server lists anyway runs
// nothing, and is not sent to authenticate.
func TestConnectedTUIRunsNoTerminalLogin(t *testing.T) {
	fa := &authAgent{methods: json.RawMessage(`[{"type":"terminal","id":"evil","name":"Log in","args":["-c","touch /tmp/pwned"],"env":{"LD_PRELOAD":"/tmp/x.so"}}]`), ok: "none"}
	m := loginModel(pipeAgent(t, fa, false, "sh"), "unix:/run/corvid/serve.sock")
	drive(t, m, m.openSession(false, ""))
	if m.picker == nil {
		t.Fatal("no login picker")
	}
	if note := m.picker.items[0].note; !strings.Contains(note, "not from here") {
		t.Errorf("the terminal method's note = %q; want it marked unusable", note)
	}
	if execs := pressKey(t, m, digit('1')); execs != 0 {
		t.Fatalf("a --connect TUI ran %d processes for a server's terminal method", execs)
	}
	if got := fa.authenticated(); len(got) != 0 {
		t.Errorf("authenticate was called with %q", got)
	}
	if out := strings.Join(m.printed(), "\n"); !strings.Contains(out, "runs nothing") {
		t.Errorf("the user is not told why nothing ran:\n%s", out)
	}
	var init struct {
		Caps struct {
			Auth struct {
				Terminal bool `json:"terminal"`
			} `json:"auth"`
		} `json:"clientCapabilities"`
	}
	must(t, json.Unmarshal(fa.init, &init))
	if init.Caps.Auth.Terminal {
		t.Errorf("a --connect initialize advertised auth.terminal: %s", fa.init)
	}
}

// A terminal method of an agent the TUI started runs in the terminal
// (the process itself is run by the tmux test on the built binaries).
func TestLocalTerminalLoginRunsInTheTerminal(t *testing.T) {
	fa := &authAgent{methods: json.RawMessage(corvidLikeMethods), ok: "env:TEST_KEY"}
	m := loginModel(pipeAgent(t, fa, true, "corvid", "acp"), "")
	drive(t, m, m.openSession(false, ""))
	if note := m.picker.items[0].note; note != "runs in this terminal" {
		t.Errorf("the terminal method's note = %q", note)
	}
	if execs := pressKey(t, m, digit('1')); execs != 1 {
		t.Fatalf("picking the terminal method ran %d processes; want 1", execs)
	}
	if got := fa.authenticated(); len(got) != 0 {
		t.Errorf("a terminal method was passed to authenticate: %q", got)
	}
	// A login that failed says so and shows the hints again; no restart.
	ag := m.ag
	drive(t, m, func() tea.Msg {
		return loginRanMsg{ag: ag, name: "Log in with an API key", err: fmt.Errorf("exit status 1")}
	})
	out := strings.Join(m.printed(), "\n")
	if m.ag != ag || !strings.Contains(out, "failed: exit status 1") || !strings.Contains(out, "• Log in with an API key: run corvid --login") {
		t.Errorf("after a failed login (agent replaced: %v):\n%s", m.ag != ag, out)
	}
	// A picker opened for an agent since replaced sends nothing to either.
	m.in.set("/login")
	drive(t, m, m.submit())
	other := &authAgent{methods: json.RawMessage(corvidLikeMethods), ok: "env:TEST_KEY"}
	m.ag = pipeAgent(t, other, true, "corvid", "acp")
	pressKey(t, m, digit('2'))
	if a, b := fa.authenticated(), other.authenticated(); len(a)+len(b) != 0 || !strings.Contains(strings.Join(m.printed(), "\n"), "started again") {
		t.Errorf("a stale picker authenticated: %q %q", a, b)
	}
}

// The method's env goes over the agent's environment.
func TestLoginEnvOverridesTheAgents(t *testing.T) {
	got := loginEnv([]string{"A=1", "B=2"}, map[string]string{"B": "3", "C": "4", "D=E": "x", "": "y"})
	want := map[string]bool{"A=1": true, "B=3": true, "C=4": true}
	if len(got) != len(want) {
		t.Fatalf("env = %q", got)
	}
	for _, e := range got {
		if !want[e] {
			t.Errorf("env = %q; unexpected %q", got, e)
		}
	}
}

// /login before the agent offered anything says so.
func TestLoginWithNoMethodsSaysSo(t *testing.T) {
	fa := &authAgent{methods: json.RawMessage(`"not a list"`), ok: "x"}
	m := loginModel(pipeAgent(t, fa, true, "agent"), "")
	drive(t, m, m.openSession(false, ""))
	if m.picker != nil {
		t.Fatal("a picker with no methods")
	}
	m.in.set("/login")
	drive(t, m, m.submit())
	out := strings.Join(m.printed(), "\n")
	if m.picker != nil || !strings.Contains(out, "offers no login method") {
		t.Errorf("picker=%v, printed:\n%s", m.picker != nil, out)
	}
	if !strings.Contains(strings.Join(helpLines(m.th, m.keys), "\n"), "/login") {
		t.Error("/help does not list /login")
	}
	m.in.set("/lo")
	if c := m.completions(); len(c) != 1 || c[0].name != "login" {
		t.Errorf("/lo completes to %v", c)
	}
}

// A huge list, entries that are not methods, and names with escape
// sequences: the picker keeps the first methods, draws at most its rows,
// each within the width and with the agent's escapes shown as text
// (scrub.go), and a pick far down the list authenticates that very
// method.
func TestHugeOrMalformedAuthMethodsKeepThePickerWhole(t *testing.T) {
	var list []string
	list = append(list, `42`, `{"id":""}`, `{"id":{"x":1}}`, `null`, `{"type":"terminal","name":"no id"}`)
	for i := range 5000 {
		list = append(list, fmt.Sprintf(`{"id":"m%d","name":"Method\u001b]0;pwned\u0007 %d\nsecond line%s"}`, i, i, strings.Repeat("x", 500)))
	}
	fa := &authAgent{methods: json.RawMessage("[" + strings.Join(list, ",") + "]"), ok: "m19"}
	m := loginModel(pipeAgent(t, fa, true, "agent"), "")
	drive(t, m, m.openSession(false, ""))
	if m.picker == nil || len(m.picker.items) != maxAuthMethods {
		t.Fatalf("picker = %+v; want %d methods", m.picker, maxAuthMethods)
	}
	for range 19 {
		pressKey(t, m, tea.KeyPressMsg{Code: tea.KeyDown})
	}
	for _, w := range []int{40, 80} {
		lines := renderPicker(m.th, m.picker, w)
		if len(lines) > pickerRows+2 {
			t.Errorf("width %d: %d lines; want at most %d", w, len(lines), pickerRows+2)
		}
		for _, l := range lines {
			if ansi.StringWidth(l) > w || strings.ContainsAny(l, "\x07\n") || strings.Contains(l, "\x1b]") {
				t.Errorf("width %d: line %q", w, l)
			}
		}
		if !strings.Contains(strings.Join(lines, "\n"), "› ") || !strings.Contains(strings.Join(lines, "\n"), `Method\x1b]0;pwned\x07 19`) {
			t.Errorf("width %d: the selection is not shown:\n%s", w, strings.Join(lines, "\n"))
		}
	}
	pressKey(t, m, tea.KeyPressMsg{Code: tea.KeyEnter})
	if got := fa.authenticated(); len(got) != 1 || got[0] != "m19" || !m.ready {
		t.Errorf("authenticate %q, ready=%v; want m19 and a session", got, m.ready)
	}
}

// initialize advertises clientCapabilities.auth.terminal when the TUI
// runs the agent's command itself, and not when it is a relay to the
// daemon (--connect): the frame the agent receives says so.
func TestInitializeAdvertisesTerminalLoginOnlyForALocalAgent(t *testing.T) {
	sh := "/bin/sh"
	if _, err := os.Stat(sh); err != nil {
		t.Skip("no /bin/sh")
	}
	for _, c := range []struct {
		endpoint string
		want     bool
	}{{"", true}, {"unix:/nowhere/serve.sock", false}} {
		frame := filepath.Join(t.TempDir(), "initialize.json")
		inR, inW := io.Pipe()
		var out syncBuffer
		done := make(chan error, 1)
		go func() {
			done <- Run(Options{Agent: []string{sh, "-c", `head -n 1 > "$0"; exec cat >/dev/null`, frame}, Cwd: t.TempDir(), Theme: "dark",
				Endpoint: c.endpoint, In: inR, Out: &out, Stderr: io.Discard})
		}()
		var b []byte
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if b, _ = os.ReadFile(frame); len(b) > 0 && b[len(b)-1] == '\n' {
				break
			}
		}
		_, _ = inW.Write([]byte("\x04")) // Ctrl+D quits
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return after Ctrl+D")
		}
		inW.Close()
		var f struct {
			Method string `json:"method"`
			Params struct {
				Caps struct {
					Auth *struct {
						Terminal bool `json:"terminal"`
					} `json:"auth"`
				} `json:"clientCapabilities"`
			} `json:"params"`
		}
		if err := json.Unmarshal(b, &f); err != nil || f.Method != "initialize" {
			t.Fatalf("endpoint %q: the agent's first frame %q: %v", c.endpoint, b, err)
		}
		if got := f.Params.Caps.Auth != nil && f.Params.Caps.Auth.Terminal; got != c.want {
			t.Errorf("endpoint %q: auth.terminal = %v; want %v (%s)", c.endpoint, got, c.want, b)
		}
	}
}

// A session/load refused with auth_required (corvid tui -r ID) opens the
// picker too; Esc closes it, runs nothing, and the hints stay printed.
func TestEscClosesTheLoginPickerOfALoad(t *testing.T) {
	fa := &authAgent{methods: json.RawMessage(corvidLikeMethods), ok: "env:TEST_KEY"}
	m := loginModel(pipeAgent(t, fa, true, "corvid", "acp"), "")
	drive(t, m, m.openSession(false, "sess_old"))
	if m.picker == nil || m.picker.title != "Log in" {
		t.Fatalf("a load refused with auth_required opened no login picker; printed %q", m.printed())
	}
	out := strings.Join(m.printed(), "\n")
	if !strings.Contains(out, "session/load") && !strings.Contains(out, "needs a login") {
		t.Errorf("printed:\n%s", out)
	}
	if execs := pressKey(t, m, tea.KeyPressMsg{Code: tea.KeyEscape}); execs != 0 || m.picker != nil {
		t.Fatalf("Esc: %d processes run, picker open %v", execs, m.picker != nil)
	}
	if !strings.Contains(out, "• Test API key (TEST_KEY): Set TEST_KEY") || len(fa.authenticated()) != 0 {
		t.Errorf("the hints %q, authenticate %q", out, fa.authenticated())
	}
}
