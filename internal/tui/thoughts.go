package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Thoughts (agent_thought_chunk) are drawn dimmed. Collapsed, the default,
// a thought streams as one live line and goes to the scrollback as a
// one-line summary; expanded (Ctrl+T), its lines stream in full. Ctrl+T
// with no thought streaming prints the last collapsed thought in full.

// thoughtState is the model's part for thoughts.
type thoughtState struct {
	open bool     // expanded
	last []string // the last collapsed thought's lines, for Ctrl+T
}

// heldThought tells whether a block's lines wait for its summary.
func (m *model) heldThought(b *textBlock) bool { return b.kind == "thought" && !m.thoughts.open }

// thoughtSummary is the line a collapsed thought leaves in the scrollback
// (or, live, draws while it streams).
func (m *model) thoughtSummary(b *textBlock, live bool) string {
	first, n := "", b.srcLines
	for _, l := range strings.Split(b.first, "\n") {
		if strings.TrimSpace(l) != "" {
			first = strings.TrimSpace(l)
			break
		}
	}
	if live && len(b.tail) > 0 {
		n++
	}
	if live {
		first = strings.TrimSpace(b.lastSrc)
		if t := strings.TrimSpace(string(b.tail)); t != "" {
			first = t
		}
	}
	head := "∴ Thought"
	if live {
		head = "∴ Thinking"
	}
	more := ""
	key := m.boundKey("thoughts")
	switch {
	case n > 1 && (m.width < 60 || key == ""):
		more = fmt.Sprintf(" (%d lines)", n)
	case n > 1:
		more = fmt.Sprintf(" (%d lines, %s shows)", n, key)
	}
	w := max(m.width-ansi.StringWidth(head+": "+more)-2, 4)
	text := head
	if first != "" {
		text += ": " + ansi.Truncate(first, w, "…")
	}
	return m.th.thought.Render(text) + m.th.dim.Render(more)
}

// toggleThoughts expands or collapses thoughts (Ctrl+T).
func (m *model) toggleThoughts() {
	m.thoughts.open = !m.thoughts.open
	liveThought := false
	for _, bl := range m.live {
		if t, ok := bl.(*textBlock); ok && t.kind == "thought" && !t.closed {
			liveThought = true
		}
	}
	if m.thoughts.open {
		if !liveThought && len(m.thoughts.last) > 0 {
			m.printLines(m.th.dim.Render("∴ the last thought:"))
			m.printLines(m.thoughts.last...)
			m.thoughts.last = nil
		}
	}
	m.drain()
}

// collapseThought prints a finished collapsed thought as its summary and
// keeps its lines for Ctrl+T.
func (m *model) collapseThought(b *textBlock) {
	lines := b.lines
	if b.lead && len(lines) > 0 && lines[0] == "" {
		m.printQ = append(m.printQ, "")
		lines = lines[1:]
	}
	b.lines = nil
	if b.srcLines == 0 && len(lines) == 0 {
		return
	}
	m.printQ = append(m.printQ, m.thoughtSummary(b, false))
	m.thoughts.last = lines
}
