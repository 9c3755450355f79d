package tui

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/corvid-agent/corvid/internal/acp"
)

// keyAgent is an agent in the test's process whose key can be revoked
// mid-session: while revoked, session/prompt fails with auth_required;
// authenticate with "env:TEST_KEY" logs in again. session/load replays
// the prompts it answered. It records the prompts it got.
type keyAgent struct {
	conn     *acp.Conn // its side, for the replay
	noLoad   bool      // no loadSession capability
	failAuth int       // how many authenticate calls fail first
	mu       sync.Mutex
	revoked  bool
	prompts  []acp.PromptRequest
	sessions int // session/new calls
	loads    []string
}

func (k *keyAgent) HandleRequest(_ context.Context, method string, params json.RawMessage) (any, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	switch method {
	case "initialize":
		return map[string]any{"protocolVersion": 1, "authMethods": json.RawMessage(corvidLikeMethods),
			"agentCapabilities": map[string]any{"loadSession": !k.noLoad}}, nil
	case "authenticate":
		if k.failAuth > 0 {
			k.failAuth--
			return nil, acp.AuthRequired("Authentication required: TEST_KEY is not set")
		}
		k.revoked = false
		return map[string]any{}, nil
	case "session/new":
		k.sessions++
		return map[string]any{"sessionId": "sess_" + string(rune('0'+k.sessions))}, nil
	case "session/load":
		var req acp.LoadSessionRequest
		_ = json.Unmarshal(params, &req)
		k.loads = append(k.loads, req.SessionID)
		for _, p := range k.prompts {
			_ = k.conn.Notify("session/update", map[string]any{"sessionId": req.SessionID, "update": chunk("user_message_chunk", p.Prompt[0].Text)})
			_ = k.conn.Notify("session/update", map[string]any{"sessionId": req.SessionID, "update": chunk("agent_message_chunk", "replayed answer\n")})
		}
		_ = k.conn.Notify("session/update", map[string]any{"sessionId": req.SessionID, "update": map[string]any{
			"sessionUpdate": "available_commands_update", "availableCommands": []map[string]any{{"name": "review", "description": "Review"}}}})
		return map[string]any{}, nil
	case "session/prompt":
		var req acp.PromptRequest
		_ = json.Unmarshal(params, &req)
		if k.revoked {
			return nil, acp.AuthRequired("Authentication required: the key was refused (401)")
		}
		k.prompts = append(k.prompts, req)
		return acp.PromptResponse{StopReason: acp.StopEndTurn}, nil
	}
	return nil, acp.MethodNotFound(method)
}

func (k *keyAgent) HandleNotification(context.Context, string, json.RawMessage) {}

func (k *keyAgent) got() []acp.PromptRequest {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]acp.PromptRequest(nil), k.prompts...)
}

func (k *keyAgent) revoke() { k.mu.Lock(); k.revoked = true; k.mu.Unlock() }

// keyAgentPipe connects the TUI to k as startAgent does to a process
// (notifications in order with the answers).
func keyAgentPipe(t *testing.T, k *keyAgent) *agent {
	t.Helper()
	toTUI, fromAgent := io.Pipe()
	toAgent, fromTUI := io.Pipe()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	a := &agent{argv: []string{"corvid", "acp"}, termAuth: true, stdin: fromTUI, send: func(any) {}, stderr: &tailBuffer{max: 1 << 10},
		served: make(chan struct{}), exited: make(chan struct{})}
	a.conn = acp.NewConn(toTUI, fromTUI, a, acp.Options{Logger: quiet, NotifyOnReader: true})
	k.conn = acp.NewConn(toAgent, fromAgent, k, acp.Options{Logger: quiet})
	go func() { _ = a.conn.Serve(context.Background(), time.Second); close(a.served) }()
	go func() { _ = k.conn.Serve(context.Background(), time.Second) }()
	t.Cleanup(func() { _ = fromTUI.Close(); _ = fromAgent.Close() })
	return a
}

