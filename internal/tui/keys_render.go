package tui

import (
	"sort"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// renderKeys are the actions of the rendering features (issue 36:
// thoughts, tool output), by name: tuiargs.Actions lists them with their
// default keys (Ctrl+T, Ctrl+O), so [tui.keys] rebinds them like the
// others and /help shows them as bound.
var renderKeys = map[string]func(m *model) tea.Cmd{
	"thoughts": func(m *model) tea.Cmd { m.toggleThoughts(); return nil }, // expand/collapse thoughts
	"output":   func(m *model) tea.Cmd { m.showOutput(); return nil },     // the last shell output in full
}

// renderKey runs the rendering action act, and tells whether it was one.
func (m *model) renderKey(act string) (tea.Cmd, bool) {
	f, ok := renderKeys[act]
	if !ok {
		return nil, false
	}
	return f(m), true
}

// boundKey names a key bound to action as the screen writes keys
// ("Ctrl+T"), or "" when [tui.keys] unbound it.
func (m *model) boundKey(action string) string {
	var ks []string
	for k, a := range m.keys {
		if a == action {
			ks = append(ks, k)
		}
	}
	if len(ks) == 0 {
		return ""
	}
	sort.Strings(ks)
	parts := strings.Split(ks[0], "+")
	for i, p := range parts {
		parts[i] = strings.ToUpper(p[:1]) + p[1:]
	}
	return strings.Join(parts, "+")
}
