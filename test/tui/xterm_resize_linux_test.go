package tui_test

import (
	"encoding/json"
	"fmt"
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

// streamLongInXTerm streams a long answer of long lines in xterm.js,
// starting at 100×30, calling during (if set) when line 100 has shown,
// and returns the buffer once the turn ended.
func streamLongInXTerm(t *testing.T, env, xtermEnv []string, during func(x *xtermTUI)) xtermBuffer {
	var b strings.Builder
	for i := 1; i <= longLines; i++ {
		fmt.Fprintf(&b, "streamed line %04d %s\n", i, longFiller)
	}
	text, _ := json.Marshal(b.String())
	s := newSession(t)
	model := s.script("long.json", fmt.Sprintf(`{"chunkSize": 40, "delayMs": 1, "responses": [{"parts": [{"type": "text", "text": %s}]}]}`, text))
	x := startXTermTUI(t, s, 100, 30, env, xtermEnv, "tui", "-m", model)
	x.waitFor("Ask corvid")
	x.typeText("count")
	x.typeText("\r")
	if during != nil {
		x.waitFor("streamed line 0100 ")
		during(x)
	}
	x.waitFor(fmt.Sprintf("streamed line %04d ", longLines))
	return x.idle()
}

// checkNothingRepeated fails unless each numbered line starts exactly one
// line of the buffer (a fragment of the live region left behind, the
// first part of the answer's unfinished line, starts a second one), and
// the input line is in the buffer once.
func checkNothingRepeated(t *testing.T, buf xtermBuffer) {
	t.Helper()
	all := buf.text()
	seen := map[int]int{}
	for _, m := range numberedLong.FindAllStringSubmatch(all, -1) {
		n, _ := strconv.Atoi(m[1])
		seen[n]++
	}
	bad := 0
	for i := 1; i <= longLines; i++ {
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
			if m := numberedLong.FindStringSubmatch(l); m != nil {
				if n, _ := strconv.Atoi(m[1]); seen[n] > 1 {
					t.Logf("row %d: %q", i, l)
				}
			}
		}
		t.Logf("the screen:\n%s", buf.screen())
	}
}

// Narrowing VS Code's terminal (xterm.js) mid-stream, several times to
// several widths, while the answer's unfinished line is a long row of the
// live region, leaves nothing behind: each line is in the buffer once,
// and nothing of the live region is above the final one. xterm.js splits
// every row of the live region wider than the new width (the TUI writes
// its frames with autowrap off, so each row is a line of its own) but
// leaves the cursor's row alone, and the redraw's erase must move up over
// the rows it added (internal/tui/resize.go).
func TestXTermNarrowingMidStreamRepeatsNothing(t *testing.T) {
	buf := streamLongInXTerm(t, []string{"TERM_PROGRAM=vscode"}, nil, func(x *xtermTUI) {
		for i, w := range []int{90, 75, 62, 50, 44} {
			x.resize(w, 30-2*i)
			x.waitFor(fmt.Sprintf("streamed line %04d ", 100+(i+1)*150))
		}
	})
	checkNothingRepeated(t, buf)
}

// A widening and a shrink in height in xterm.js leave nothing behind
// either: xterm.js joins again only the rows it wrapped (the TUI's frame
// rows, written with autowrap off, were not), and a shorter screen
// deletes the blank rows below the cursor, then pushes rows from the top
// into the scrollback, as tmux does.
func TestXTermWideningAndShorteningRepeatNothing(t *testing.T) {
	buf := streamLongInXTerm(t, []string{"TERM_PROGRAM=vscode"}, nil, func(x *xtermTUI) {
		for i, size := range [][2]int{{120, 30}, {120, 18}, {140, 12}, {160, 30}} {
			x.resize(size[0], size[1])
			x.waitFor(fmt.Sprintf("streamed line %04d ", 100+(i+1)*200))
		}
	})
	checkNothingRepeated(t, buf)
}
