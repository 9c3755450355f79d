package tui

import (
	"bytes"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// resize takes the terminal's size. The first is the one bubbletea
// started with: nothing is repainted, and nothing needs holding. After a
// later one, prints are held while bubbletea repaints, then paced
// (print.go); and when the terminal narrowed and re-wraps, its redraw's
// erase is moved up over the rows the re-wrapping added (rewrap.go).
func (m *model) resize(msg tea.WindowSizeMsg) {
	if m.sized && (m.width != msg.Width || m.height != msg.Height) {
		m.holdPrints = time.Now().Add(resizeSettle)
		m.paceUntil = m.holdPrints.Add(paceAfterResize)
	}
	if m.sized && msg.Width < m.width {
		m.erase.arm(m.rewraps.added(m.drawnFrame(), m.height, msg.Width, m.erase.printedLast()))
	}
	m.sized = true
	m.width, m.height = msg.Width, msg.Height
}

// bubbletea erases the live region's rows from the first one it redraws
// down with an erase of the screen below the cursor (ED, CSI J), always
// from a row's first column. When that row is the screen's first (a live
// region as tall as the screen, or one on the top row of a fresh screen),
// tmux (3.3 on: scroll-on-clear, on by default) takes the erase for a
// cleared screen and scrolls all of it into its history: each redraw of
// another height left a frame of the live region there. Deleting the rows
// from the cursor down (DL, CSI n M) blanks the same rows, and no terminal
// takes it for a clear. DL's count is cut to the rows below; 999 is more
// than any screen has.
var (
	eraseBelowSeq  = []byte("\x1b[J")
	deleteBelowSeq = []byte("\x1b[999M")
)

// eraser rewrites bubbletea's erases (above) in what the TUI's writer
// passes to the terminal, and moves the first one after a narrowing up
// over the rows the terminal's re-wrapping added (rewrap.go).
type eraser struct {
	up atomic.Int32 // rows to move up before the next erase
	// afterPrint says the last write was a print: bubbletea leaves the
	// cursor on the live region's first row after one, on its last after
	// a frame (anchor.go). Where it is decides which row xterm.js leaves
	// whole (rewrap.go).
	afterPrint atomic.Bool
	// buf is the last frame's rewrite, reused: bubbletea writes under
	// its renderer's lock, one write at a time, and a write is done when
	// the writer returns.
	buf []byte
}

// A frame that the terminal reads after it narrowed (tmux resizes its
// screen, then parses what the program wrote before it learnt of the new
// size) wraps its rows wider than the new width: it ends rows lower than
// bubbletea believes, and the redraw at the new size, which moves up over
// the rows bubbletea drew, left the live region's first rows behind. So a
// frame is written with autowrap off: a row too wide is cut at the right
// edge and takes one row, as bubbletea counts it. bubbletea's inline
// frames never rely on autowrap (each row starts with a move, which ends
// a pending wrap), and a print keeps it: its lines are the scrollback's,
// and bubbletea counts their wrapped rows.
var (
	autowrapOff = []byte("\x1b[?7l")
	autowrapOn  = []byte("\x1b[?7h")
)

// rewrite is what the terminal gets for p, bubbletea's write: a frame
// with autowrap off (above), and its erases below the cursor made line
// deletions, the first one moved up by the rows armed (arm).
func (e *eraser) rewrite(p []byte) []byte {
	if len(p) == 0 {
		return p
	}
	_, newlines, rest, moves := scanInsert(p)
	if e != nil {
		e.afterPrint.Store(moves && insertsLines(rest, newlines))
	}
	if moves {
		return p
	}
	if bytes.Contains(p, eraseBelowSeq) {
		p = e.deleteBelow(p)
	}
	if e == nil {
		return append(append(append([]byte{}, autowrapOff...), p...), autowrapOn...)
	}
	e.buf = append(append(append(e.buf[:0], autowrapOff...), p...), autowrapOn...)
	return e.buf
}

// deleteBelow is p with its erases below the cursor made line deletions,
// the first one moved up by the rows armed.
func (e *eraser) deleteBelow(p []byte) []byte {
	if e != nil {
		if up := e.up.Swap(0); up > 0 {
			i := bytes.Index(p, eraseBelowSeq)
			q := append(append([]byte{}, p[:i]...), ansi.CursorUp(int(up))...)
			p = append(q, p[i:]...)
		}
	}
	return bytes.ReplaceAll(p, eraseBelowSeq, deleteBelowSeq)
}

// arm sets the rows to move up before the next erase.
func (e *eraser) arm(up int) {
	if e != nil {
		e.up.Store(int32(up))
	}
}

// drawnFrame is the rows of the frame on the screen, as far as the writes
// tell: bubbletea draws the latest view, and draws it before a print, so
// a view followed by a write was drawn. Nil when neither of the last two
// views is known to be.
func (m *model) drawnFrame() []string {
	if m.writes == nil {
		return m.frames[1]
	}
	switch n := m.writes(); {
	case n > m.frameWrites[1]:
		return m.frames[1]
	case m.frameWrites[1] > m.frameWrites[0]:
		return m.frames[0]
	}
	return nil
}

// insertsLines says an insertion's moves (scanInsert) are followed by
// the insertion of as many lines as it scrolled by (CSI n L): bubbletea's
// print. A frame that grows the live region at the screen's bottom
// scrolls by newlines and moves up too, and leaves the cursor on the
// last row.
func insertsLines(rest []byte, newlines int) bool {
	n, final, _, isCSI := csiNumber(rest)
	return isCSI && final == 'L' && n == newlines
}

// printedLast says the last write was a print (afterPrint).
func (e *eraser) printedLast() bool { return e != nil && e.afterPrint.Load() }
