package tui

import (
	"context"
	"encoding/json"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/corvid-agent/corvid/internal/acp"
)

// elicitMsg is an elicitation/create waiting for the user's answer.
type elicitMsg struct {
	req   *acp.CreateElicitationRequest
	reply chan<- acp.CreateElicitationResponse
}

// elicitDoneMsg withdraws a form the agent stopped waiting for.
type elicitDoneMsg struct{ req *acp.CreateElicitationRequest }

// elicit serves elicitation/create: a form waits for the user; a mode the
// TUI did not advertise (url) is declined.
func (a *agent) elicit(ctx context.Context, params json.RawMessage) (any, error) {
	var req acp.CreateElicitationRequest
	if err := json.Unmarshal(params, &req); err != nil {
		return nil, acp.InvalidParams("invalid elicitation/create params", err.Error())
	}
	if req.Mode != "form" {
		return acp.CreateElicitationResponse{Action: "decline"}, nil
	}
	reply := make(chan acp.CreateElicitationResponse, 1)
	a.send(elicitMsg{req: &req, reply: reply})
	return acp.Deferred(func() (any, error) {
		select {
		case r := <-reply:
			return r, nil
		case <-ctx.Done():
			a.send(elicitDoneMsg{req: &req})
			return acp.CreateElicitationResponse{Action: "cancel"}, nil
		}
	}), nil
}

// openForm shows an elicitation, or queues it behind the open one.
func (m *model) openForm(msg elicitMsg) {
	fields, err := parseForm(msg.req)
	if err != nil {
		msg.reply <- acp.CreateElicitationResponse{Action: "decline"}
		m.printLines(m.th.fail.Render("✗ a question the TUI cannot show (" + err.Error() + "): declined"))
		return
	}
	f := &form{req: msg.req, reply: msg.reply, fields: fields}
	if m.form == nil {
		m.form = f
	} else {
		m.formQ = append(m.formQ, f)
	}
}

// closeForm answers the open form and opens the next.
func (m *model) closeForm(resp acp.CreateElicitationResponse) {
	f := m.form
	f.reply <- resp
	first := strings.SplitN(strings.TrimSpace(f.req.Message), "\n", 2)[0]
	verdict := m.th.fail.Render("dismissed")
	if resp.Action == "accept" {
		verdict = m.th.ok.Render(f.summary())
	}
	m.printLines(m.th.dim.Render("? ") + first + m.th.dim.Render(" → ") + verdict)
	m.nextForm()
}

func (m *model) nextForm() {
	m.form = nil
	if len(m.formQ) > 0 {
		m.form, m.formQ = m.formQ[0], m.formQ[1:]
	}
}

// cancelForms answers every form cancel (the turn is cancelled).
func (m *model) cancelForms() {
	if m.form != nil {
		m.form.reply <- acp.CreateElicitationResponse{Action: "cancel"}
	}
	for _, f := range m.formQ {
		f.reply <- acp.CreateElicitationResponse{Action: "cancel"}
	}
	m.form, m.formQ = nil, nil
}

// withdrawForm drops a form the agent no longer waits for.
func (m *model) withdrawForm(req *acp.CreateElicitationRequest) {
	if m.form != nil && m.form.req == req {
		m.nextForm()
		return
	}
	for i, f := range m.formQ {
		if f.req == req {
			m.formQ = append(m.formQ[:i], m.formQ[i+1:]...)
			return
		}
	}
}

// formKey drives the open form.
func (m *model) formKey(k tea.KeyPressMsg) tea.Cmd {
	f := m.form
	s := k.String()
	if len(f.fields) == 0 { // nothing to fill in: send or dismiss
		switch s {
		case "enter":
			m.submitForm()
		case "esc":
			m.closeForm(acp.CreateElicitationResponse{Action: "cancel"})
		case "ctrl+c":
			return m.cancel()
		}
		return nil
	}
	if cmd, ok := m.formMoveKey(s); ok {
		return cmd
	}
	fl := f.fields[f.focus]
	switch fl.kind {
	case fieldBool:
		switch s {
		case "space", "left", "right":
			fl.on = !fl.on
		case "y":
			fl.on = true
		case "n":
			fl.on = false
		}
	case fieldChoice, fieldMulti:
		choiceKey(fl, s)
	default:
		if k.Text != "" {
			fl.text = append(fl.text, []rune(k.Text)...)
		}
	}
	f.err = ""
	return nil
}

// formMoveKey handles the keys that move between fields and choices,
// edit a text, send or dismiss the form; it tells whether s was one.
func (m *model) formMoveKey(s string) (tea.Cmd, bool) {
	f := m.form
	fl := f.fields[f.focus]
	textual := fl.kind == fieldText || fl.kind == fieldNumber || fl.kind == fieldInteger
	switch s {
	case "ctrl+c":
		return m.cancel(), true
	case "esc":
		m.closeForm(acp.CreateElicitationResponse{Action: "cancel"})
	case "tab":
		f.focus = (f.focus + 1) % len(f.fields)
	case "shift+tab":
		f.focus = (f.focus + len(f.fields) - 1) % len(f.fields)
	case "enter":
		if fl.kind == fieldChoice && len(fl.choices) > 0 {
			fl.chosen = true
		}
		if f.focus < len(f.fields)-1 {
			f.focus++
		} else {
			m.submitForm()
		}
	case "up", "down":
		d := 1
		if s == "up" {
			d = -1
		}
		if (fl.kind == fieldChoice || fl.kind == fieldMulti) && len(fl.choices) > 0 {
			fl.sel = (fl.sel + d + len(fl.choices)) % len(fl.choices)
		} else {
			f.focus = (f.focus + d + len(f.fields)) % len(f.fields)
		}
	case "backspace":
		if textual && len(fl.text) > 0 {
			fl.text = fl.text[:len(fl.text)-1]
		}
	case "ctrl+u":
		if textual {
			fl.text = nil
		}
	default:
		return nil, false
	}
	return nil, true
}

// choiceKey picks in a choice or multiple-choice field: Space the
// selected one, 1-9 by number.
func choiceKey(fl *formField, s string) {
	if s == "space" && len(fl.choices) > 0 {
		if fl.kind == fieldMulti {
			fl.picked[fl.sel] = !fl.picked[fl.sel]
		} else {
			fl.chosen = true
		}
	}
	if len(s) == 1 && s[0] >= '1' && s[0] <= '9' && int(s[0]-'1') < len(fl.choices) {
		fl.sel = int(s[0] - '1')
		if fl.kind == fieldMulti {
			fl.picked[fl.sel] = !fl.picked[fl.sel]
		} else {
			fl.chosen = true
		}
	}
}

// submitForm sends the form, or marks the field that keeps it from going.
func (m *model) submitForm() {
	f := m.form
	content, bad, why := f.content()
	if bad >= 0 {
		f.focus, f.err = bad, why
		return
	}
	m.closeForm(acp.CreateElicitationResponse{Action: "accept", Content: content})
}

// paste puts a paste into the focused text field (one line).
func (f *form) paste(s string) {
	if len(f.fields) == 0 {
		return
	}
	fl := f.fields[f.focus]
	if fl.kind == fieldText || fl.kind == fieldNumber || fl.kind == fieldInteger {
		fl.text = append(fl.text, []rune(strings.ReplaceAll(strings.TrimRight(s, "\r\n"), "\n", " "))...)
	}
}