// driveUpdates is drive with the agent's queued updates taken before each
// message, as Update takes them.
func driveUpdates(t *testing.T, m *model, cmd tea.Cmd) {
	t.Helper()
	if cmd == nil {
		return
	}
	msg := cmd()
	for _, u := range m.ag.takeUpdates(false) {
		m.update(u)
	}
	switch msg := msg.(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			driveUpdates(t, m, c)
		}
	default:
		driveUpdates(t, m, m.agentMsg(msg))
	}
}

// refusedTurn opens a session on k, answers one prompt, revokes the key
// and sends a second prompt, which is refused.
func refusedTurn(t *testing.T, k *keyAgent) *model {
	t.Helper()
	m := loginModel(keyAgentPipe(t, k), "")
	driveUpdates(t, m, m.openSession(false, ""))
	if !m.ready {
		t.Fatalf("no session: %q", m.printed())
	}
	m.in.set("first")
	driveUpdates(t, m, m.submit())
	k.revoke()
	m.in.set("second")
	driveUpdates(t, m, m.submit())
	return m
}

func texts(ps []acp.PromptRequest) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.SessionID+":"+p.Prompt[0].Text)
	}
	return strings.Join(out, ",")
}

// A turn refused with auth_required opens the login picker and says the
// prompt is sent again after the login; after authenticate succeeds it
// is sent once, with its blocks, on the same session; a second login
// sends nothing more.
func TestTurnAuthRequiredResendsThePromptOnceAfterALogin(t *testing.T) {
	k := &keyAgent{}
	m := refusedTurn(t, k)
	out := strings.Join(m.printed(), "\n")
	if m.picker == nil || m.picker.title != "Log in" {
		t.Fatalf("no login picker after the turn's auth_required:\n%s", out)
	}
	for _, want := range []string{"✗ Authentication required: the key was refused (401)", "not answered: it is sent again after the login"} {
		if !strings.Contains(out, want) {
			t.Errorf("printed lacks %q:\n%s", want, out)
		}
	}
	pressKey(t, m, digit('2')) // the agent method: authenticate
	if got := texts(k.got()); got != "sess_1:first,sess_1:second" {
		t.Fatalf("prompts %s; want the refused one again, once, on sess_1", got)
	}
	if out := strings.Join(m.printed(), "\n"); !strings.Contains(out, "sending the prompt again: second") {
		t.Errorf("the resend is not told:\n%s", out)
	}
	// The resend's turn ends; a second login resends nothing.
	m.running = false
	m.in.set("/login")
	driveUpdates(t, m, m.submit())
	pressKey(t, m, digit('2'))
	if got := texts(k.got()); got != "sess_1:first,sess_1:second" {
		t.Errorf("after a second login, prompts %s; want no second resend", got)
	}
}

// Esc on the picker the refusal opened drops the prompt: a login after
// it resends nothing, and the input keeps working.
func TestEscOnTheTurnsLoginPickerResendsNothing(t *testing.T) {
	k := &keyAgent{}
	m := refusedTurn(t, k)
	if m.picker == nil {
		t.Fatal("no login picker")
	}
	pressKey(t, m, tea.KeyPressMsg{Code: tea.KeyEscape})
	if out := strings.Join(m.printed(), "\n"); m.picker != nil || !strings.Contains(out, "not sent again") {
		t.Fatalf("Esc: picker open %v, printed:\n%s", m.picker != nil, out)
	}
	m.in.set("/login")
	driveUpdates(t, m, m.submit())
	pressKey(t, m, digit('2'))
	if got := texts(k.got()); got != "sess_1:first" {
		t.Fatalf("after Esc and a login, prompts %s; want none sent again", got)
	}
	m.in.set("third")
	driveUpdates(t, m, m.submit())
	if got := texts(k.got()); got != "sess_1:first,sess_1:third" {
		t.Errorf("the input after Esc: prompts %s", got)
	}
}

