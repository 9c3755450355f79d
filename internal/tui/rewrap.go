package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// rewrapper names the terminal the TUI runs in by how it re-wraps the
// live region's rows when it narrows, as far as the environment tells.
// bubbletea's redraw at the new size moves up over the frame's rows as it
// drew them and erases from there; the rows the re-wrapping put between
// the region's first row and the cursor are rows it does not move up
// over, and the first parts of the rows it did not count were left
// behind, above the redrawn live region, to go into the scrollback with
// the next prints. The TUI's writer moves the redraw's erase up by as
// many (resize.go, eraser).
type rewrapper int

const (
	// noRewrap: not known to re-wrap. Nothing is corrected, since a
	// move up over rows a terminal did not add (xterm, which crops)
	// would erase printed lines.
	noRewrap rewrapper = iota
	// tmuxRewrap: tmux (rewrapped).
	tmuxRewrap
	// xtermRewrap: xterm.js, the engine of VS Code's integrated terminal
	// (rewrappedXTerm).
	xtermRewrap
)

// rewrapperOf is the terminal's rewrapper, read from its environment at
// start. tmux wins over what it runs in: it is the terminal the TUI
// talks to, and the one that re-wraps (VS Code's terminal running tmux
// passes TERM_PROGRAM=vscode on to tmux's panes). VS Code's terminal says
// it is xterm.js with TERM_PROGRAM=vscode (Cursor and Windsurf, its
// forks, set the same); a terminal that claims to be vscode and does not
// re-wrap cannot be told apart, and loses printed lines to the move.
func rewrapperOf(getenv func(string) string) rewrapper {
	switch {
	case getenv("TMUX") != "":
		return tmuxRewrap
	case getenv("TERM_PROGRAM") == "vscode":
		return xtermRewrap
	}
	return noRewrap
}

// added is how many rows the terminal puts between the live region's
// first row and the cursor when it narrows to width with frame on the
// screen, height rows high; afterPrint says a print was the last write.
func (r rewrapper) added(frame []string, height, width int, afterPrint bool) int {
	switch r {
	case tmuxRewrap:
		if afterPrint {
			// The cursor is on the live region's first row, and tmux
			// keeps it on its row's first part: the rows it splits are
			// all below it. Counting them would move the erase up over
			// printed lines.
			return 0
		}
		return rewrapped(frame, height, width)
	case xtermRewrap:
		return rewrappedXTerm(frame, height, width, afterPrint)
	}
	return 0
}

// rewrapped is the rows tmux adds above the last of the frame's rows, the
// row the cursor is on between frames (anchor.go), when it narrows to
// width: tmux splits every row wider than the new width, the cursor's row
// too, the cursor staying on its first part. A row's width is its text's
// without trailing blanks: no more than the cells tmux holds, so the move
// never goes above the live region.
func rewrapped(frame []string, height, width int) int {
	if width < 1 || len(frame) < 2 {
		return 0
	}
	frame = frame[max(len(frame)-height, 0) : len(frame)-1]
	n := 0
	for _, l := range frame {
		n += extraRows(strings.TrimRight(ansi.Strip(l), " "), width)
	}
	return n
}

// rewrappedXTerm is the rows xterm.js moves the cursor down by, against
// the frame's rows, when it narrows to width (@xterm/headless 6.0.0,
// test/tui/xterm_reflow_linux_test.go). It splits every row whose cells up
// to the last one written are wider than the new width, but for the
// cursor's, which it leaves whole (its reflowCursorLine option, off by
// default and in VS Code). Each row it adds scrolls the screen up by one,
// the cursor keeping its screen row: for a row above the cursor the cursor
// follows its row, as in tmux, but for a row below it the cursor ends a
// row lower against the rows. So every row split counts, on either side
// of the cursor, and where the cursor is decides only which row is left
// whole: the last after a frame, the first after a print (anchor.go). The
// status line, the last row, ends in the anchor cell, written in the last
// column: its width is the whole row's. Other rows count without trailing
// blanks; written ones count in xterm.js, so it adds no fewer rows than
// counted, and the move never goes above the live region.
func rewrappedXTerm(frame []string, height, width int, afterPrint bool) int {
	if width < 1 || len(frame) < 2 {
		return 0
	}
	frame = frame[max(len(frame)-height, 0):]
	cursor := len(frame) - 1
	if afterPrint {
		cursor = 0
	}
	n := 0
	for i, l := range frame {
		switch {
		case i == cursor:
		case i == len(frame)-1:
			n += extraRows(ansi.Strip(l), width)
		default:
			n += extraRows(strings.TrimRight(ansi.Strip(l), " "), width)
		}
	}
	return n
}

// extraRows is how many rows beyond its first a row of text takes at
// width.
func extraRows(text string, width int) int {
	if w := ansi.StringWidth(text); w > width {
		return (w - 1) / width
	}
	return 0
}
