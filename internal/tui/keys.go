package tui

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/corvid-agent/corvid/internal/acp"
	"github.com/corvid-agent/corvid/internal/tuiargs"
)

// ownCommands are the TUI's slash commands; the agent's come from
// available_commands_update.
var ownCommands = []struct{ name, desc string }{
	{"model", "pick the model"},
	{"mode", "pick the session mode"},
	{"new", "start a new session"},
	{"sessions", "load one of this directory's sessions"},
	{"login", "log in with one of the agent's methods"},
	{"help", "show the keys"},
	{"quit", "leave"},
}

func (m *model) key(k tea.KeyPressMsg) tea.Cmd {
	s := k.String()
	act := m.action(k)
	if act != "interrupt" {
		m.quitArm = false
	}
	if m.perm != nil {
		return m.permissionKey(k)
	}
	if m.form != nil { // formkeys.go
		return m.formKey(k)
	}
	if m.picker != nil {
		return m.pickerKey(s)
	}
	if m.finderKey(s) {
		return nil
	}
	if cmd, ok := m.renderKey(act); ok { // keys_render.go
		return cmd
	}
	switch act {
	case "interrupt":
		switch {
		case m.running:
			return m.cancel()
		case !m.in.empty():
			m.in.reset()
		case m.quitArm:
			return m.quit()
		default:
			m.quitArm = true
			m.st.note = "Ctrl+C again to quit"
			return nil
		}
	case "quit":
		if m.in.empty() {
			return m.quit()
		}
		m.in.del()
	case "cancel":
		return m.cancel()
	case "send":
		return m.submit()
	case "cycle_mode":
		return m.cycleMode()
	case "sessions":
		return m.listSessions()
	case "editor":
		return m.editInEditor() // editor.go
	case "paste_image":
		return m.pasteImage() // clippaste.go
	case "complete":
		if c := m.completions(); len(c) > 0 {
			m.in.set("/" + c[0].name + " ")
		}
	default:
		m.editKey(act, k)
	}
	if m.st.note == "Ctrl+C again to quit" {
		m.st.note = ""
	}
	return nil
}

// action is what the key does in the input, by the keymap (the defaults
// and [tui.keys]); "" for a key bound to nothing.
func (m *model) action(k tea.KeyPressMsg) string {
	if a, ok := m.keys[k.Keystroke()]; ok {
		return a
	}
	return m.keys[k.String()]
}

// editKey applies a key that edits the input: its action, else the text
// it types.
func (m *model) editKey(act string, k tea.KeyPressMsg) {
	switch act {
	case "newline":
		m.in.insert("\n")
	case "backspace":
		m.in.backspace()
	case "delete":
		m.in.del()
	case "left":
		m.in.left()
	case "right":
		m.in.right()
	case "home":
		m.in.home()
	case "end":
		m.in.end()
	case "up":
		m.in.up()
	case "down":
		m.in.down()
	case "kill_line":
		m.in.killLine()
	case "delete_word":
		m.in.deleteWord()
	default:
		if k.Text != "" && k.Mod&(tea.ModCtrl|tea.ModAlt) == 0 {
			m.in.insert(k.Text)
		}
	}
}

func (m *model) quit() tea.Cmd {
	m.quitting = true
	m.cancelQuestions()
	return nil
}

func (m *model) permissionKey(k tea.KeyPressMsg) tea.Cmd {
	opts := m.perm.req.Options
	s := k.String()
	switch s {
	case "esc", "ctrl+c":
		return m.cancel()
	case "up", "k", "left":
		m.permSel = (m.permSel + len(opts) - 1) % max(len(opts), 1)
	case "down", "j", "right", "tab":
		m.permSel = (m.permSel + 1) % max(len(opts), 1)
	case "enter":
		m.answer(m.permSel)
	default:
		if len(s) == 1 && s[0] >= '1' && s[0] <= '9' {
			m.answer(int(s[0] - '1'))
			return nil
		}
		for i, o := range opts {
			if optionKey(o.Kind) == s {
				m.answer(i)
				return nil
			}
		}
	}
	return nil
}