// A login that fails keeps the prompt for the next one; Esc on the
// picker /login then opens drops it.
func TestEscOnALaterLoginPickerDropsTheKeptPrompt(t *testing.T) {
	k := &keyAgent{failAuth: 1}
	m := refusedTurn(t, k)
	pressKey(t, m, digit('2')) // authenticate fails
	if m.resend == nil {
		t.Fatal("a failed login dropped the kept prompt")
	}
	m.in.set("/login")
	driveUpdates(t, m, m.submit())
	pressKey(t, m, tea.KeyPressMsg{Code: tea.KeyEscape})
	m.in.set("/login")
	driveUpdates(t, m, m.submit())
	pressKey(t, m, digit('2')) // succeeds
	if got := texts(k.got()); got != "sess_1:first" {
		t.Errorf("prompts %s; want none sent again after Esc", got)
	}
}

// After a terminal login the agent is restarted and the session loaded
// again: its replay prints nothing (the screen shows it), the session's
// commands still apply, and the refused prompt goes to that session.
func TestReloadAfterALoginPrintsNothingTwiceAndResends(t *testing.T) {
	k := &keyAgent{}
	m := refusedTurn(t, k)
	m.printed()
	pressKey(t, m, tea.KeyPressMsg{Code: tea.KeyEscape}) // reopened below by hand
	m.resend = &resend{sessionID: "sess_1", text: "second", blocks: []acp.ContentBlock{acp.TextBlock("second")}}
	k.mu.Lock()
	k.revoked = false
	k.mu.Unlock()
	// What loginRan does after the restart, on the same agent here.
	driveUpdates(t, m, m.reopenSession())
	out := strings.Join(m.printed(), "\n")
	if strings.Contains(out, "replayed answer") || strings.Contains(out, "› first") {
		t.Errorf("the replay was printed again:\n%s", out)
	}
	if !strings.Contains(out, "session sess_1 loaded again") || len(m.commands) != 1 {
		t.Errorf("commands %v, printed:\n%s", m.commands, out)
	}
	if got := texts(k.got()); got != "sess_1:first,sess_1:second" || strings.Join(k.loads, ",") != "sess_1" {
		t.Errorf("loads %q, prompts %s; want sess_1 loaded and the prompt sent on it", k.loads, got)
	}
	// Updates after the load are shown again.
	m.running = false
	m.in.set("fourth")
	driveUpdates(t, m, m.submit())
	if out := strings.Join(m.printed(), "\n"); !strings.Contains(out, "fourth") {
		t.Errorf("after the reload:\n%s", out)
	}
}

// An agent without loadSession gets a new session after the restart, the
// user is told, and the prompt written for the old one is not sent.
func TestReloadWithoutLoadSessionOpensANewOneAndResendsNothing(t *testing.T) {
	k := &keyAgent{noLoad: true}
	m := refusedTurn(t, k)
	pressKey(t, m, tea.KeyPressMsg{Code: tea.KeyEscape})
	m.resend = &resend{sessionID: "sess_1", text: "second", blocks: []acp.ContentBlock{acp.TextBlock("second")}}
	m.printed()
	driveUpdates(t, m, m.reopenSession())
	out := strings.Join(m.printed(), "\n")
	if m.sessionID != "sess_2" || !strings.Contains(out, "cannot load a session (no loadSession)") || !strings.Contains(out, "not sent again") {
		t.Errorf("session %q, printed:\n%s", m.sessionID, out)
	}
	if got := texts(k.got()); got != "sess_1:first" {
		t.Errorf("prompts %s; want nothing sent on the new session", got)
	}
}

// A terminal login picked while a turn runs stays refused, and the
// scrollback says why and what to do.
func TestTerminalLoginDuringATurnSaysEscFirst(t *testing.T) {
	k := &keyAgent{}
	m := loginModel(keyAgentPipe(t, k), "")
	driveUpdates(t, m, m.openSession(false, ""))
	m.running = true
	m.in.set("/login")
	driveUpdates(t, m, m.submit())
	if m.picker == nil || !strings.Contains(m.picker.items[0].note, "Esc") {
		t.Fatalf("picker %+v", m.picker)
	}
	if execs := pressKey(t, m, digit('1')); execs != 0 {
		t.Fatalf("a terminal login ran during a turn")
	}
	if out := strings.Join(m.printed(), "\n"); !strings.Contains(out, "restarts the agent, which would end the running turn: Esc cancels the turn, then /login") {
		t.Errorf("printed:\n%s", out)
	}
}
