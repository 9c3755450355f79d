package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// pasteFoldLines is the size from which a paste shows as a placeholder.
const pasteFoldLines = 10

// input is the prompt editor: a rune buffer with a cursor, history, and
// folded pastes.
type input struct {
	buf    []rune
	cur    int
	hist   []string
	hpos   int // == len(hist) when not browsing
	draft  string
	pastes []paste
	// images are the clipboard's images attached (imageinput.go): image
	// N shows as its placeholder where the rune imageMark+N is in buf.
	images []clipImage
	// idle is the empty input as last drawn, and for what (render).
	idle idleInput
}

// idleInput is an empty input's drawing for a theme, width, focus and
// placeholder.
type idleInput struct {
	th          *theme
	width       int
	focused     bool
	placeholder string
	lines       []string
}

// paste is a long paste shown as its placeholder and sent whole.
type paste struct{ placeholder, text string }

func (in *input) empty() bool  { return len(in.buf) == 0 }
func (in *input) text() string { return string(in.buf) }

// insert types s at the cursor. The runes that stand for attached
// images are taken out of it: only Ctrl+V puts them in (putRunes).
func (in *input) insert(s string) { in.putRunes([]rune(dropImageMarks(s))) }

func (in *input) putRunes(r []rune) {
	in.buf = append(in.buf[:in.cur], append(r, in.buf[in.cur:]...)...)
	in.cur += len(r)
}

