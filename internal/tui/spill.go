package tui

import (
	"bytes"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/charmbracelet/x/ansi"
)

// A long answer goes to the scrollback in parts of at most the rows above
// the live region (printCmd). Through bubbletea each part costs a message,
// an Update, a View and a frame besides its own write: a 10 MB answer is
// some 3,700 parts, and that, not the text, was most of its time. So when
// prints are not paced, one print message carries several parts, up to
// about spillBytes: bubbletea writes the first (tea.Println), and the
// writer under it (countingFile, countingWriter) appends the others to
// that very write, each as the sequence bubbletea writes for a part when
// the cursor is on the live region's first row, which is where its
// insertion leaves it:
//
//	CR, down to the live region's last row (by newlines), a newline per
//	row of the part (the screen scrolls), up over them and the live
//	region, insert as many lines, and each line, CR LF (bubbletea erases
//	each row to its end first; the rows just inserted are blank, and the
//	erase was 3 % of a long answer's bytes).
//
// The terminal then holds what it would after the parts went one by one,
// and bubbletea's model of it (the cursor on the live region's first row,
// the live region as it drew it) stays true. The live region's height is
// read from bubbletea's own write: its move up is the part's rows plus the
// live region's less one.

// spiller holds the parts armed to go with the next print's write.
type spiller struct {
	armed atomic.Bool
	mu    sync.Mutex
	want  []byte     // the end of bubbletea's write of the print's first part
	parts [][]string // the parts to append, in order
	width int        // the terminal's width the parts were made for
	done  bool       // they were appended
	// buf is the last expanded write's, reused: the write is done when
	// the writer returns.
	buf []byte
}

// arm sets parts to go with bubbletea's write of first (tea.Println's
// text) on a terminal width columns wide.
func (s *spiller) arm(first string, parts [][]string, width int) {
	var b bytes.Buffer
	for _, l := range strings.Split(first, "\n") {
		b.WriteString(ansi.EraseLineRight)
		b.WriteString(l)
		b.WriteString("\r\n")
	}
	s.mu.Lock()
	s.want, s.parts, s.width, s.done = b.Bytes(), parts, width, false
	s.mu.Unlock()
	s.armed.Store(true)
}

// disarm drops the armed parts and tells whether they were written.
func (s *spiller) disarm() bool {
	s.armed.Store(false)
	s.mu.Lock()
	defer s.mu.Unlock()
	done := s.done
	s.want, s.parts, s.done = nil, nil, false
	return done
}

// expand is p, followed by the armed parts when p is bubbletea's write of
// the armed print's first part.
func (s *spiller) expand(p []byte) []byte {
	if s == nil || !s.armed.Load() {
		return p
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done || len(s.parts) == 0 || !bytes.HasSuffix(p, s.want) {
		return p
	}
	h, ok := insertHeight(p)
	if !ok {
		return p
	}
	n := len(p)
	for _, part := range s.parts {
		for _, l := range part {
			n += len(l) + 8
		}
		n += 32
	}
	if cap(s.buf) < n {
		s.buf = make([]byte, 0, n)
	}
	out := append(s.buf[:0], p...)
	for _, part := range s.parts {
		out = appendInsert(out, part, h, s.width)
	}
	s.buf = out
	s.done = true
	s.armed.Store(false)
	return out
}

// appendInsert appends the insertion of one part's lines above a live
// region h rows high, from the cursor on its first row, as bubbletea
// writes it (see above).
func appendInsert(out []byte, part []string, h, width int) []byte {
	// The part's lines are its strings split at their newlines, as
	// bubbletea splits the text printCmd joins; they are walked where
	// they are rather than joined and split again (issue 36: that copy
	// was most of what a long answer allocated).
	if len(part) == 0 || len(part) == 1 && part[0] == "" {
		part = []string{" "} // as printCmd makes it for bubbletea
	}
	rows := 0
	for _, s := range part {
		for l := range strings.SplitSeq(s, "\n") {
			rows++
			// A line as long in bytes as the screen is wide fits: no
			// character is wider than its bytes.
			if len(l) > width && width > 0 {
				if w := ansi.StringWidth(l); w > width {
					rows += (w - 1) / width
				}
			}
		}
	}
	// Down to the live region's last row by newlines, not a cursor move:
	// a terminal that shrank since the write was made (it reads a long
	// write in pieces, and may resize between two) deleted the rows below
	// the cursor, and a move down would stop short of where the part's
	// move up starts from; newlines scroll instead, and every move stays
	// relative to the live region.
	out = append(out, '\r')
	for range h - 1 + rows {
		out = append(out, '\n')
	}
	out = append(out, ansi.CursorUp(rows+h-1)...)
	out = append(out, ansi.InsertLine(rows)...)
	for _, s := range part { // on rows just inserted, blank: no erase
		for l := range strings.SplitSeq(s, "\n") {
			out = append(out, l...)
			out = append(out, '\r', '\n')
		}
	}
	return out
}

// insertHeight reads the live region's height from bubbletea's write of
// an insertion: CR, an optional move down, the newlines, the move up over
// them and the live region.
func insertHeight(p []byte) (h int, ok bool) {
	h, _, _, ok = scanInsert(p)
	return h, ok
}

// scanInsert reads the start of an insertion (insertHeight): the live
// region's height, the newlines it scrolled by, and what follows the
// move up.
func scanInsert(p []byte) (h, newlines int, rest []byte, ok bool) {
	p, ok = bytes.CutPrefix(p, []byte("\r"))
	if !ok {
		return 0, 0, nil, false
	}
	if _, final, rest, isCSI := csiNumber(p); isCSI && final == 'B' {
		p = rest
	}
	for newlines < len(p) && p[newlines] == '\n' {
		newlines++
	}
	up, final, rest, isCSI := csiNumber(p[newlines:])
	if newlines == 0 || !isCSI || final != 'A' || up < newlines {
		return 0, 0, nil, false
	}
	return up - newlines + 1, newlines, rest, true
}

// csiNumber reads a control sequence with at most one number at the
// start of p (CSI n X; no number is 1): n, X and what follows it.
func csiNumber(p []byte) (n int, final byte, rest []byte, ok bool) {
	p, ok = bytes.CutPrefix(p, []byte("\x1b["))
	if !ok {
		return 0, 0, nil, false
	}
	i := 0
	for i < len(p) && p[i] >= '0' && p[i] <= '9' && i < 6 {
		n = n*10 + int(p[i]-'0')
		i++
	}
	if i == len(p) || p[i] < '@' || p[i] > '~' {
		return 0, 0, nil, false
	}
	if i == 0 {
		n = 1
	}
	return n, p[i], p[i+1:], true
}
