package tui

import (
	"context"
	"encoding/json"
	"errors"

	tea "charm.land/bubbletea/v2"

	"github.com/corvid-agent/corvid/internal/acp"
)

// A key that expires or is revoked mid-session. When session/prompt fails
// with auth_required, the error is shown, the login picker opens
// (loginpick.go), and the prompt is kept: after a login succeeds it is
// sent again, once, with the blocks it had (its text and attachments), on
// the session it was written for, and never on another. Esc on that
// picker drops it; so does a new prompt.
//
// A terminal login restarts the agent (loginRan); the session that was
// open is then loaded again (session/load) rather than a new one opened.
// The load replays the transcript, which this screen shows already: the
// replay is dropped whole (quietLoad), since a local agent's session has
// only what this TUI showed, live or loaded, and a terminal login never
// runs during a turn.

// resend is a prompt refused with auth_required, kept for after a login.
type resend struct {
	sessionID string // the session it was written for
	text      string
	blocks    []acp.ContentBlock
}

// turnRefused keeps a prompt the agent refused with auth_required, and
// opens the login picker, when the agent offers login methods.
func (m *model) turnRefused(msg promptDoneMsg) {
	var e *acp.Error
	if !errors.As(msg.err, &e) || e.Code != acp.CodeAuthRequired || msg.ag != m.ag || m.ag == nil {
		return
	}
	if len(m.ag.logins()) == 0 {
		m.printLines(m.th.dim.Render("  the agent needs a login and offers no login method: see its documentation"))
		return
	}
	if m.picker != nil || m.perm != nil || m.form != nil {
		m.printLines(m.th.dim.Render("  /login logs in"))
		return
	}
	m.resend = &resend{sessionID: msg.sessionID, text: msg.text, blocks: msg.blocks}
	m.printLines(m.th.dim.Render("  the prompt was not answered: it is sent again after the login (Esc: not sent)"))
	m.openLoginPicker()
}

// loginClosed is Esc on a login picker: a prompt kept for after the login
// is dropped.
func (m *model) loginClosed() {
	if m.resend != nil {
		m.resend = nil
		m.printLines(m.th.dim.Render("  the prompt is not sent again (/login still logs in)"))
	}
}

// resendPrompt sends the kept prompt again, once, when its session is the
// open one; otherwise it is dropped and the user told.
func (m *model) resendPrompt() tea.Cmd {
	r := m.resend
	if r == nil {
		return nil
	}
	m.resend = nil
	if !m.ready || m.sessionID != r.sessionID || m.running {
		m.printLines(m.th.warn.Render("! the prompt was not sent again: it was written for session " + r.sessionID))
		return nil
	}
	m.printLines(m.th.accent.Render("↻ ") + m.th.dim.Render("sending the prompt again: ") + oneLine(scrubText(r.text)))
	m.printLines("")
	return m.startTurn(r.text, r.blocks)
}

// reloadSession opens the session id again on a restarted agent: loaded,
// its replay dropped (quietLoad), when the agent offers loadSession; else
// a new one, and the user is told.
func (m *model) reloadSession(id string) tea.Cmd {
	m.ready = false
	m.quietLoad = id
	ag, cwd := m.ag, m.opts.Cwd
	return func() tea.Msg {
		msg := reload(ag, cwd, id)
		msg.ag = ag
		return msg
	}
}

func reload(ag *agent, cwd, id string) sessionMsg {
	ctx := context.Background()
	if err := ag.initialize(ctx); err != nil {
		return sessionMsg{err: err}
	}
	if ag.loadable() {
		var resp acp.LoadSessionResponse
		err := ag.call(ctx, "session/load", acp.LoadSessionRequest{SessionID: id, Cwd: cwd, MCPServers: []acp.McpServer{}}, &resp)
		if err != nil {
			return sessionMsg{err: sessionError("session/load "+id, err, ag.logins(), ag.argv)}
		}
		return sessionMsg{id: id, modes: resp.Modes, config: resp.ConfigOptions, loaded: true, again: true}
	}
	var resp acp.NewSessionResponse
	if err := ag.call(ctx, "session/new", acp.NewSessionRequest{Cwd: cwd, MCPServers: []acp.McpServer{}}, &resp); err != nil {
		return sessionMsg{err: sessionError("session/new", err, ag.logins(), ag.argv)}
	}
	return sessionMsg{id: resp.SessionID, modes: resp.Modes, config: resp.ConfigOptions, unloadable: id}
}

// loadable tells whether initialize said the agent loads sessions.
func (a *agent) loadable() bool {
	a.initMu.Lock()
	defer a.initMu.Unlock()
	return a.canLoad
}

// reopened says how a session opened after a login relates to the one
// before, and sends the kept prompt when it is that one.
func (m *model) reopened(msg sessionMsg) tea.Cmd {
	switch {
	case msg.again:
		m.printLines(m.th.dim.Render("── session " + msg.id + " loaded again (its transcript is above) ──"))
	case msg.unloadable != "":
		m.printLines(m.th.warn.Render("! the agent cannot load a session (no loadSession): session "+msg.unloadable+" is left"),
			m.th.dim.Render("── new session ──"))
	}
	if m.resend == nil {
		return nil
	}
	return m.resendPrompt()
}

// replayed tells whether an update is of the transcript a load replays
// (messages, thoughts, tool calls, the plan), which quietLoad drops; the
// session's commands, modes, usage and title still apply.
func replayed(u updateMsg) bool {
	if u.text != nil {
		return true
	}
	var k struct {
		Kind string `json:"sessionUpdate"`
	}
	if json.Unmarshal(u.raw, &k) != nil {
		return true
	}
	switch k.Kind {
	case "user_message_chunk", "agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "plan":
		return true
	}
	return false
}
