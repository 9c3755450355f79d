package tui_test

import "testing"

// What xterm.js (@xterm/headless, pinned in test/tui/xterm) does to the
// rows on the screen when it narrows: the rules internal/tui/rewrap.go
// (rewrappedXTerm) counts by, checked against the real engine rather than
// our reading of it (docs/tui.md, "Resizing").

// xtermAfterNarrowing writes seq to a 20×8 xterm.js, narrows it to 10
// columns, and returns its rows (a wrapped row marked "+"), the cursor's
// row in the buffer, and the buffer's rows before.
func xtermAfterNarrowing(t *testing.T, seq string) (rows []string, cursorRow int) {
	t.Helper()
	h := startXTerm(t, 20, 8)
	h.write([]byte(seq))
	before := h.dump()
	h.call("resize", map[string]any{"cols": 10, "rows": 8})
	b := h.dump()
	for i, r := range b.rows {
		if b.wrapped[i] {
			r = "+" + r
		}
		rows = append(rows, r)
	}
	if testing.Verbose() {
		t.Logf("before: %q cursor %v\nafter: %q cursor %v", before.rows, before.cursor, rows, b.cursor)
	}
	return rows, b.base + b.cursor[1]
}

// The rows printed before the live region: six lines, the screen full.
const printedRows = "p0\r\np1\r\np2\r\np3\r\np4\r\np5\r\n"

func rowIndex(t *testing.T, rows []string, want string) int {
	t.Helper()
	for i, r := range rows {
		if r == want {
			return i
		}
	}
	t.Fatalf("no row %q in %q", want, rows)
	return -1
}

// Rows written with autowrap off (as the TUI writes its frames) are lines
// of their own: each one wider than the new width is split, blanks
// written at its end counting and erased ones (EL) not; the cursor's row
// is left whole, cut at the new width; and the cursor stays on its row.
func TestXTermSplitsEachWideRowButTheCursors(t *testing.T) {
	rows, cur := xtermAfterNarrowing(t, printedRows+"\x1b[?7l"+
		"AAAAAAAAAAAAAAA\r\n"+ // 15 columns
		"BBBBB          \r\n"+ // 5 and 10 blanks written
		"CCCCC\x1b[K\r\n"+ // 5, the rest erased
		"DDDDDDDDDDDDDDD\r"+ // the cursor's row
		"\x1b[?7h")
	a := rowIndex(t, rows, "AAAAAAAAAA")
	if rows[a+1] != "+AAAAA" {
		t.Errorf("the 15-column row was not split in two: %q", rows[a:])
	}
	b := rowIndex(t, rows, "BBBBB     ")
	if rows[b+1] != "+     " {
		t.Errorf("the row with 10 blanks written was not split (written blanks count): %q", rows[b:])
	}
	c := rowIndex(t, rows, "CCCCC")
	d := rowIndex(t, rows, "DDDDDDDDDD")
	if d != c+1 {
		t.Errorf("a row with erased blanks was split, or the cursor's row was: %q", rows[c:])
	}
	if cur != d {
		t.Errorf("the cursor is on row %d, want its own row %d: %q", cur, d, rows)
	}
}

// With the cursor on the first row of the live region (where bubbletea's
// print leaves it), a row split below the cursor scrolls the screen up as
// one split above it does, and the cursor keeps its screen row: it ends a
// row lower against the rows, on the row after its own. (On a screen not
// yet full, xterm.js moves the cursor down a row and drops the last row
// instead, the split row's second part with it here: the cursor still ends
// a row lower.)
func TestXTermMovesTheCursorDownOverARowSplitBelowIt(t *testing.T) {
	rows, cur := xtermAfterNarrowing(t, printedRows+"p6\r\np7\r\n\x1b[?7l"+ // the screen full, scrolled
		"FIRST\r\n"+
		"SSSSSSSSSSSSSSSSSSS"+ // the status line, 19 columns
		"\x1b[A\r"+ // the cursor back on the first row
		"\x1b[?7h")
	first := rowIndex(t, rows, "FIRST")
	if rows[first+1] != "SSSSSSSSSS" || rows[first+2] != "+SSSSSSSSS" {
		t.Errorf("the status line below the cursor was not split: %q", rows[first:])
	}
	if cur != first+1 {
		t.Errorf("the cursor is on row %d, want %d (a row below its own): %q", cur, first+1, rows)
	}
}

// With blank rows below the live region (a screen not yet full), a split
// row pushes the rows below it down instead of scrolling the screen: the
// cursor still ends where the rows added say.
func TestXTermPushesRowsDownOnAScreenNotFull(t *testing.T) {
	rows, cur := xtermAfterNarrowing(t, "p0\r\n\x1b[?7l"+
		"AAAAAAAAAAAAAAA\r\n"+
		"LAST\r"+
		"\x1b[?7h")
	last := rowIndex(t, rows, "LAST")
	if rows[last-1] != "+AAAAA" || rows[0] != "p0" {
		t.Errorf("want p0, the row split in two, then LAST: %q", rows)
	}
	if cur != last {
		t.Errorf("the cursor is on row %d, want LAST's, %d: %q", cur, last, rows)
	}
}
