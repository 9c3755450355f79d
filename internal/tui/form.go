package tui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/corvid-agent/corvid/internal/acp"
)

// Elicitation (elicitation/create, mode form) as a small form: one field
// per property of the request's schema, in the schema's order. A string
// is a line of text, a number or integer one checked as such, a boolean
// a yes/no switch, a string with enum or oneOf one choice, an array of
// such items several. corvid's ask_user and exit_plan questions come this
// way (docs/elicitation.md); so do an MCP server's.

// fieldKind is what a field holds.
type fieldKind int

const (
	fieldText fieldKind = iota
	fieldNumber
	fieldInteger
	fieldBool
	fieldChoice
	fieldMulti
)

type formChoice struct{ value, title, desc string }

type formField struct {
	name, title, desc string
	kind              fieldKind
	required          bool
	choices           []formChoice
	text              []rune // text, number and integer
	on                bool   // boolean
	sel               int    // the choice under the cursor
	picked            []bool // multi: the choices picked
	chosen            bool   // choice: one was picked (Space, a number, Enter)
}

// form is an open elicitation.
type form struct {
	req    *acp.CreateElicitationRequest
	reply  chan<- acp.CreateElicitationResponse
	fields []*formField
	focus  int
	err    string // why the last Enter did not send
}

// parseForm reads the request's schema into fields, or says why it
// cannot be shown.
func parseForm(req *acp.CreateElicitationRequest) ([]*formField, error) {
	var schema struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(req.RequestedSchema, &schema); err != nil {
		return nil, fmt.Errorf("the schema is not an object: %v", err)
	}
	names, props, err := orderedObject(schema.Properties)
	if err != nil {
		return nil, err
	}
	var fields []*formField
	for i, name := range names {
		var p struct {
			Type        string `json:"type"`
			Title       string `json:"title"`
			Description string `json:"description"`
			Enum        []any  `json:"enum"`
			EnumNames   []string
			OneOf       []struct {
				Const any    `json:"const"`
				Title string `json:"title"`
				Desc  string `json:"description"`
			} `json:"oneOf"`
			Default any `json:"default"`
			Items   *struct {
				Enum  []any `json:"enum"`
				AnyOf []struct {
					Const any    `json:"const"`
					Title string `json:"title"`
					Desc  string `json:"description"`
				} `json:"anyOf"`
			} `json:"items"`
		}
		if err := json.Unmarshal(props[i], &p); err != nil {
			return nil, fmt.Errorf("property %s: %v", name, err)
		}
		f := &formField{name: name, title: p.Title, desc: p.Description}
		if f.title == "" {
			f.title = name
		}
		for _, r := range schema.Required {
			f.required = f.required || r == name
		}
		addChoices := func(enum []any, one []struct {
			Const any    `json:"const"`
			Title string `json:"title"`
			Desc  string `json:"description"`
		}) {
			for _, e := range enum {
				v := fmt.Sprint(e)
				f.choices = append(f.choices, formChoice{value: v, title: v})
			}
			for _, o := range one {
				v := fmt.Sprint(o.Const)
				t := o.Title
				if t == "" {
					t = v
				}
				f.choices = append(f.choices, formChoice{value: v, title: t, desc: o.Desc})
			}
		}
		switch p.Type {
		case "string", "":
			addChoices(p.Enum, p.OneOf)
			if len(f.choices) > 0 {
				f.kind = fieldChoice
			}
			if d, ok := p.Default.(string); ok {
				f.text = []rune(d)
				for j, c := range f.choices {
					if c.value == d {
						f.sel, f.chosen = j, true
					}
				}
			}
		case "number":
			f.kind = fieldNumber
		case "integer":
			f.kind = fieldInteger
		case "boolean":
			f.kind = fieldBool
			f.on, _ = p.Default.(bool)
		case "array":
			if p.Items == nil {
				return nil, fmt.Errorf("property %s: an array without items", name)
			}
			f.kind = fieldMulti
			addChoices(p.Items.Enum, p.Items.AnyOf)
			f.picked = make([]bool, len(f.choices))
		default:
			return nil, fmt.Errorf("property %s: type %q", name, p.Type)
		}
		if (f.kind == fieldNumber || f.kind == fieldInteger) && p.Default != nil {
			f.text = []rune(fmt.Sprint(p.Default))
		}
		fields = append(fields, f)
	}
	return fields, nil
}

// orderedObject splits a JSON object into its keys and values, in order.
func orderedObject(raw json.RawMessage) ([]string, []json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, nil, fmt.Errorf("properties: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, nil, err
	}
	var names []string
	var vals []json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		names = append(names, tok.(string))
		vals = append(vals, v)
	}
	return names, vals, nil
}