func (m *model) pickerKey(s string) tea.Cmd {
	p := m.picker
	switch s {
	case "esc", "ctrl+c":
		m.picker = nil
		if p.closed != nil {
			p.closed(m)
		}
	case "ctrl+d": // as on an empty input: a failed start says Ctrl+D quits
		m.picker = nil
		return m.quit()
	case "up", "k":
		p.sel = (p.sel + len(p.items) - 1) % len(p.items)
	case "down", "j", "tab":
		p.sel = (p.sel + 1) % len(p.items)
	case "enter":
		m.picker = nil
		return p.pick(m, p.items[p.sel])
	default:
		if len(s) == 1 && s[0] >= '1' && s[0] <= '9' && int(s[0]-'1') < len(p.items) {
			m.picker = nil
			return p.pick(m, p.items[s[0]-'1'])
		}
	}
	return nil
}

type completion struct{ name, desc string }

// completions lists the slash commands the input's first word starts.
func (m *model) completions() []completion {
	t := m.in.text()
	if !strings.HasPrefix(t, "/") || strings.ContainsAny(t, " \n") {
		return nil
	}
	pre := t[1:]
	var out []completion
	seen := map[string]bool{}
	for _, c := range ownCommands {
		if strings.HasPrefix(c.name, pre) {
			out = append(out, completion{c.name, c.desc})
			seen[c.name] = true
		}
	}
	for _, c := range m.commands {
		if strings.HasPrefix(c.Name, pre) && !seen[c.Name] {
			out = append(out, completion{c.Name, c.Description})
		}
	}
	return out
}

// submit runs a TUI command or sends the input as a prompt.
func (m *model) submit() tea.Cmd {
	text := m.in.text()
	if strings.TrimSpace(text) == "" {
		return nil
	}
	if strings.HasPrefix(text, "/") {
		word, _, _ := strings.Cut(strings.TrimPrefix(text, "/"), " ")
		c := m.completions()
		switch {
		case len(c) == 1:
			word = c[0].name // an unambiguous prefix
		case len(c) > 1 && !slices.ContainsFunc(c, func(x completion) bool { return x.name == word }):
			m.st.note = "which one? Tab completes"
			return nil
		}
		switch word {
		case "quit", "exit":
			m.in.take()
			return m.quit()
		case "help":
			m.in.take()
			m.printLines(helpLines(m.th, m.keys)...)
			return nil
		case "model":
			m.in.take()
			m.openModelPicker()
			return nil
		case "mode":
			m.in.take()
			m.openModePicker()
			return nil
		case "sessions":
			m.in.take()
			return m.listSessions()
		case "login":
			m.in.take()
			m.openLoginPicker() // loginpick.go
			return nil
		case "new":
			if m.running {
				m.st.note = "a turn is running (Esc cancels it)"
				return nil
			}
			m.in.take()
			m.printLines("", m.th.dim.Render("── new session ──"))
			m.ready = false
			return m.openSession(false, "")
		}
	}
	if m.offline {
		m.st.note = "not connected: reconnecting to " + m.opts.Endpoint
		return nil
	}
	if !m.ready || m.gone {
		m.st.note = "no session yet"
		return nil
	}
	if m.running {
		m.st.note = "a turn is running (Esc cancels it)"
		return nil
	}
	m.st.note = ""
	imgs := m.in.attached()
	return m.prompt(m.in.take(), imgs...)
}

// listSessions asks the agent for this directory's sessions; the answer
// opens a picker (sessionsMsg).
func (m *model) listSessions() tea.Cmd {
	if m.running {
		m.st.note = "a turn is running (Esc cancels it)"
		return nil
	}
	ag, cwd := m.ag, m.opts.Cwd
	return func() tea.Msg {
		var list acp.ListSessionsResponse
		err := ag.call(context.Background(), "session/list", acp.ListSessionsRequest{Cwd: cwd}, &list)
		return sessionsMsg{list: list.Sessions, err: err}
	}
}

