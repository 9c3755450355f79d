package tui

import (
	"strings"
	"unicode"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// markdown renders Markdown one source line at a time, so an answer can be
// shown as it streams: a finished line is rendered once and goes to the
// scrollback; the state that spans lines (inside a fenced code block) is
// kept here. It knows headings, emphasis, inline code, links, lists,
// quotes, rules and fenced code blocks; anything else is shown as text.
type markdown struct {
	th     *theme
	inCode bool
	fence  string
	hl     highlighter // the open code block's (a value: the live tail renders a copy)
}

// line renders one complete source line (without its newline) wrapped to
// width, as zero or more terminal lines.
func (m *markdown) line(src string, width int) []string { return m.appendLine(nil, src, width) }

// appendLine appends line's lines to dst: a long answer's lines go
// straight into its block's, without a slice of their own each (issue 36).
func (m *markdown) appendLine(dst []string, src string, width int) []string {
	th := m.th
	width = max(width, 10)
	trimmed := strings.TrimSpace(src)
	if f, lang, ok := fenceLine(trimmed); ok && (!m.inCode || (f[0] == m.fence[0] && len(f) >= len(m.fence) && lang == "")) {
		if m.inCode {
			m.inCode = false
			return append(dst, th.dim.Render("  "+strings.Repeat("─", min(width-2, 20))))
		}
		m.inCode, m.fence = true, f
		m.hl = highlighter{lang: langFor(lang)}
		label := "──"
		if lang != "" {
			label += " " + lang + " "
		}
		return append(dst, th.dim.Render("  "+label+strings.Repeat("─", max(0, min(width-2, 20)-ansi.StringWidth(label)))))
	}
	if m.inCode {
		src = strings.ReplaceAll(src, "\t", "    ")
		var wrapped string
		if m.hl.lang != nil {
			// lipgloss.Wrap carries a token's style over a break.
			wrapped = lipgloss.Wrap(m.hl.line(th, src), width-2, "")
		} else {
			wrapped = ansi.Hardwrap(src, width-2, true)
		}
		for _, l := range strings.Split(wrapped, "\n") {
			if m.hl.lang == nil {
				l = th.code.Render(l)
			}
			dst = append(dst, "  "+l)
		}
		return dst
	}
	switch {
	case trimmed == "":
		return append(dst, "")
	case isRule(trimmed):
		return append(dst, th.dim.Render(strings.Repeat("─", min(width, 40))))
	case strings.HasPrefix(trimmed, "#"):
		level := len(trimmed) - len(strings.TrimLeft(trimmed, "#"))
		if level <= 6 && (len(trimmed) == level || trimmed[level] == ' ') {
			text := strings.TrimSpace(trimmed[level:])
			return append(dst, wrapStyled(m.inline(text, th.heading), width, "", "")...)
		}
	case strings.HasPrefix(trimmed, ">"):
		text := strings.TrimSpace(strings.TrimPrefix(trimmed, ">"))
		bar := th.dim.Render("│ ")
		return append(dst, wrapStyled(th.italic.Render(m.inline(text, lipgloss.NewStyle())), width, bar, bar)...)
	}
	indent := len(src) - len(strings.TrimLeftFunc(src, unicode.IsSpace))
	pad := strings.Repeat(" ", min(indent, 8))
	if marker, rest, ok := listItem(trimmed); ok {
		bullet := pad + th.accent.Render(marker) + " "
		hang := pad + strings.Repeat(" ", ansi.StringWidth(marker)+1)
		return append(dst, wrapStyled(m.inline(rest, lipgloss.NewStyle()), width, bullet, hang)...)
	}
	if lines, ok := appendPlain(dst, trimmed, width, pad); ok {
		return lines
	}
	return append(dst, wrapStyled(m.inline(trimmed, lipgloss.NewStyle()), width, pad, pad)...)
}

// notPlain marks the bytes a plain line has none of (a tab is turned into
// spaces): controls, inline markup, and anything outside ASCII.
var notPlain = func() (t [256]bool) {
	for c := range t {
		t[c] = c < ' ' || c > '~' || strings.IndexByte("\\`*_[", byte(c)) >= 0
	}
	return t
}()

// appendPlain appends the lines of a paragraph line without inline
// markup, printable ASCII (tabs allowed) throughout, to dst, as
// wrapStyled(m.inline(s, no style)) renders them, only faster: the inline
// pass would change nothing but the tabs (the empty style turns each into
// 4 spaces), the text is as wide as it is long, and one that fits is not
// wrapped. Most lines of a long answer take this way. ok is false for any
// other line, and dst is then as it was.
func appendPlain(dst []string, s string, width int, pad string) (lines []string, ok bool) {
	tabs := false
	for i := 0; i < len(s); i++ {
		if c := s[i]; notPlain[c] {
			if c != '\t' {
				return dst, false
			}
			tabs = true
		}
	}
	if tabs {
		s = strings.ReplaceAll(s, "\t", "    ")
	}
	limit := max(width-len(pad), 8)
	if len(s) <= limit {
		return append(dst, pad+s), true
	}
	// Too long: word-wrapped as wrapStyled does; with no escapes in s,
	// lipgloss.Wrap is ansi.Wrap.
	for l := range strings.SplitSeq(ansi.Wrap(s, limit, " -/"), "\n") {
		dst = append(dst, pad+l)
	}
	return dst, true
}

// flush ends the rendering of one message: an unclosed code block ends.
func (m *markdown) reset() { m.inCode, m.fence, m.hl = false, "", highlighter{} }

func fenceLine(s string) (fence, lang string, ok bool) {
	for _, f := range []string{"```", "~~~"} {
		if strings.HasPrefix(s, f) {
			n := len(s) - len(strings.TrimLeft(s, f[:1]))
			return s[:n], strings.TrimSpace(s[n:]), true
		}
	}
	return "", "", false
}

func isRule(s string) bool {
	if len(s) < 3 {
		return false
	}
	c := s[0]
	if c != '-' && c != '*' && c != '_' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] != c && s[i] != ' ' {
			return false
		}
	}
	return true
}

