package tui

import (
	"encoding/json"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/corvid-agent/corvid/internal/acp"
)

const formSchema = `{"type":"object","required":["db","name","port"],"properties":{
 "db":{"type":"string","title":"Database","description":"Which database?","oneOf":[{"const":"pg","title":"Postgres","description":"relational"},{"const":"sqlite","title":"SQLite"}]},
 "name":{"type":"string","title":"Name"},
 "port":{"type":"integer","title":"Port"},
 "tls":{"type":"boolean","title":"TLS","default":true},
 "ratio":{"type":"number","title":"Ratio"},
 "tags":{"type":"array","title":"Tags","items":{"enum":["web","db","cache"]}}}}`

func press(m *model, keys ...string) {
	for _, k := range keys {
		var msg tea.KeyPressMsg
		switch k {
		case "enter":
			msg = tea.KeyPressMsg{Code: tea.KeyEnter}
		case "tab":
			msg = tea.KeyPressMsg{Code: tea.KeyTab}
		case "down":
			msg = tea.KeyPressMsg{Code: tea.KeyDown}
		case "esc":
			msg = tea.KeyPressMsg{Code: tea.KeyEscape}
		case "space":
			msg = tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
		default:
			for _, r := range k {
				m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
			}
			continue
		}
		m.Update(msg)
	}
}

// A form from the schema, in its order, filled by keys: a choice by
// arrow and Enter, text, an integer (a wrong one is refused), a boolean,
// a multi-choice by number; the answer has the schema's types.
func TestElicitationForm(t *testing.T) {
	m := testModel()
	reply := make(chan acp.CreateElicitationResponse, 1)
	m.Update(elicitMsg{req: &acp.CreateElicitationRequest{SessionID: "s1", Mode: "form", Message: "Set up the service",
		RequestedSchema: json.RawMessage(formSchema)}, reply: reply})
	if m.form == nil || len(m.form.fields) != 6 || m.form.fields[2].title != "Port" {
		t.Fatalf("form fields: %+v", m.form)
	}
	press(m, "down", "enter") // SQLite, next field
	press(m, "svc", "enter")
	press(m, "80x", "tab", "tab", "tab", "tab", "tab", "tab") // round to Port again
	m.submitForm()                                            // not an integer: refused
	if m.form == nil || !strings.Contains(m.form.err, "Port") || m.form.focus != 2 {
		t.Fatalf("a wrong integer was not refused: %+v", m.form)
	}
	m.form.fields[2].text = []rune("8080")
	m.form.focus = 3
	press(m, "n", "tab", "1.5", "tab", "1", "3", "enter")
	select {
	case r := <-reply:
		got, _ := json.Marshal(r)
		want := `{"action":"accept","content":{"db":"sqlite","name":"svc","port":8080,"ratio":1.5,"tags":["web","cache"],"tls":false}}`
		if string(got) != want {
			t.Errorf("answer:\n got %s\nwant %s", got, want)
		}
	default:
		t.Fatal("no answer sent")
	}
	if p := strings.Join(m.printed(), "\n"); !strings.Contains(p, "Database → SQLite") {
		t.Errorf("the answer was not printed: %q", p)
	}
	// Esc dismisses; a cancelled turn cancels an open form.
	for _, c := range []struct{ key, want string }{{"esc", "cancel"}} {
		m.Update(elicitMsg{req: &acp.CreateElicitationRequest{Mode: "form", Message: "q", RequestedSchema: json.RawMessage(formSchema)}, reply: reply})
		press(m, c.key)
		if r := <-reply; r.Action != c.want || m.form != nil {
			t.Errorf("%s answered %q", c.key, r.Action)
		}
	}
	m.running = true
	m.Update(elicitMsg{req: &acp.CreateElicitationRequest{Mode: "form", Message: "q", RequestedSchema: json.RawMessage(formSchema)}, reply: reply})
	m.Update(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	if r := <-reply; r.Action != "cancel" || m.form != nil {
		t.Errorf("Ctrl+C answered %q", r.Action)
	}
}
