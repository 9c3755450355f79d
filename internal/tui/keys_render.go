package tui

import tea "charm.land/bubbletea/v2"

// renderKeys are the keys of the rendering features (issue 36: thoughts,
// tool output). They are kept here, in one table, apart from keys.go's
// switch, so a key table or rebinding can take them over in one place.
// docs/tui.md lists them.
var renderKeys = map[string]func(m *model) tea.Cmd{
	"ctrl+t": func(m *model) tea.Cmd { m.toggleThoughts(); return nil }, // expand/collapse thoughts
	"ctrl+o": func(m *model) tea.Cmd { m.showOutput(); return nil },     // the last shell output in full
}

// renderKeyHelp are their lines in /help.
var renderKeyHelp = [][2]string{
	{"Ctrl+T", "expand or collapse thoughts"},
	{"Ctrl+O", "print the last shell call's output in full"},
}

// renderKey runs the rendering key k, and tells whether it was one.
func (m *model) renderKey(k string) (tea.Cmd, bool) {
	f, ok := renderKeys[k]
	if !ok {
		return nil, false
	}
	return f(m), true
}
