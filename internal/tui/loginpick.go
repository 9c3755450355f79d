package tui

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/corvid-agent/corvid/internal/acp"
)

// Logging in from the TUI. When the agent refuses a session with
// auth_required, and on /login, its login methods are offered in a
// picker:
//
//   - a terminal method runs the agent's own command with the method's
//     args (and env over the agent's environment) in this terminal, the
//     TUI suspended as for $EDITOR (editor.go). Exit 0 is a login; the
//     agent is then started again, so that a fresh initialize finds the
//     credentials, and the session opens. The method is never passed to
//     authenticate (the schema's AuthMethodTerminal). Only an agent the
//     TUI started itself is run so: initialize advertises auth.terminal
//     for those alone, and a relay to the daemon (--connect) has no
//     command of the agent's here, whatever it lists.
//   - an agent method (no type) is authenticate with its id; the session
//     opens when it succeeds.
//   - an env_var method cannot be done from here: it says what to set.
//
// The TUI never sees a key: the agent's own login reads it from the
// terminal.

// loginRanMsg is the end of a terminal login.
type loginRanMsg struct {
	ag   *agent // the agent whose method ran
	name string
	err  error
}

// authDoneMsg is the agent's answer to authenticate.
type authDoneMsg struct {
	ag   *agent
	name string
	err  error
}

// logins are the login methods the agent offered in initialize (none
// before it answered).
func (a *agent) logins() []authMethod {
	a.authMu.Lock()
	defer a.authMu.Unlock()
	return a.authMethods
}

// loginMsg handles the end of a login.
func (m *model) loginMsg(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case loginRanMsg:
		return m.loginRan(msg)
	case authDoneMsg:
		return m.authDone(msg)
	}
	return nil
}

// openLoginPicker offers the agent's login methods (/login, and a session
// refused with auth_required). The picker keeps the methods of the agent
// it was opened for: a pick runs only what that agent offered.
func (m *model) openLoginPicker() {
	var methods []authMethod
	if m.ag != nil {
		methods = m.ag.logins()
	}
	if len(methods) == 0 {
		m.printLines(m.th.warn.Render("the agent offers no login method"))
		return
	}
	ag := m.ag
	p := &picker{title: "Log in", closed: (*model).loginClosed} // relogin.go
	for i, am := range methods {
		p.items = append(p.items, pickItem{label: methodName(am), value: strconv.Itoa(i), note: m.loginNote(ag, am)})
	}
	p.pick = func(m *model, it pickItem) tea.Cmd {
		i, err := strconv.Atoi(it.value)
		if err != nil || i < 0 || i >= len(methods) {
			return nil
		}
		if ag != m.ag {
			m.printLines(m.th.warn.Render("the agent was started again: /login lists its methods"))
			return nil
		}
		return m.login(ag, methods[i])
	}
	m.picker = p
}

// loginNote says in a few words what picking a method does.
func (m *model) loginNote(ag *agent, am authMethod) string {
	switch am.Type {
	case "terminal":
		if m.canRunLogin(ag) && m.running {
			return "runs in this terminal once the turn ends (Esc cancels it)"
		}
		if m.canRunLogin(ag) {
			return "runs in this terminal"
		}
		return "not from here: the agent's command runs elsewhere"
	case "":
		return ""
	case "env_var":
		return "set in the environment, then start again"
	}
	return "not supported by this client"
}

// canRunLogin tells whether a terminal method of ag may be run: the TUI
// started ag itself, advertised auth.terminal, and is not a relay to the
// daemon.
func (m *model) canRunLogin(ag *agent) bool {
	return ag != nil && ag.termAuth && !m.connected()
}

// login does one offered method.
func (m *model) login(ag *agent, am authMethod) tea.Cmd {
	switch am.Type {
	case "terminal":
		return m.runLogin(ag, am)
	case "":
		return m.authenticate(ag, am)
	case "env_var":
		m.printLines(wrapStyled(m.th.warn.Render(loginHow(am, ag.argv)), m.width, "  ", "    ")...)
		return nil
	}
	m.printLines(m.th.warn.Render("the TUI cannot use " + methodName(am) + " (a login of type " + displayText(am.Type) + ")"))
	return nil
}

