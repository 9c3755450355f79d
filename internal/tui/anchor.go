package tui

import (
	"io"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// Printing above the live region stays right through a resize when the
// terminal's cursor rests on the live region's last row whenever a print
// starts.
//
// bubbletea prints (tea.Println) by moving the cursor from where it is to
// the bottom of the live region, scrolling the screen by the lines
// printed, moving up over them and the live region, inserting lines there
// and writing them; it then leaves the cursor on the live region's first
// row until its next frame. A terminal whose height shrinks deletes the
// rows below the cursor (tmux does) to keep the cursor on screen. If that
// happens while the cursor is on the live region's first row, and a print
// written for the old size is still on its way, the print's move down
// stops short, its move up goes too far by the rows deleted, and the
// lines it inserts push as many printed lines into the live region, whose
// next frame draws over them: they were lost (1–2 lines a resize).
//
// So a frame always ends on the last row: the status line's last column
// holds one cell whose style flips whenever anything was written since the
// last view (anchorCell), so every frame redraws it, and the renderer,
// having drawn the last column, leaves the cursor at that row's start. And a print starts only after a
// frame was written since the previous print (printCmd checks the count
// of writes), so it finds the cursor on the last row, where a resize
// deletes nothing below it and every move of the print is relative to
// the bottom, which a resize keeps.
//
// Paced that way a print carries at most a screen a frame (about 1,600
// lines a second), so the pacing holds only for a while after a resize
// (paced); the rest of the time a print carries every queued line in parts
// sent back to back.

// output wraps w, the terminal, as bubbletea's output: it counts the
// writes (m.writes), writes the parts a print carries with it (spill.go)
// and rewrites bubbletea's erases (resize.go). A terminal (a file) is
// written from a goroutine of its own (outpipe.go, m.out).
func (m *model) output(w io.Writer) io.Writer {
	m.spill, m.erase = &spiller{}, &eraser{}
	if f, ok := w.(*os.File); ok {
		m.out = newOutPipe(f)
		out := &countingFile{File: f, out: m.out, spill: m.spill, erase: m.erase}
		m.writes = out.n.Load
		return out
	}
	out := &countingWriter{w: w, spill: m.spill, erase: m.erase}
	m.writes = out.n.Load
	return out
}

// countingFile is the terminal as bubbletea's output, counting writes. It
// embeds the *os.File so bubbletea still sees a terminal (its Fd).
type countingFile struct {
	*os.File
	out   *outPipe // the file's writer
	n     atomic.Int64
	spill *spiller
	erase *eraser
}

func (c *countingFile) Write(p []byte) (int, error) {
	c.n.Add(1)
	// A frame goes with autowrap off and its erases made deletions
	// (resize.go), and a print's write takes the parts armed to go with
	// it (spill.go): both only lengthen what bubbletea wrote.
	if q := c.spill.expand(c.erase.rewrite(p)); len(q) != len(p) {
		if _, err := c.out.Write(q); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return c.out.Write(p)
}

// WriteString is Write: the *os.File's own would bypass it (bubbletea
// writes a print with io.WriteString), which left prints uncounted on a
// terminal while countingWriter, in process, always counted them.
func (c *countingFile) WriteString(s string) (int, error) { return c.Write([]byte(s)) }

// countingWriter is countingFile for an output that is not a file.
type countingWriter struct {
	w     io.Writer
	n     atomic.Int64
	spill *spiller
	erase *eraser
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n.Add(1)
	if q := c.spill.expand(c.erase.rewrite(p)); len(q) != len(p) {
		if _, err := c.w.Write(q); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return c.w.Write(p)
}

// anchorCell is the last cell of the status line: a space, plain or
// faint by turns, flipped when the output was written since the last view.
func (m *model) anchorCell() string {
	if m.writes != nil {
		if n := m.writes(); n != m.anchorSeen {
			m.anchorSeen, m.anchorFlip = n, !m.anchorFlip
		}
	}
	if m.anchorFlip {
		return "\x1b[2m \x1b[m" // faint
	}
	return "\x1b[3m \x1b[m" // italic: as invisible, but not a blank the renderer may skip
}

// anchorLine is the status line padded to the last column, where the
// anchor cell goes: after drawing the last column the renderer moves the
// cursor to the row's start, where a terminal that re-wraps the row when
// it narrows keeps the cursor on the row's first part.
func (m *model) anchorLine(status string, width int) string {
	pad := max(width-1-ansi.StringWidth(status), 0)
	return status + strings.Repeat(" ", pad) + m.anchorCell()
}

// paced tells whether prints go one part a frame: for a while after a
// resize, when another may follow. Otherwise a print carries everything
// queued, its first part starting on the last row and the others right
// after it; only a resize in the moment the parts take to be written can
// then cost a line.
func (m *model) paced() bool {
	return m.writes != nil && time.Now().Before(m.paceUntil)
}

// awaitFrame is called at each retry of a print that waits for a frame.
// The cell flips on any write, a print's too: a print written between two
// views flips it back to the style the screen shows, the next frame then
// equals the screen's, nothing is written, and the print would wait for
// ever. Every fifth retry (about 20 ms, more than a frame) flips the cell
// once more, so a frame differs and is written.
func (m *model) awaitFrame() {
	m.frameWaits++
	if m.frameWaits%5 == 0 {
		m.anchorFlip = !m.anchorFlip
	}
}

// printReady tells whether a frame was written since the last print.
func (m *model) printReady() bool {
	return m.writes == nil || !m.printedOnce || m.writes() > m.printWrites
}
