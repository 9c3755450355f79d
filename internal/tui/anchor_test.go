package tui

import "testing"

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
