package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	tea "charm.land/bubbletea/v2"

	"github.com/corvid-agent/corvid/internal/acp"
)

// openSession initialises the connection (once) and opens a session: the
// newest of this directory (cont), the given one (resume) or a new one.
func (m *model) openSession(cont bool, resume string) tea.Cmd {
	ag, rejoin := m.ag, m.rejoining
	if rejoin {
		m.shown.startReplay()
	}
	open := m.sessionOpener(cont, resume)
	return func() tea.Msg {
		msg := open()
		msg.ag, msg.rejoin = ag, rejoin
		return msg
	}
}

func (m *model) sessionOpener(cont bool, resume string) func() sessionMsg {
	ag, cwd := m.ag, m.opts.Cwd
	return func() sessionMsg {
		ctx := context.Background()
		if err := ag.initialize(ctx); err != nil {
			return sessionMsg{err: err}
		}
		if cont {
			var list acp.ListSessionsResponse
			if err := ag.call(ctx, "session/list", acp.ListSessionsRequest{Cwd: cwd}, &list); err != nil {
				return sessionMsg{err: fmt.Errorf("session/list: %s", rpcMessage(err))}
			}
			if len(list.Sessions) == 0 {
				cont = false // nothing to continue: a new session
			} else {
				resume = newest(list.Sessions)
			}
		}
		if resume != "" {
			var resp acp.LoadSessionResponse
			err := ag.call(ctx, "session/load", acp.LoadSessionRequest{SessionID: resume, Cwd: cwd, MCPServers: []acp.McpServer{}}, &resp)
			if err != nil {
				return sessionMsg{err: sessionError("session/load "+resume, err, ag.logins(), ag.argv)}
			}
			return sessionMsg{id: resume, modes: resp.Modes, config: resp.ConfigOptions, loaded: true}
		}
		var resp acp.NewSessionResponse
		if err := ag.call(ctx, "session/new", acp.NewSessionRequest{Cwd: cwd, MCPServers: []acp.McpServer{}}, &resp); err != nil {
			return sessionMsg{err: sessionError("session/new", err, ag.logins(), ag.argv)}
		}
		return sessionMsg{id: resp.SessionID, modes: resp.Modes, config: resp.ConfigOptions}
	}
}

func newest(ss []acp.SessionInfo) string {
	best := ss[0]
	for _, s := range ss[1:] {
		if s.UpdatedAt > best.UpdatedAt {
			best = s
		}
	}
	return best.SessionID
}

func (m *model) sessionOpened(msg sessionMsg) tea.Cmd {
	if msg.ag != nil && m.stale(msg.ag) {
		return nil // the connection dropped: connectionLost tries again
	}
	m.quietLoad = "" // the replay, if any, is over (relogin.go)
	if msg.rejoin && msg.err == nil {
		// The replay added only what was new to the live blocks, which
		// go on with the live updates: nothing is settled here.
		m.modes, m.config = msg.modes, msg.config
		m.syncStatus()
		m.reattached()
		return nil
	}
	if msg.rejoin {
		// Connected again, but the session did not load (the daemon lost
		// it): said below; /new opens another.
		m.offline, m.attempts, m.backoff = false, 0, 0
		m.st.note = ""
		m.rejoinHold = false
	}
	m.rejoining = false
	m.settle()
	m.replaying = false
	if msg.err != nil {
		m.printLines(wrapStyled(m.th.fail.Render(msg.err.Error()), m.width, m.th.fail.Render("✗ "), "  ")...)
		var le *loginError
		login := errors.As(msg.err, &le)
		if login {
			for _, l := range le.lines {
				m.printLines(wrapStyled(l, m.width, "  ", "    ")...)
			}
		}
		if m.opts.LoginHint != "" {
			m.printLines(wrapStyled(m.opts.LoginHint, m.width, "  ", "  ")...)
		}
		m.printLines(m.th.dim.Render("  (Ctrl+D quits)"))
		m.failed = true
		if login && len(le.lines) > 0 && m.picker == nil && m.perm == nil && m.form == nil {
			m.openLoginPicker() // loginpick.go
		}
		return nil
	}
	m.sessionID, m.ready, m.failed = msg.id, true, false
	m.modes, m.config = msg.modes, msg.config
	m.st.title, m.st.used, m.st.size, m.st.cost = "", 0, 0, nil
	m.syncStatus()
	if msg.loaded && !msg.again {
		m.printLines(m.th.dim.Render("── session " + msg.id + " loaded ──"))
	}
	return m.reopened(msg) // relogin.go
}

