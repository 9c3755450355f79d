package tui_test

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// longLines is how many lines streamLongInXTerm's answer has; each is a
// numbered start and some 200 columns of words, so the answer's
// unfinished line, live below the printed ones, is a long row (or rows)
// of the live region at almost any moment.
const longLines = 1500

var numberedLong = regexp.MustCompile(`(?m)^streamed line (\d{4}) `)

const longFiller = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut enim ad minim veniam quis nostrud exercitation ullamco laboris nisi ut aliquip ex ea"

// streamLongInXTerm streams longLines long lines in xterm.js as a flood
// (40 characters a chunk, a chunk a millisecond; streamInXTerm).
func streamLongInXTerm(t *testing.T, env, xtermEnv []string, during func(x *xtermTUI)) xtermBuffer {
	return streamInXTerm(t, longLines, 40, 1, env, xtermEnv, during)
}

// streamInXTerm streams an answer of lines numbered lines, chunkSize
// characters a chunk, delayMs apart, in xterm.js, starting at 100×30,
// calling during (if set) when line 100 (or the sixth of the lines) has
// shown, and returns the buffer once the turn ended.
func streamInXTerm(t *testing.T, lines, chunkSize, delayMs int, env, xtermEnv []string, during func(x *xtermTUI)) xtermBuffer {
	var b strings.Builder
	for i := 1; i <= lines; i++ {
		fmt.Fprintf(&b, "streamed line %04d %s\n", i, longFiller)
	}
	text, _ := json.Marshal(b.String())
	s := newSession(t)
	model := s.script("long.json", fmt.Sprintf(`{"chunkSize": %d, "delayMs": %d, "responses": [{"parts": [{"type": "text", "text": %s}]}]}`, chunkSize, delayMs, text))
	x := startXTermTUI(t, s, 100, 30, env, xtermEnv, "tui", "-m", model)
	x.waitFor("Ask corvid")
	x.typeText("count")
	x.typeText("\r")
	if during != nil {
		x.waitFor(fmt.Sprintf("streamed line %04d ", min(100, lines/6)))
		during(x)
	}
	x.waitFor(fmt.Sprintf("streamed line %04d ", lines))
	return x.idle()
}

func checkNothingRepeated(t *testing.T, buf xtermBuffer) { checkLinesOnce(t, buf, longLines) }

// checkLinesOnce fails unless each of the lines numbered lines starts
// exactly one line of the buffer (a fragment of the live region left
// behind, the first part of the answer's unfinished line, starts a second
// one; a line lost starts none), and the input line is in the buffer once.
func checkLinesOnce(t *testing.T, buf xtermBuffer, lines int) {
	t.Helper()
	all := buf.text()
	seen := map[int]int{}
	for _, m := range numberedLong.FindAllStringSubmatch(all, -1) {
		n, _ := strconv.Atoi(m[1])
		seen[n]++
	}
	bad := 0
	for i := 1; i <= lines; i++ {
		if seen[i] != 1 {
			bad++
			if bad <= 10 {
				t.Errorf("line %04d starts %d lines of the buffer", i, seen[i])
			}
		}
	}
	if bad > 10 {
		t.Errorf("… and %d more lines", bad-10)
	}
	if n := strings.Count(all, "Ask corvid"); n != 1 {
		t.Errorf("the input line is in the buffer %d times: the live region was left in the scrollback", n)
	}
	if t.Failed() {
		lines := buf.lines()
		for i, l := range lines {
			bad := strings.Contains(l, "Ask corvid") && i < len(lines)-3
			if m := numberedLong.FindStringSubmatch(l); m != nil {
				n, _ := strconv.Atoi(m[1])
				bad = bad || seen[n] > 1
			}
			if bad {
				t.Logf("line %d: %q, after %q", i, l, lines[max(i-3, 0):i])
			}
		}
		t.Logf("the screen:\n%s", buf.screen())
	}
}

// Narrowing VS Code's terminal (xterm.js) while an answer streams at a
// model's pace (1,200 characters a second), five times to five widths,
// while the answer's unfinished line is a long row of the live region,
// leaves nothing behind: each line is in the buffer once, and nothing of
// the live region is above the final one. xterm.js splits every row of
// the live region wider than the new width but the cursor's (the TUI
// writes its frames with autowrap off, so each row is a line of its own),
// and the redraw's erase must move up over the rows that put between the
// region's first row and the cursor (internal/tui/rewrap.go). Before it
// did, 2 or 3 of the 5 narrowings left the unfinished line's first row
// behind.
func TestXTermNarrowingMidStreamRepeatsNothing(t *testing.T) {
	const lines = 150
	buf := streamInXTerm(t, lines, 12, 10, []string{"TERM_PROGRAM=vscode"}, nil, func(x *xtermTUI) {
		for i, w := range []int{90, 75, 62, 50, 44} {
			x.resize(w, 30-2*i)
			x.waitFor(fmt.Sprintf("streamed line %04d ", 25+(i+1)*22))
		}
	})
	checkLinesOnce(t, buf, lines)
}

// The same under a flood (40 characters a millisecond: the live region
// changes at every frame). Which frame xterm.js held when it narrowed
// decides the rows it added, and a frame the TUI wrote just before it
// learnt of the new size may be read before or after: the TUI cannot
// tell, and counts from the frame it knows was drawn, which leaves a
// fragment now and then (2–3 narrowings in 5 leave the unfinished line's
// first row behind; 5 in 5 before the correction). Not run by default:
// CORVID_XTERM_FLOOD=1 runs it (docs/tui.md, "Not built yet").
func TestXTermNarrowingUnderAFloodRepeatsNothing(t *testing.T) {
	if os.Getenv("CORVID_XTERM_FLOOD") != "1" {
		t.Skip("fails now and then, a race the TUI cannot see (docs/tui.md, Not built yet): CORVID_XTERM_FLOOD=1 runs it")
	}
	buf := streamLongInXTerm(t, []string{"TERM_PROGRAM=vscode"}, nil, func(x *xtermTUI) {
		for i, w := range []int{90, 75, 62, 50, 44} {
			x.resize(w, 30-2*i)
			x.waitFor(fmt.Sprintf("streamed line %04d ", 100+(i+1)*150))
		}
	})
	checkNothingRepeated(t, buf)
}

// A widening and a shrink in height in xterm.js, under the flood, leave
// nothing behind: xterm.js joins again only the rows it wrapped (the
// TUI's frame rows, written with autowrap off, were not; printed lines
// are joined and bubbletea's redraw is relative to the cursor, which
// keeps its row), and a shorter screen deletes the blank rows below the
// cursor, then pushes rows from the top into the scrollback, as tmux does.
func TestXTermWideningAndShorteningRepeatNothing(t *testing.T) {
	buf := streamLongInXTerm(t, []string{"TERM_PROGRAM=vscode"}, nil, func(x *xtermTUI) {
		for i, size := range [][2]int{{120, 30}, {120, 18}, {140, 12}, {160, 30}} {
			x.resize(size[0], size[1])
			x.waitFor(fmt.Sprintf("streamed line %04d ", 100+(i+1)*200))
		}
	})
	checkNothingRepeated(t, buf)
}
