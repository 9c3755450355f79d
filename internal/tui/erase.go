package tui

import "bytes"

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

// deleteBelow is p with bubbletea's erases below the cursor made line
// deletions (above). p is returned as it is when it has none: a frame
// erases only when the live region's height changes.
func deleteBelow(p []byte) []byte {
	if !bytes.Contains(p, eraseBelowSeq) {
		return p
	}
	return bytes.ReplaceAll(p, eraseBelowSeq, deleteBelowSeq)
}