// content is the form's answer, or the reason it cannot be sent and the
// field at fault.
func (f *form) content() (map[string]json.RawMessage, int, string) {
	out := map[string]json.RawMessage{}
	for i, fl := range f.fields {
		var v any
		text := strings.TrimSpace(string(fl.text))
		switch fl.kind {
		case fieldText:
			if text == "" && !fl.required {
				continue
			}
			v = string(fl.text)
		case fieldNumber, fieldInteger:
			if text == "" && !fl.required {
				continue
			}
			if fl.kind == fieldInteger {
				n, err := strconv.ParseInt(text, 10, 64)
				if err != nil {
					return nil, i, fl.title + ": a whole number, please"
				}
				v = n
			} else {
				n, err := strconv.ParseFloat(text, 64)
				if err != nil {
					return nil, i, fl.title + ": a number, please"
				}
				v = n
			}
		case fieldBool:
			v = fl.on
		case fieldChoice:
			if !fl.chosen {
				if fl.required {
					return nil, i, fl.title + ": pick one"
				}
				continue
			}
			v = fl.choices[fl.sel].value
		case fieldMulti:
			vals := []string{}
			for j, p := range fl.picked {
				if p {
					vals = append(vals, fl.choices[j].value)
				}
			}
			v = vals
		}
		if fl.kind == fieldText && fl.required && text == "" {
			return nil, i, fl.title + ": required"
		}
		b, _ := json.Marshal(v)
		out[fl.name] = b
	}
	return out, -1, ""
}

// summary is the answer as one line for the scrollback.
func (f *form) summary() string {
	var parts []string
	for _, fl := range f.fields {
		var v string
		switch fl.kind {
		case fieldBool:
			v = map[bool]string{true: "yes", false: "no"}[fl.on]
		case fieldChoice:
			if fl.chosen {
				v = fl.choices[fl.sel].title
			}
		case fieldMulti:
			var vs []string
			for j, p := range fl.picked {
				if p {
					vs = append(vs, fl.choices[j].title)
				}
			}
			v = strings.Join(vs, ", ")
		default:
			v = string(fl.text)
		}
		parts = append(parts, fl.title+" → "+oneLine(v))
	}
	return strings.Join(parts, "; ")
}

// renderForm draws the form: the message, each field with the focused
// one marked, and the keys.
func renderForm(th *theme, f *form, width int) []string {
	var out []string
	msg := strings.Split(strings.TrimSpace(f.req.Message), "\n")
	for i, l := range msg {
		lead := "  "
		if i == 0 {
			lead = th.warn.Render("?") + " "
		}
		out = append(out, wrapStyled(th.bold.Render(l), width, lead, "  ")...)
	}
	for i, fl := range f.fields {
		focused := i == f.focus
		mark := "  "
		if focused {
			mark = th.accent.Render("› ")
		}
		title := th.bold.Render(fl.title)
		if fl.required {
			title += th.dim.Render(" *")
		}
		if fl.desc != "" && fl.desc != f.req.Message {
			title += th.dim.Render(" " + fl.desc)
		}
		out = append(out, ansi.Truncate(mark+title, width, "…"))
		switch fl.kind {
		case fieldBool:
			yes, no := "○ yes", "● no"
			if fl.on {
				yes, no = "● yes", "○ no"
			}
			out = append(out, "    "+yes+"  "+no)
		case fieldChoice, fieldMulti:
			for j, c := range fl.choices {
				box := "○"
				switch {
				case fl.kind == fieldMulti && fl.picked[j]:
					box = "☑"
				case fl.kind == fieldMulti:
					box = "☐"
				case fl.chosen && fl.sel == j:
					box = "●"
				}
				cur := "  "
				name := c.title
				if focused && fl.sel == j {
					cur = th.accent.Render("› ")
					name = th.bold.Render(name)
				}
				line := "  " + cur + th.key.Render(fmt.Sprintf("%d", j+1)) + " " + box + " " + name
				if c.desc != "" {
					line += th.dim.Render(" " + c.desc)
				}
				out = append(out, ansi.Truncate(line, width, "…"))
			}
		default:
			text := string(fl.text)
			if focused {
				text += th.reverse.Render(" ")
			} else if text == "" {
				text = th.dim.Render("…")
			}
			out = append(out, wrapStyled(text, width, "    ", "    ")...)
		}
	}
	if f.err != "" {
		out = append(out, th.fail.Render(ansi.Truncate("  "+f.err, width, "…")))
	}
	keys := "  ↑/↓ Space 1-9 pick · Enter sends · Esc dismisses"
	if len(f.fields) > 1 {
		keys = "  Tab, Enter next field (Enter on the last sends) · ↑/↓ Space 1-9 pick · Esc dismisses"
	}
	out = append(out, th.dim.Render(ansi.Truncate(keys, width, "…")))
	return out
}
