package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// View draws the live region: lines on their way to the scrollback, the
// running blocks, the plan, a question or picker, the input and the
// status line, cut to the terminal's height from the bottom.
func (m *model) View() tea.View {
	if m.quitting && m.printing == 0 && len(m.printQ) == 0 {
		return tea.NewView("")
	}
	w := m.width
	var top []string
	// Lines on their way to the scrollback are not drawn here: a terminal
	// that shrinks pushes the top of the live region into its scrollback,
	// where they would then be twice.
	for _, bl := range m.live {
		switch b := bl.(type) {
		case *textBlock:
			if m.heldThought(b) {
				if b.lead {
					top = append(top, "")
				}
				top = append(top, m.thoughtSummary(b, true))
				continue
			}
			top = append(top, b.lines...)
			if len(b.tail) > 0 {
				top = append(top, m.tailRows(b)...)
			}
		case *toolCall:
			top = append(top, m.card(b)...)
		}
	}
	top = append(top, m.liveMembers()...)
	if len(m.plan) > 0 {
		top = append(top, renderPlan(m.th, m.plan, w)...)
	}
	bottom := m.bottom(w)
	st := m.st
	st.working = m.running
	bottom = append(bottom, m.anchorLine(m.stLine.render(m.th, st, w-1), w)) // anchor.go
	room := max(m.height-1-len(bottom), 0)
	if len(top) > room {
		top = top[len(top)-room:]
	}
	lines := append(top, bottom...)
	m.viewRows = [2]int{m.viewRows[1], len(lines)}
	m.frames = [2][]string{m.frames[1], lines}
	if m.writes != nil {
		m.frameWrites = [2]int64{m.frameWrites[1], m.writes()}
	}
	return tea.NewView(strings.Join(lines, "\n"))
}

// drawnTail is a text block's unfinished line as last rendered.
type drawnTail struct {
	gen, width int
	th         *theme
	rows       []string
}

// tailRows renders the unfinished line of a text block for the live
// region. It is rendered again only when it changed: a stream updates it
// at most 60 times a second (updateFrame), but keys and prints draw
// frames in between, and a long line costs its whole length to wrap.
func (m *model) tailRows(b *textBlock) []string {
	d := &b.drawn
	if d.rows == nil || d.gen != b.tailGen || d.width != m.width || d.th != m.th {
		md := b.md // a copy: the tail is drawn, not consumed
		*d = drawnTail{gen: b.tailGen, width: m.width, th: m.th, rows: m.renderText(b, &md, string(b.tail))}
	}
	return d.rows
}

// bottom is the part of the live region under the blocks: a question, a
// picker or a list of matches, and the input.
func (m *model) bottom(w int) []string {
	var bottom []string
	switch {
	case m.perm != nil:
		bottom = append(bottom, renderPermission(m.th, m.perm.req, m.permSel, w, m.opts.Cwd)...)
	case m.form != nil:
		bottom = append(bottom, renderForm(m.th, m.form, w)...)
	case m.picker != nil:
		bottom = append(bottom, renderPicker(m.th, m.picker, w)...)
	case m.finder != nil && !m.finder.off && len(m.finder.matches) > 0:
		for i, f := range m.finder.matches {
			mark := "  "
			if i == m.finder.sel {
				mark = m.th.accent.Render("› ")
			}
			bottom = append(bottom, ansi.Truncate(mark+"@"+scrubText(f), w, "…")) // the repository's names
		}
	default:
		if c := m.completions(); len(c) > 0 {
			for i, cm := range c {
				if i == 8 {
					bottom = append(bottom, m.th.dim.Render(fmt.Sprintf("  … %d more", len(c)-8)))
					break
				}
				bottom = append(bottom, ansi.Truncate("  "+m.th.key.Render("/"+cm.name)+" "+m.th.dim.Render(cm.desc), w, "…"))
			}
		}
	}
	if m.gone || m.quitting {
		bottom = append(bottom, "")
	} else {
		placeholder := "Ask corvid… (/help for keys)"
		if !m.ready {
			placeholder = "starting…"
			if m.failed {
				placeholder = "no session (/login logs in, /new tries again, Ctrl+D quits)"
			}
		}
		bottom = append(bottom, m.in.render(m.th, w, m.perm == nil && m.picker == nil && m.form == nil, placeholder)...)
	}
	return bottom
}

// pickerRows is how many items a picker shows at once; a longer list
// scrolls with the selection. The keys 1-9 pick the first nine.
const pickerRows = 9

func renderPicker(th *theme, p *picker, width int) []string {
	out := []string{ansi.Truncate(th.bold.Render(p.title), width, "…")}
	start := 0
	if p.sel >= pickerRows {
		start = p.sel - pickerRows + 1
	}
	end := min(len(p.items), start+pickerRows)
	for i := start; i < end; i++ {
		it := p.items[i]
		mark := "  "
		label := it.label
		if i == p.sel {
			mark = th.accent.Render("› ")
			label = th.bold.Render(label)
		}
		num := " "
		if i < 9 {
			num = fmt.Sprintf("%d", i+1)
		}
		line := mark + th.key.Render(num) + " " + label
		if it.note != "" {
			line += th.dim.Render(" " + it.note)
		}
		out = append(out, ansi.Truncate(line, width, "…"))
	}
	hint := "  ↑/↓ Enter · Esc closes"
	if len(p.items) > pickerRows {
		hint = fmt.Sprintf("  %d of %d · ↑/↓ Enter · Esc closes", p.sel+1, len(p.items))
	}
	return append(out, th.dim.Render(ansi.Truncate(hint, width, "…")))
}
