package tui

import tea "charm.land/bubbletea/v2"

// renderKeys are the keys of the rendering features (issue 36: thoughts,
// tool output). They are kept here, in one table, apart from keys.go's
// switch, so a key table or rebinding can take them over in one place.
// docs/tui.md lists them.
var renderKeys = map[string]func(m *model) tea.Cmd{
	"ctrl+t": func(m *model) tea.Cmd { m.toggleThoughts(); return nil }, // expand/collapse thoughts
}

// renderKeyHelp are their lines in /help.
var renderKeyHelp = [][2]string{
	{"Ctrl+T", "expand or collapse thoughts"},
}

// renderKey runs the rendering key k, and tells whether it was one.
func (m *model) renderKey(k string) (tea.Cmd, bool) {
	f, ok := renderKeys[k]
	if !ok {
		return nil, false
	}
	return f(m), true
}