// runLogin hands the terminal to the agent's command with the method's
// arguments (loginRanMsg).
func (m *model) runLogin(ag *agent, am authMethod) tea.Cmd {
	if !m.canRunLogin(ag) {
		m.printLines(m.th.fail.Render("✗ " + methodName(am) + " runs the agent's command in a terminal, and this TUI did not start the agent: it runs nothing for it"))
		return nil
	}
	if m.running {
		// Restarting the agent would end the turn under it.
		m.printLines(m.th.warn.Render("! " + methodName(am) + " restarts the agent, which would end the running turn: Esc cancels the turn, then /login"))
		return nil
	}
	argv := append(slices.Clone(ag.argv), am.Args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = m.opts.Cwd
	cmd.Env = loginEnv(os.Environ(), am.Env)
	if m.opts.In == nil && m.opts.Out == nil {
		// The terminal itself, not bubbletea's writer: a login may ask
		// whether its output is a terminal.
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	}
	name := methodName(am)
	m.outDirect(true) // on the terminal before the login has it
	return tea.ExecProcess(cmd, func(err error) tea.Msg { return loginRanMsg{ag: ag, name: name, err: err} })
}

// loginEnv is the agent's environment with the method's variables over
// it; a name that could not be one is left out.
func loginEnv(base []string, add map[string]string) []string {
	env := slices.Clone(base)
	for k, v := range add {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.Contains(v, "\x00") {
			continue
		}
		env = slices.DeleteFunc(env, func(e string) bool { return strings.HasPrefix(e, k+"=") })
		env = append(env, k+"="+v)
	}
	return env
}

// loginRan restarts the agent after a terminal login that exited 0, so
// that its initialize and session find the new credentials; a failed one
// is told, with the hints again.
func (m *model) loginRan(msg loginRanMsg) tea.Cmd {
	m.outDirect(false)
	if msg.err != nil {
		m.printLines(m.th.fail.Render("✗ the login (" + msg.name + ") failed: " + msg.err.Error()))
		m.loginHints()
		return nil
	}
	if msg.ag != m.ag || m.quitting {
		return nil
	}
	m.printLines(m.th.ok.Render("✓ ") + msg.name + m.th.dim.Render(": done; starting the agent again"))
	ag, err := startAgent(m.opts.Agent, m.opts.Cwd, m.send, true)
	if err != nil {
		m.printLines(m.th.fail.Render("✗ " + err.Error()))
		return nil
	}
	old := m.ag
	m.ag = ag // the old agent's end is then a replaced agent's (Update)
	closeOld := func() tea.Msg { old.close(2 * time.Second); return nil }
	return tea.Batch(closeOld, m.reopenSession())
}

// authenticate asks the agent to log in with an agent method
// (authDoneMsg).
func (m *model) authenticate(ag *agent, am authMethod) tea.Cmd {
	name := methodName(am)
	m.st.note = "logging in…"
	return func() tea.Msg {
		var resp acp.AuthenticateResponse
		err := ag.call(context.Background(), "authenticate", acp.AuthenticateRequest{MethodID: am.ID}, &resp)
		return authDoneMsg{ag: ag, name: name, err: err}
	}
}

// authDone opens the session once authenticate succeeded, or tells the
// agent's reason it did not.
func (m *model) authDone(msg authDoneMsg) tea.Cmd {
	if msg.ag != m.ag {
		return nil
	}
	m.st.note = ""
	if msg.err != nil {
		m.printLines(wrapStyled(m.th.fail.Render(msg.name+": "+displayText(rpcMessage(msg.err))), m.width, m.th.fail.Render("✗ "), "  ")...)
		m.printLines(m.th.dim.Render("  (/login tries another way, Ctrl+D quits)"))
		return nil
	}
	m.printLines(m.th.ok.Render("✓ ") + msg.name + m.th.dim.Render(": logged in"))
	if m.ready {
		return m.resendPrompt() // the open session goes on; the agent applies the login (relogin.go)
	}
	return m.reopenSession()
}

// reopenSession opens a session after a login: the one open (or the one
// whose prompt was refused) again, loaded (relogin.go); as at start when
// none was open.
func (m *model) reopenSession() tea.Cmd {
	id := m.sessionID
	if m.resend != nil {
		id = m.resend.sessionID
	}
	if id != "" && (m.ready || m.resend != nil) {
		return m.reloadSession(id)
	}
	m.replaying = m.opts.Continue || m.opts.Resume != ""
	return m.openSession(m.opts.Continue, m.opts.Resume)
}

// loginHints prints the agent's login methods in words again.
func (m *model) loginHints() {
	if m.ag == nil {
		return
	}
	for _, am := range m.ag.logins() {
		m.printLines(wrapStyled("• "+loginHow(am, m.ag.argv), m.width, "  ", "    ")...)
	}
	m.printLines(m.th.dim.Render("  (/login tries again, Ctrl+D quits)"))
}
