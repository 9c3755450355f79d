package tui_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// VS Code's terminal running tmux passes TERM_PROGRAM=vscode on to tmux's
// panes, but tmux is the terminal the TUI talks to, and a narrowing is
// still corrected there: five narrowings in tmux with TERM_PROGRAM=vscode
// set, while an answer of long lines streams at a model's pace, lose and
// repeat nothing. Without a correction in tmux it failed (a narrowing in
// five left the unfinished line's first row behind, 2 runs of 2). That
// tmux's rules are the ones chosen (internal/tui/rewrap.go, rewrapperOf)
// is TestRewrapperOfTheTerminal's to check: here xterm.js's count leaves
// nothing behind either (2 runs of 2 with the order swapped).
func TestTmuxInVSCodeStillCorrectsANarrowing(t *testing.T) {
	const lines = 120
	var b strings.Builder
	for i := 1; i <= lines; i++ {
		fmt.Fprintf(&b, "streamed line %04d %s\n", i, longFiller)
	}
	text, _ := json.Marshal(b.String())
	s := newSession(t)
	model := s.script("long.json", fmt.Sprintf(`{"chunkSize": 12, "delayMs": 10, "responses": [{"parts": [{"type": "text", "text": %s}]}]}`, text))
	tm := s.open(100, 30, []string{"TERM_PROGRAM=vscode"}, "tui", "-m", model)
	tm.ready()
	tm.typeText("count")
	tm.keys("Enter")
	tm.waitFor("streamed line 0020 ")
	for i, w := range []int{90, 75, 62, 50, 44} {
		tm.tmux("resize-window", "-t", "main", "-x", strconv.Itoa(w), "-y", strconv.Itoa(30-2*i))
		tm.waitFor(fmt.Sprintf("streamed line %04d ", 20+(i+1)*18))
	}
	tm.waitFor(fmt.Sprintf("streamed line %04d ", lines))
	all := tm.idle()
	seen := map[int]int{}
	for _, m := range numberedLong.FindAllStringSubmatch(all, -1) {
		n, _ := strconv.Atoi(m[1])
		seen[n]++
	}
	for i := 1; i <= lines; i++ {
		if seen[i] != 1 {
			t.Errorf("line %04d starts %d lines of the pane", i, seen[i])
		}
	}
	if n := strings.Count(all, "Ask corvid"); n != 1 {
		t.Errorf("the input line is in the pane %d times", n)
	}
	if t.Failed() {
		t.Logf("the pane, history included:\n%s", all)
	}
}