// pasteText inserts a bracketed paste: short ones as text, long ones as a
// placeholder that value() expands.
func (in *input) pasteText(s string) {
	s = dropImageMarks(strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n"))
	n := strings.Count(s, "\n") + 1
	if n < pasteFoldLines {
		in.insert(s)
		return
	}
	ph := fmt.Sprintf("[pasted %d lines]", n)
	in.pastes = append(in.pastes, paste{ph, s})
	in.insert(ph)
}

// value is what is sent: the text with every placeholder still in it
// replaced by its paste, and an attached image's by [image N].
func (in *input) value() string {
	s := in.plain()
	for _, p := range in.pastes {
		s = strings.Replace(s, p.placeholder, p.text, 1)
	}
	return s
}

func (in *input) reset() {
	in.buf, in.cur, in.pastes, in.images, in.hpos = nil, 0, nil, nil, len(in.hist)
}

// take returns the value and clears the input, recording its text in
// history (an image's placeholder as its [image N]: history keeps no
// images).
func (in *input) take() string {
	v := in.value()
	if t := in.plain(); strings.TrimSpace(t) != "" && (len(in.hist) == 0 || in.hist[len(in.hist)-1] != t) {
		in.hist = append(in.hist, t)
	}
	in.reset()
	return v
}

func (in *input) set(s string) {
	in.buf = []rune(s)
	in.cur = len(in.buf)
}

func (in *input) backspace() {
	if in.cur > 0 {
		in.buf = append(in.buf[:in.cur-1], in.buf[in.cur:]...)
		in.cur--
	}
}

func (in *input) del() {
	if in.cur < len(in.buf) {
		in.buf = append(in.buf[:in.cur], in.buf[in.cur+1:]...)
	}
}

func (in *input) left() {
	if in.cur > 0 {
		in.cur--
	}
}

func (in *input) right() {
	if in.cur < len(in.buf) {
		in.cur++
	}
}

func (in *input) home() {
	for in.cur > 0 && in.buf[in.cur-1] != '\n' {
		in.cur--
	}
}

func (in *input) end() {
	for in.cur < len(in.buf) && in.buf[in.cur] != '\n' {
		in.cur++
	}
}

func (in *input) killLine() { // ctrl+u: delete to the start of the line
	s := in.cur
	in.home()
	in.buf = append(in.buf[:in.cur], in.buf[s:]...)
}

func (in *input) deleteWord() { // ctrl+w
	s := in.cur
	for in.cur > 0 && in.buf[in.cur-1] == ' ' {
		in.cur--
	}
	for in.cur > 0 && in.buf[in.cur-1] != ' ' && in.buf[in.cur-1] != '\n' {
		in.cur--
	}
	in.buf = append(in.buf[:in.cur], in.buf[s:]...)
}

// up and down browse history; they report false when the input has more
// than one line, where they move the cursor instead.
func (in *input) up() {
	if strings.ContainsRune(in.text(), '\n') {
		in.lineMove(-1)
		return
	}
	if in.hpos == 0 {
		return
	}
	if in.hpos == len(in.hist) {
		in.draft = in.text()
	}
	in.hpos--
	in.set(in.hist[in.hpos])
}

func (in *input) down() {
	if strings.ContainsRune(in.text(), '\n') && in.hpos == len(in.hist) {
		in.lineMove(1)
		return
	}
	if in.hpos >= len(in.hist) {
		return
	}
	in.hpos++
	if in.hpos == len(in.hist) {
		in.set(in.draft)
		return
	}
	in.set(in.hist[in.hpos])
}

func (in *input) lineMove(d int) {
	col := 0
	for i := in.cur; i > 0 && in.buf[i-1] != '\n'; i-- {
		col++
	}
	if d < 0 {
		in.home()
		if in.cur == 0 {
			return
		}
		in.cur--
		in.home()
	} else {
		in.end()
		if in.cur == len(in.buf) {
			return
		}
		in.cur++
	}
	for ; col > 0 && in.cur < len(in.buf) && in.buf[in.cur] != '\n'; col-- {
		in.cur++
	}
}

// render draws the input after the prompt mark, wrapped to width, with the
// cursor as a reversed cell when focused.
//
// An empty input, as it is while an answer streams, is drawn again only
// when its looks change: lipgloss's rendering of it, at every frame, was
// most of View's CPU (issue 36). The lines returned are not to be changed.
func (in *input) render(th *theme, width int, focused bool, placeholder string) []string {
	if len(in.buf) == 0 {
		if k := in.idle; k.lines != nil && k.th == th && k.width == width && k.focused == focused && k.placeholder == placeholder {
			return k.lines
		}
		cur := ""
		if focused {
			cur = th.reverse.Render(" ")
		}
		line := th.accent.Render("› ") + cur + th.dim.Render(ansi.Truncate(placeholder, max(width-4, 0), "…"))
		in.idle = idleInput{th: th, width: width, focused: focused, placeholder: placeholder, lines: []string{line}}
		return in.idle.lines
	}
	mark := th.accent.Render("› ")
	var b strings.Builder
	for i, r := range in.buf {
		if label, ok := in.imageLabel(r); ok { // imageinput.go
			style := th.key
			if i == in.cur && focused {
				style = th.reverse
			}
			b.WriteString(style.Render(label))
			continue
		}
		if i == in.cur && focused {
			if r == '\n' {
				b.WriteString(th.reverse.Render(" "))
				b.WriteRune('\n')
			} else {
				b.WriteString(th.reverse.Render(string(r)))
			}
			continue
		}
		b.WriteRune(r)
	}
	if in.cur == len(in.buf) && focused {
		b.WriteString(th.reverse.Render(" "))
	}
	var out []string
	for i, l := range strings.Split(b.String(), "\n") {
		first := "  "
		if i == 0 {
			first = mark
		}
		wrapped := strings.Split(ansi.Hardwrap(l, max(width-2, 4), true), "\n")
		for j, w := range wrapped {
			if j == 0 {
				out = append(out, first+w)
			} else {
				out = append(out, "  "+w)
			}
		}
	}
	// A long input shows its last lines (where the cursor usually is).
	if len(out) > 12 {
		out = append([]string{th.dim.Render(fmt.Sprintf("  … %d lines above", len(out)-11))}, out[len(out)-11:]...)
	}
	return out
}