// listItem recognises "- x", "* x", "+ x", "1. x", "1) x" and task items.
func listItem(s string) (marker, rest string, ok bool) {
	if len(s) >= 2 && (s[0] == '-' || s[0] == '*' || s[0] == '+') && s[1] == ' ' {
		rest = strings.TrimSpace(s[2:])
		switch {
		case strings.HasPrefix(rest, "[ ] "):
			return "☐", rest[4:], true
		case strings.HasPrefix(rest, "[x] "), strings.HasPrefix(rest, "[X] "):
			return "☑", rest[4:], true
		}
		return "•", rest, true
	}
	i := 0
	for i < len(s) && i < 4 && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i > 0 && i+1 < len(s) && (s[i] == '.' || s[i] == ')') && s[i+1] == ' ' {
		return s[:i+1], strings.TrimSpace(s[i+2:]), true
	}
	return "", "", false
}

// inline renders emphasis, strong, inline code and links in s, with base
// applied to the plain runs.
func (m *markdown) inline(s string, base lipgloss.Style) string {
	th := m.th
	var b strings.Builder
	var run strings.Builder
	bold, em := false, false
	flushRun := func() {
		if run.Len() == 0 {
			return
		}
		st := base
		if bold {
			st = st.Bold(true)
		}
		if em {
			st = st.Italic(true)
		}
		b.WriteString(st.Render(run.String()))
		run.Reset()
	}
	for i := 0; i < len(s); {
		switch {
		case s[i] == '\\' && i+1 < len(s) && strings.ContainsRune("\\`*_[]()#+-.!>", rune(s[i+1])):
			run.WriteByte(s[i+1])
			i += 2
		case s[i] == '`':
			n := len(s[i:]) - len(strings.TrimLeft(s[i:], "`"))
			tick := s[i : i+n]
			if end := strings.Index(s[i+n:], tick); end >= 0 {
				flushRun()
				b.WriteString(th.code.Render(strings.TrimSpace(s[i+n : i+n+end])))
				i += n + end + n
				continue
			}
			run.WriteString(tick)
			i += n
		case strings.HasPrefix(s[i:], "**") || strings.HasPrefix(s[i:], "__"):
			flushRun()
			bold = !bold
			i += 2
		case (s[i] == '*' || s[i] == '_') && emphasisEdge(s, i, em):
			flushRun()
			em = !em
			i++
		case s[i] == '[':
			if close := strings.Index(s[i:], "]("); close > 0 {
				if end := strings.IndexByte(s[i+close:], ')'); end > 0 {
					text := s[i+1 : i+close]
					url := s[i+close+2 : i+close+end]
					flushRun()
					b.WriteString(th.info.Render(text))
					if url != text {
						b.WriteString(th.dim.Render(" (" + url + ")"))
					}
					i += close + end + 1
					continue
				}
			}
			run.WriteByte(s[i])
			i++
		default:
			run.WriteByte(s[i])
			i++
		}
	}
	flushRun()
	return b.String()
}

// emphasisEdge tells whether the * or _ at i opens (or, when open, closes)
// emphasis rather than being a literal, as in 2*3 or snake_case.
func emphasisEdge(s string, i int, open bool) bool {
	before := i == 0 || !isWordByte(s[i-1])
	after := i+1 < len(s) && s[i+1] != ' '
	if open {
		return i > 0 && s[i-1] != ' ' && (i+1 == len(s) || !isWordByte(s[i+1]))
	}
	return before && after && strings.IndexByte(s[i+1:], s[i]) > 0
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// wrapStyled word-wraps a styled string to width, the first line after
// first and the others after hang.
func wrapStyled(s string, width int, first, hang string) []string {
	w := width - max(ansi.StringWidth(first), ansi.StringWidth(hang))
	lines := strings.Split(lipgloss.Wrap(s, max(w, 8), " -/"), "\n")
	for i := range lines {
		if i == 0 {
			lines[i] = first + lines[i]
		} else {
			lines[i] = hang + lines[i]
		}
	}
	return lines
}
