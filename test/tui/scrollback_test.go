package tui_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var numbered = regexp.MustCompile(`(?m)^streamed line (\d{4})\s*$`)

const streamedLines = 2000

// streamLong streams a 2,000-line answer in a terminal, calling during
// (if set) when line 300 has shown, and returns how many times each line
// is in the scrollback and on the screen.
func streamLong(t *testing.T, during func(tm *tmuxTerm)) map[int]int {
	var b strings.Builder
	for i := 1; i <= streamedLines; i++ {
		fmt.Fprintf(&b, "streamed line %04d\n", i)
	}
	text, _ := json.Marshal(b.String())
	s := newSession(t)
	model := s.script("long.json", fmt.Sprintf(`{"chunkSize": 40, "delayMs": 1, "responses": [{"parts": [{"type": "text", "text": %s}]}]}`, text))
	tm := s.open(80, 24, nil, "tui", "-m", model)
	tm.ready()
	tm.typeText("count")
	tm.keys("Enter")
	if during != nil {
		tm.waitFor("streamed line 0300")
		during(tm)
	}
	tm.waitFor(fmt.Sprintf("streamed line %04d", streamedLines))
	seen := map[int]int{}
	for _, m := range numbered.FindAllStringSubmatch(tm.idle(), -1) {
		n, _ := strconv.Atoi(m[1]) // not fmt.Sscan: it reads 0512 as octal
		seen[n]++
	}
	return seen
}

// A long streamed answer lands in the terminal's scrollback with each line
// exactly once: none lost, none repeated by a redraw.
func TestScrollbackHoldsEachLineOnce(t *testing.T) {
	seen := streamLong(t, nil)
	for i := 1; i <= streamedLines; i++ {
		if seen[i] != 1 {
			t.Errorf("line %04d appears %d times in the scrollback", i, seen[i])
		}
	}
}

// A shrink and a grow mid-stream repeat nothing. A print that is on its
// way to the terminal when it resizes can still land where the repaint
// draws (docs/tui.md): at most a couple of lines per resize, measured.
func TestResizeMidStreamRepeatsNothing(t *testing.T) {
	seen := streamLong(t, func(tm *tmuxTerm) {
		tm.tmux("resize-window", "-t", "main", "-x", "60", "-y", "18")
		tm.waitFor("streamed line 1000")
		tm.tmux("resize-window", "-t", "main", "-x", "100", "-y", "30")
	})
	var lost []int
	for i := 1; i <= streamedLines; i++ {
		switch {
		case seen[i] > 1:
			t.Errorf("line %04d appears %d times in the scrollback", i, seen[i])
		case seen[i] == 0:
			lost = append(lost, i)
		}
	}
	if len(lost) > 4 {
		t.Errorf("lost %d lines over two resizes: %v", len(lost), lost)
	} else if len(lost) > 0 {
		t.Logf("lost lines %v (a print racing a resize)", lost)
	}
}
