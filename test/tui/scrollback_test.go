package tui_test

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var numbered = regexp.MustCompile(`(?m)^streamed line (\d{4})\s*$`)

const streamedLines = 5000

// streamLong streams a 5,000-line answer in a terminal, calling during
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

// A shrink and a grow mid-stream lose and repeat nothing: each line is in
// the scrollback exactly once, and the live region (the input line) is
// on the screen once, not left behind in the scrollback by the resize
// (docs/tui.md, "Resizing"; internal/tui/anchor.go).
func TestResizeMidStreamRepeatsNothing(t *testing.T) {
	var all string
	seen := streamLong(t, func(tm *tmuxTerm) {
		tm.tmux("resize-window", "-t", "main", "-x", "60", "-y", "18")
		tm.waitFor("streamed line 1000")
		tm.tmux("resize-window", "-t", "main", "-x", "100", "-y", "30")
		tm.waitFor("streamed line 2500")
		tm.tmux("resize-window", "-t", "main", "-x", "70", "-y", "20")
		tm.waitFor(fmt.Sprintf("streamed line %04d", streamedLines))
		all = tm.idle()
	})
	for i := 1; i <= streamedLines; i++ {
		if seen[i] != 1 {
			t.Errorf("line %04d appears %d times in the scrollback", i, seen[i])
		}
	}
	if n := strings.Count(all, "Ask corvid"); n != 1 {
		t.Errorf("the input line shows %d times: the live region was left in the scrollback", n)
	}
}

// The TUI started on the screen's top row (a new tmux window running it,
// or `clear && corvid`) leaves no frame of its live region in the
// scrollback when that region changes height before anything was printed
// above it: the `/` list opens and closes, then a turn runs. bubbletea
// redraws a frame of another height by erasing from the live region's
// first row, and tmux (3.3 on: scroll-on-clear) takes an erase from the
// screen's top-left cell for a cleared screen and scrolls the old frame
// into its history. That was TestConnectReconnectsWithoutRepeatingTheTranscript's
// repeated answer: drawn live before its prompt was printed, then scrolled
// into the history with its frame.
func TestLiveRegionOnTheTopRowLeavesNoFrameInTheScrollback(t *testing.T) {
	s := newSession(t)
	model := s.script("hello.json", `{"responses": [{"parts": [{"type": "text", "text": "Hello from the top row."}]}]}`)
	tm := s.open(100, 20, nil, "tui", "-m", model)
	opt := exec.Command("tmux", "-L", tm.socket, "show-options", "-g", "scroll-on-clear")
	opt.Env = tm.env
	if out, err := opt.CombinedOutput(); err != nil || !strings.Contains(string(out), "on") {
		t.Skipf("this tmux does not scroll a cleared screen into its history (scroll-on-clear: %q %v): the test could not fail", out, err)
	}
	tm.ready()
	tm.typeText("/")
	tm.waitFor("/model pick the model")
	tm.keys("BSpace")
	tm.waitUntil("the / list to close", func(string) bool { return !strings.Contains(tm.screen(), "/model") })
	tm.typeText("hi")
	tm.keys("Enter")
	tm.waitFor("Hello from the top row.")
	all := tm.idle()
	for _, once := range []string{"Ask corvid", "Hello from the top row."} {
		if n := strings.Count(all, once); n != 1 {
			t.Errorf("%q is in the pane %d times: a frame of the live region was scrolled into the history", once, n)
		}
	}
	// The status line names the model's script, its path cut to the
	// width when the test's temporary directory is long: at most once.
	if n := strings.Count(all, "hello.json"); n > 1 {
		t.Errorf("the status line is in the pane %d times: a frame of the live region was scrolled into the history", n)
	}
	if strings.Contains(all, "/model") {
		t.Errorf("the / list was left in the history")
	}
	if t.Failed() {
		t.Logf("the pane, history included:\n%s", all)
	}
}

// A live region taller than the screen (the `/` list on a 6-row terminal)
// fills it from its top row, and opening and closing it, a turn run
// meanwhile, leaves none of its frames in the scrollback: bubbletea's
// erase from the top-left cell, which tmux's scroll-on-clear took for a
// cleared screen, is a deletion of the rows (internal/tui/resize.go), and
// no print scrolls the region's first row away (docs/tui.md, "The top
// row").
func TestTallLiveRegionLeavesNoFrameInTheScrollback(t *testing.T) {
	s := newSession(t)
	model := s.script("hello.json", `{"responses": [{"parts": [{"type": "text", "text": "Hello below a tall list."}]}]}`)
	tm := s.open(60, 6, nil, "tui", "-m", model)
	opt := exec.Command("tmux", "-L", tm.socket, "show-options", "-g", "scroll-on-clear")
	opt.Env = tm.env
	if out, err := opt.CombinedOutput(); err != nil || !strings.Contains(string(out), "on") {
		t.Skipf("this tmux does not scroll a cleared screen into its history (scroll-on-clear: %q %v): the test could not fail", out, err)
	}
	tm.ready()
	for range 2 {
		tm.typeText("/")
		tm.waitFor("/quit")
		tm.keys("BSpace")
		tm.waitUntil("the / list to close", func(string) bool { return !strings.Contains(tm.screen(), "/quit") })
	}
	tm.typeText("hi")
	tm.keys("Enter")
	tm.waitFor("Hello below a tall list.")
	all := tm.idle()
	for _, l := range strings.Split(all, "\n") {
		if strings.HasPrefix(l, "  /") {
			t.Errorf("a row of the / list is in the pane: %q", l)
		}
	}
	if n := strings.Count(all, "Ask corvid"); n != 1 {
		t.Errorf("the input line is in the pane %d times", n)
	}
	if t.Failed() {
		t.Logf("the pane, history included:\n%s", all)
	}
}