// syncStatus puts the current model and mode on the status line.
func (m *model) syncStatus() {
	if o := m.modelOption(); o != nil {
		m.st.model = valueName(o)
	}
	if m.modes != nil {
		m.st.mode = m.modes.CurrentModeID
		for _, md := range m.modes.AvailableModes {
			if md.ID == m.modes.CurrentModeID && md.Name != "" {
				m.st.mode = md.Name
			}
		}
	}
}

func (m *model) modelOption() *acp.SessionConfigOption {
	for i, o := range m.config {
		if o.Type == "select" && (o.Category == "model" || o.ID == "model") {
			return &m.config[i]
		}
	}
	return nil
}

func valueName(o *acp.SessionConfigOption) string {
	cur := fmt.Sprint(o.CurrentValue)
	for _, v := range o.Options {
		if v.Value == cur && v.Name != "" {
			return v.Name
		}
	}
	return cur
}

// setConfig sets a config option (the model) through the agent.
func (m *model) setConfig(id, value string) tea.Cmd {
	ag, sid := m.ag, m.sessionID
	return func() tea.Msg {
		v, _ := json.Marshal(value)
		var resp acp.SetSessionConfigOptionResponse
		err := ag.call(context.Background(), "session/set_config_option",
			acp.SetSessionConfigOptionRequest{SessionID: sid, ConfigID: id, Value: v}, &resp)
		return configMsg{config: resp.ConfigOptions, err: err}
	}
}

func (m *model) setMode(id string) tea.Cmd {
	ag, sid := m.ag, m.sessionID
	return func() tea.Msg {
		err := ag.call(context.Background(), "session/set_mode", acp.SetSessionModeRequest{SessionID: sid, ModeID: id}, nil)
		return modeSetMsg{mode: id, err: err}
	}
}

// initialize sends initialize once per connection; later calls return
// at once (or the first one's error, which is retried).
func (a *agent) initialize(ctx context.Context) error {
	a.initMu.Lock()
	defer a.initMu.Unlock()
	if a.initialized {
		return nil
	}
	var init struct {
		AuthMethods json.RawMessage `json:"authMethods"` // parseAuthMethods
		Caps        struct {
			Prompt      promptCaps `json:"promptCapabilities"`
			LoadSession bool       `json:"loadSession"`
		} `json:"agentCapabilities"`
	}
	req := map[string]any{
		"protocolVersion": 1,
		"clientCapabilities": map[string]any{"fs": map[string]bool{"readTextFile": false, "writeTextFile": false}, "terminal": false,
			"auth":        map[string]bool{"terminal": a.termAuth},   // terminal login: login.go
			"elicitation": map[string]any{"form": map[string]any{}}}, // forms: form.go
		"clientInfo": map[string]string{"name": "corvid-tui", "version": "1"},
	}
	if err := a.call(ctx, "initialize", req, &init); err != nil {
		return fmt.Errorf("initialize: %s", rpcMessage(err))
	}
	a.initialized = true
	a.authMu.Lock()
	a.authMethods = parseAuthMethods(init.AuthMethods)
	a.authMu.Unlock()
	a.setPromptCaps(init.Caps.Prompt)
	a.canLoad = init.Caps.LoadSession
	return nil
}
