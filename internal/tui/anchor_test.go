package tui

import (
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// A print written between two views flips the anchor cell back to the
// style the screen shows; a print then waiting for a frame must still get
// one: its retries flip the cell again (seen as BenchmarkPrintTenMB hanging
// in its second run).
func TestAWaitingPrintGetsAFrame(t *testing.T) {
	m := testModel()
	m.width, m.height = 80, 24
	var writes int64
	m.writes = func() int64 { return writes }
	shown := m.anchorCell()
	writes++ // the frame with that cell
	_ = m.anchorCell()
	writes++ // a print, before the next view
	m.printWrites, m.printedOnce = writes, true
	if m.anchorCell() != shown {
		t.Fatal("setup: the cell should be the screen's again")
	}
	m.printLines("next")
	for i := 0; i < 10; i++ {
		if m.printCmd() == nil {
			t.Fatal("no retry scheduled")
		}
		if m.anchorCell() != shown {
			return // the next view differs: a frame is written
		}
		m.printHeld = false // the retry
	}
	t.Fatal("after 10 retries the view still equals the screen: the print waits for ever")
}

// The terminal's first size is not a resize: prints are neither held nor
// paced after it (a long answer asked for in the first second after start
// went to the scrollback a screen a frame: the 10 MB benchmark spent most
// of its time paced). A later size is, and holds and paces them.
func TestOnlyALaterSizePacesPrints(t *testing.T) {
	m := newModel(Options{}, newTheme(true, false))
	m.writes = func() int64 { return 0 }
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	if m.paced() {
		t.Fatal("prints are paced after the first size")
	}
	if time.Until(m.holdPrints) > 0 {
		t.Fatal("prints are held after the first size")
	}
	m.Update(tea.WindowSizeMsg{Width: 90, Height: 30})
	if !m.paced() || time.Until(m.holdPrints) <= 0 {
		t.Fatal("prints are not held and paced after a resize")
	}
}
