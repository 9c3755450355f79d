package tui

import (
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
)

// spillBytes is about how much text one print message carries when prints
// are not paced: its first part goes through bubbletea, the others are
// written with it (spill.go). A key typed meanwhile waits for at most one
// such write.
const spillBytes = 64 << 10

// printCmd prints the queued lines above the live region: all of them,
// in parts that keep their order, sent to the event loop back to back
// (one command, not a round trip through Update per part); the lines stay
// queued until printedMsg says which are in the scrollback.
//
// bubbletea inserts printed lines at positions computed from the size it
// knows; a print between a terminal's resize and the program learning of
// it lands in the wrong place and the repaint after the resize erases it.
// So no print starts for a moment after a resize, and a part whose
// terminal no longer has the size the program knows is dropped with the
// parts after it, to be printed again.
func (m *model) printCmd() tea.Cmd {
	if m.printing > 0 || m.printable() == 0 || m.printHeld {
		return nil
	}
	if wait := time.Until(m.holdPrints); wait > 0 {
		m.printHeld = true
		return tea.Tick(wait, func(time.Time) tea.Msg { return printRetryMsg{} })
	}
	if !m.printReady() { // no frame since the last print yet (anchor.go)
		m.printHeld = true
		m.awaitFrame()
		return tea.Tick(4*time.Millisecond, func(time.Time) tea.Msg { return printRetryMsg{} })
	}
	// bubbletea scrolls the screen by the lines it prints, then moves up
	// over them and the live region to insert them: more lines than the
	// screen has rows above the live region cannot be reached, and some
	// would be lost. A long batch goes in parts.
	//
	// The cursor is on the live region's last row when a print starts
	// (anchor.go): the move up is the lines printed plus the live
	// region's rows, which must stay on screen.
	rows := m.height / 2
	if m.writes != nil {
		rows = m.height - max(m.viewRows[0], m.viewRows[1]) - 1
	}
	if rows < 0 && !m.quitting {
		// The live region fills the screen (a question or list taller
		// than it): its first row is the screen's, and a print would
		// scroll it into the scrollback. The lines wait until it is
		// shorter (but not a quit, which waits for them).
		m.printHeld = true
		return tea.Tick(20*time.Millisecond, func(time.Time) tea.Msg { return printRetryMsg{} })
	}
	// And they must stay on screen if the terminal shrinks after the size
	// was checked (filterPrint) but before it reads the print: it then
	// scrolls by the part's lines on fewer rows, and the live region's
	// first rows would go into the scrollback above the part. A part of
	// half the room keeps them on a screen shrunk to about half its rows.
	part := max(rows/2, 1)
	m.printing = m.printable() // connect.go
	// Parts after the first start on the live region's first row; a tall
	// live region (under half the screen left above it) stays paced too.
	// (The stale frames that seemed to ask for it had another cause, the
	// top row: run.go, leaveTopRow. Kept to be safe; docs/tui.md.)
	paced := m.paced() || rows < m.height/2
	if paced {
		m.printing = min(m.printing, part)
	}
	cmds := make([]tea.Cmd, 0, m.printing/part+2)
	for i := 0; i < m.printing; {
		lines := m.printQ[i:min(i+part, m.printing)]
		msg := printMsg{text: strings.Join(lines, "\n"), n: len(lines)}
		if msg.text == "" {
			msg.text = " " // an empty print prints nothing
		}
		i += len(lines)
		// Unpaced, the parts that follow go with this one's write, up to
		// about spillBytes (spill.go).
		for size := len(msg.text); m.spill != nil && !paced && i < m.printing && size < spillBytes; {
			more := m.printQ[i:min(i+part, m.printing)]
			msg.more = append(msg.more, more)
			msg.n += len(more)
			i += len(more)
			for _, l := range more {
				size += len(l) + 1
			}
		}
		cmds = append(cmds, func() tea.Msg { return msg })
	}
	cmds = append(cmds, func() tea.Msg { return printedMsg{} })
	return tea.Sequence(cmds...)
}

// printDequeue drops the lines bubbletea printed from the queue; those of a
// part dropped (filterPrint) stay for a retry, paced.
func (m *model) printDequeue() {
	m.checkSpill()
	if m.printSkipped {
		m.holdPrints = time.Now().Add(resizeSettle)
		m.paceUntil = m.holdPrints.Add(paceAfterResize)
	}
	if m.printDone > 0 && m.writes != nil {
		m.printWrites, m.printedOnce = m.writes(), true
	}
	m.frameWaits = 0
	if m.printDone > 0 {
		m.fresh = false
	}
	if m.rejoinHold {
		m.rejoinAt = max(m.rejoinAt-m.printDone, 0)
	}
	m.dropPrinted()
	m.printing, m.printDone, m.printSkipped = 0, 0, false
	if len(m.printQ) == 0 && m.ag != nil {
		m.ag.starve() // the next lines are taken as they come
	}
}

// dropPrinted drops the printDone lines at the head of the queue. What
// is left moves to the front of the array when it is no longer than what
// went, so that the array is reused rather than a new one grown for each
// batch of a long answer (issue 36), for at most as many copies as lines
// printed. No part of the queue is held elsewhere by then: the last
// print's parts were written or dropped (checkSpill).
func (m *model) dropPrinted() {
	rest := m.printQ[m.printDone:]
	if len(rest) > m.printDone {
		m.printQ = rest
		return
	}
	n := copy(m.printQ, rest)
	clear(m.printQ[n:]) // printed: let the collector have them
	m.printQ = m.printQ[:n]
}

// printMsg carries a part of a print (n lines in all) to the event loop,
// where filterPrint turns it into bubbletea's own print message; more are
// the parts written with it (spill.go).
type printMsg struct {
	text string
	n    int
	more [][]string
}

// filterPrint runs in bubbletea's event loop just before it handles a
// message (tea.WithFilter): a part whose terminal no longer has the size
// the program knows is dropped there, with the parts after it (printedMsg
// then keeps their lines for a retry), as close to the insertion as
// anything can check.
func (m *model) filterPrint(msg printMsg) tea.Msg {
	m.checkSpill()
	if m.printSkipped {
		return nil
	}
	if m.out != nil {
		// What is queued for the terminal (outpipe.go) was checked
		// against its size before: it goes first, so that this check
		// finds no earlier print still on its way, as when prints were
		// written in the event loop.
		_ = m.out.Flush()
	}
	if m.termSize != nil {
		if tw, th, err := m.termSize(); err == nil && (tw != m.width || th != m.height) {
			m.printSkipped = true
			return nil
		}
	}
	if len(msg.more) > 0 {
		m.spill.arm(msg.text, msg.more, m.width)
		for _, p := range msg.more {
			m.spilled += len(p)
		}
	}
	m.printDone += msg.n
	return tea.Println(msg.text)()
}

// checkSpill makes sure the parts armed to go with the last print were
// written with it; if they were not (bubbletea's write was not the one
// expected), their lines were not printed: they and what follows are
// printed again, paced.
func (m *model) checkSpill() {
	if m.spilled == 0 {
		return
	}
	if !m.spill.disarm() {
		m.printDone -= m.spilled
		m.printSkipped = true
	}
	m.spilled = 0
}

// printFilter is the program's message filter. It holds m itself, not
// the root model bubbletea hands it: Options.wrap may wrap the model, and
// a print that did not reach filterPrint would never be written.
func printFilter(m *model) func(tea.Model, tea.Msg) tea.Msg {
	return func(_ tea.Model, msg tea.Msg) tea.Msg {
		if p, ok := msg.(printMsg); ok {
			return m.filterPrint(p)
		}
		return msg
	}
}