func (m *model) openSessionPicker(msg sessionsMsg) {
	if msg.err != nil {
		m.printLines(m.th.fail.Render("✗ session/list: " + rpcMessage(msg.err)))
		return
	}
	if len(msg.list) == 0 {
		m.printLines(m.th.warn.Render("no stored sessions in this directory"))
		return
	}
	ss := append([]acp.SessionInfo(nil), msg.list...)
	sort.SliceStable(ss, func(i, j int) bool { return ss[i].UpdatedAt > ss[j].UpdatedAt })
	if len(ss) > 9 {
		ss = ss[:9]
	}
	p := &picker{title: "Sessions (newest first)"}
	for _, si := range ss {
		label := si.Title
		if label == "" {
			label = si.SessionID
		}
		p.items = append(p.items, pickItem{label: label, value: si.SessionID, note: shortTime(si.UpdatedAt)})
	}
	p.pick = func(m *model, it pickItem) tea.Cmd {
		m.printLines("", m.th.dim.Render("── loading "+it.label+" ──"))
		m.ready, m.replaying = false, true
		return m.openSession(false, it.value)
	}
	m.picker = p
}

func shortTime(rfc string) string {
	if t, err := time.Parse(time.RFC3339Nano, rfc); err == nil {
		return t.Local().Format("2006-01-02 15:04")
	}
	return rfc
}

func (m *model) openModelPicker() {
	o := m.modelOption()
	if o == nil || len(o.Options) == 0 {
		m.printLines(m.th.warn.Render("the agent offers no model choice"))
		return
	}
	p := &picker{title: "Model (" + o.Name + ")"}
	cur := fmt.Sprint(o.CurrentValue)
	for i, v := range o.Options {
		p.items = append(p.items, pickItem{label: v.Name, value: v.Value, note: v.Description})
		if v.Value == cur {
			p.sel = i
		}
	}
	id := o.ID
	p.pick = func(m *model, it pickItem) tea.Cmd {
		m.printLines(m.th.dim.Render("model → ") + it.label)
		return m.setConfig(id, it.value)
	}
	m.picker = p
}

func (m *model) openModePicker() {
	if m.modes == nil || len(m.modes.AvailableModes) == 0 {
		m.printLines(m.th.warn.Render("the agent offers no modes"))
		return
	}
	p := &picker{title: "Mode"}
	for i, md := range m.modes.AvailableModes {
		p.items = append(p.items, pickItem{label: md.Name, value: md.ID, note: md.Description})
		if md.ID == m.modes.CurrentModeID {
			p.sel = i
		}
	}
	p.pick = func(m *model, it pickItem) tea.Cmd {
		m.printLines(m.th.dim.Render("mode → ") + it.label)
		return m.setMode(it.value)
	}
	m.picker = p
}

// cycleMode moves to the next of the session's modes (Shift+Tab).
func (m *model) cycleMode() tea.Cmd {
	if m.modes == nil || len(m.modes.AvailableModes) == 0 || !m.ready {
		return nil
	}
	ms := m.modes.AvailableModes
	i := 0
	for j, md := range ms {
		if md.ID == m.modes.CurrentModeID {
			i = j
		}
	}
	next := ms[(i+1)%len(ms)]
	return m.setMode(next.ID)
}

// helpLines lists the keys as bound (the defaults and [tui.keys]).
func helpLines(th *theme, keys map[string]string) []string {
	bound := map[string][]string{}
	var all []string
	for k := range keys {
		all = append(all, k)
	}
	sort.Strings(all)
	for _, k := range all {
		bound[keys[k]] = append(bound[keys[k]], k)
	}
	out := []string{th.bold.Render("Keys")}
	for _, a := range tuiargs.Actions {
		ks := "(unbound)"
		if len(bound[a.Name]) > 0 {
			ks = strings.Join(bound[a.Name], ", ")
		}
		out = append(out, "  "+th.key.Render(ks)+"  "+a.Does)
	}
	for _, r := range [][2]string{
		{"@", "open the file finder"},
		{"y a n r, 1-9, ↑/↓ Enter", "answer a permission question"},
		{"/model /mode /new /sessions /login /help /quit", "the TUI's commands; the agent's follow /"},
	} {
		out = append(out, "  "+th.key.Render(r[0])+"  "+r[1])
	}
	return out
}
