package tui

import (
	"strings"
	"testing"
)

// The terminal's re-wrapping is read from its environment: tmux when
// TMUX is set, whatever terminal tmux runs in (VS Code's terminal running
// tmux passes TERM_PROGRAM=vscode on to the panes, and tmux is the
// terminal the TUI talks to); xterm.js in VS Code's terminal; none known
// otherwise, where a move up over rows the terminal did not add would
// erase printed lines.
func TestRewrapperOfTheTerminal(t *testing.T) {
	for _, c := range []struct {
		name string
		env  map[string]string
		want rewrapper
	}{
		{"plain terminal", map[string]string{"TERM": "xterm-256color"}, noRewrap},
		{"tmux", map[string]string{"TMUX": "/tmp/tmux-1000/default,42,0"}, tmuxRewrap},
		{"VS Code", map[string]string{"TERM_PROGRAM": "vscode"}, xtermRewrap},
		{"tmux in VS Code", map[string]string{"TERM_PROGRAM": "vscode", "TMUX": "/tmp/tmux-1000/default,42,0"}, tmuxRewrap},
		{"iTerm2", map[string]string{"TERM_PROGRAM": "iTerm.app"}, noRewrap},
		{"Apple Terminal", map[string]string{"TERM_PROGRAM": "Apple_Terminal"}, noRewrap},
	} {
		if got := rewrapperOf(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("%s: rewrapper %d, want %d", c.name, got, c.want)
		}
	}
}

// xterm.js counts every row of the frame it splits but the cursor's, on
// either side of the cursor: the last row is the cursor's after a frame,
// the first after a print. The status line ends in the anchor cell in the
// last column, so it counts at its whole width; other rows without their
// trailing blanks. (test/tui/xterm_reflow_linux_test.go checks the rules
// against xterm.js itself.)
func TestRewrappedXTermCountsRowsOnBothSidesOfTheCursor(t *testing.T) {
	long := strings.Repeat("w", 95)           // two rows at 90 columns, three at 40
	status := strings.Repeat("s", 60) + "   " // the anchor cell and padding: 63 columns written
	frame := []string{long, "short   ", long + "      ", status}
	for _, c := range []struct {
		name       string
		width      int
		afterPrint bool
		want       int
	}{
		{"after a frame, 90 columns: the two long rows", 90, false, 2},
		{"after a print, 90 columns: the second long row", 90, true, 1},
		{"after a frame, 62 columns: the long rows", 62, false, 2},
		{"after a print, 62 columns: the second long row and the status line", 62, true, 2},
		{"after a frame, 40 columns", 40, false, 4},
		{"after a print, 40 columns", 40, true, 3},
		{"no narrower than the rows", 100, false, 0},
	} {
		if got := rewrappedXTerm(frame, 30, c.width, c.afterPrint); got != c.want {
			t.Errorf("%s: %d rows, want %d", c.name, got, c.want)
		}
	}
	// tmux's count is the rows above the cursor: those above the last
	// after a frame, none after a print (the cursor on the first row,
	// kept on its first part).
	if got := tmuxRewrap.added(frame, 30, 62, false); got != 2 {
		t.Errorf("tmux at 62 columns after a frame: %d rows, want 2", got)
	}
	if got := tmuxRewrap.added(frame, 30, 62, true); got != 0 {
		t.Errorf("tmux at 62 columns after a print: %d rows, want 0 (a move up would erase printed lines)", got)
	}
}

// The writer knows where bubbletea left the cursor: on the live region's
// first row after its print (CR, the newlines, the move up, the insertion
// of as many lines), on its last after a frame, even one that scrolls the
// screen by newlines and moves up as a print does but inserts nothing.
func TestEraserNotesWhetherAPrintCameLast(t *testing.T) {
	e := &eraser{}
	for _, c := range []struct {
		name  string
		write string
		print bool
	}{
		{"a print", "\r\x1b[2B\n\n\x1b[4A\x1b[2L\x1b[Kline one\r\n\x1b[Kline two\r\n", true},
		{"a frame", "\x1b[2A\x1b[Jlive\r\nstatus\r", false},
		{"a print of one line", "\r\n\x1b[3A\x1b[L\x1b[Kline\r\n", true},
		{"a frame that scrolls", "\r\n\n\x1b[2Agrown\r\nlive\r\nstatus\r", false},
	} {
		e.rewrite([]byte(c.write))
		if got := e.printedLast(); got != c.print {
			t.Errorf("after %s: printedLast %v, want %v", c.name, got, c.print)
		}
	}
}
